package mcp

import (
	"encoding/json"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// serveDeclared answers the methods of resources, prompts, completion and
// (2026-07-28) subscriptions, in either era; false when the method is none
// of them.
//
// What a server offers comes from resources.json and prompts.json
// (catalog.Offers). A session-era server without them answers the three
// list methods with empty lists, as the bash SDKs did, and the others
// -32601; a 2026-07-28 server answers only what server/discover declared,
// everything else -32601. resources/subscribe and unsubscribe exist only
// in the session eras (2026-07-28 removed them for subscriptions/listen).
func (c *session) serveDeclared(req *transport.Request) bool {
	s := c.srv
	method := req.Msg.Method
	kind := ""
	switch method {
	case "resources/list", "resources/templates/list", "resources/read":
		kind = "resources"
	case "resources/subscribe", "resources/unsubscribe":
		kind = "resources"
		if req.Era == transport.Modern {
			return false
		}
	case "prompts/list", "prompts/get":
		kind = "prompts"
	case "completion/complete":
		kind = "completions"
	case "subscriptions/listen":
		if req.Era != transport.Modern {
			return false
		}
	default:
		return false
	}
	id := req.Msg.ID
	fail := func(e *wire.Error) { req.Out.Respond(transport.Response{ID: id, Err: e}) }
	cat := s.src.Declarations()
	modern := req.Era == transport.Modern
	isList := method == "resources/list" || method == "resources/templates/list" || method == "prompts/list"
	switch {
	case method == "subscriptions/listen":
		if !offersSubscriptions(cat) {
			fail(wire.Errorf(wire.CodeMethodNotFound, "Method not found: "+method))
			return true
		}
		c.listen(req, cat)
		return true
	case !cat.Offers(kind) && (modern || !isList):
		fail(wire.Errorf(wire.CodeMethodNotFound, "Method not found: "+method))
		return true
	}
	if e := declarationError(cat, kind, req.Era); e != nil {
		fail(s.fileError(e, req.Era))
		return true
	}
	list := func(result json.RawMessage) {
		if modern {
			result = modernResult(result, cat.Config.ServerInfo(), cacheFields(cat.DiscoverCache()))
		}
		req.Out.Respond(transport.Response{ID: id, Result: result})
	}
	switch method {
	case "resources/list":
		list(cat.Resources.List)
	case "resources/templates/list":
		list(cat.Resources.TemplateList)
	case "prompts/list":
		list(cat.Prompts.List)
	case "resources/read":
		c.readResource(req, cat)
	case "resources/subscribe", "resources/unsubscribe":
		c.subscribe(req, method == "resources/subscribe")
	case "prompts/get":
		c.getPrompt(req, cat)
	case "completion/complete":
		c.complete(req, cat)
	}
	return true
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
