package mcp

import (
	"encoding/json"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
)

// The methods of resources, prompts and completion, in either era, and
// (2026-07-28) subscriptions/listen. What a server offers comes from
// resources.json and prompts.json (catalog.Offers; the table's offer
// column). A session-era server without them answers the three list
// methods with empty lists, as the bash SDKs did, and the others -32601;
// a 2026-07-28 server answers only what server/discover declared,
// everything else -32601. resources/subscribe and unsubscribe exist only
// in the session eras (2026-07-28 removed them for subscriptions/listen).

// listDeclared answers a list method with the declared list (r.cat's).
// cut to the page p names (pages.go) from the list's key.
func (c *session) listDeclared(r *request, list json.RawMessage, key string, p listParams) {
	list, e := c.srv.page(list, key, p)
	if e != nil {
		r.fail(e)
		return
	}
	if r.withoutIcons() {
		list = dropListIcons(list, key)
	}
	if r.modern() {
		list = modernResult(list, r.cat.Config.ServerInfo(), cacheFields(r.cat.DiscoverCache()))
	}
	r.reply(list)
}

func (c *session) listResources(r *request, p listParams) {
	c.listDeclared(r, r.cat.Resources.List, "resources", p)
}
func (c *session) listTemplates(r *request, p listParams) {
	c.listDeclared(r, r.cat.Resources.TemplateList, "resourceTemplates", p)
}
func (c *session) listPrompts(r *request, p listParams) {
	c.listDeclared(r, r.cat.Prompts.List, "prompts", p)
}

// offersSubscriptions says whether a listen stream could carry anything:
// a list that may change or resources to subscribe to. A server with none
// answers subscriptions/listen -32601, which the spec allows.
func offersSubscriptions(cat *catalog.Catalog) bool {
	return cat.ListChanged("tools") || (cat.Offers("prompts") && cat.ListChanged("prompts")) ||
		(cat.Offers("resources") && (cat.ListChanged("resources") || cat.Subscribes()))
}

// declarationError is the declaration file of kind that cannot be used,
// as a FileError (the message names the file; a 2026 client also gets why
// in data), or nil.
func declarationError(cat *catalog.Catalog, kind string, era transport.Era) error {
	var path string
	var err error
	var what string
	switch kind {
	case "resources":
		path, err, what = cat.Resources.Path, cat.Resources.Err, "resources list"
	case "prompts":
		path, err, what = cat.Prompts.Path, cat.Prompts.Err, "prompts list"
	case "completions":
		if e := declarationError(cat, "prompts", era); e != nil {
			return e
		}
		return declarationError(cat, "resources", era)
	}
	if err == nil {
		return nil
	}
	return &catalog.FileError{Message: "Cannot read " + what + ": " + path, Path: path, Reason: err}
}
