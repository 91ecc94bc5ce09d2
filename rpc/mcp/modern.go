package mcp

import (
	"encoding/json"
	"slices"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// checkModern applies the checks every 2026-07-28 request gets before
// its method is looked up, in the spec's and the conformance suite's
// order: _meta fields (-32602), headers against the body (-32020, HTTP
// only), version (-32022), clientCapabilities (-32602), log level
// (-32602). It decodes _meta's clientCapabilities once for what follows
// (r.caps).
func (c *session) checkModern(r *request) *wire.Error {
	s, m := c.srv, r.Meta
	if e := checkModernMeta(m); e != nil {
		return e
	}
	if r.Headers != nil {
		if why := r.Headers.Check(r.Msg, m.Version); why != "" {
			return wire.HeaderMismatch(why)
		}
	}
	cfg := s.src.Config()
	// The version before clientCapabilities, as the 2026 SDK checks them
	// (the spec orders neither); that SDK answers server/discover at any
	// version, and never requires clientCapabilities: for a server in its
	// dialect a missing one is {} (the spec requires it: -32602 for the
	// others).
	sdk2026 := cfg.DeclaresSupportedVersions()
	if supported := cfg.ModernVersions(); !slices.Contains(supported, m.Version) && !(sdk2026 && r.Msg.Method == "server/discover") {
		return wire.UnsupportedVersion(m.Version, supported)
	}
	if m.Caps == nil {
		if !sdk2026 {
			return wire.InvalidParams("_meta." + transport.MetaCaps + " is required and must be an object")
		}
		m.Caps = json.RawMessage(`{}`)
	}
	if m.HasLogLevel && transport.LevelRank(m.LogLevel) < 0 {
		return wire.InvalidParams("unknown log level " + m.LogLevel)
	}
	_ = json.Unmarshal(m.Caps, &r.caps) // checkModernMeta: an object
	return nil
}

// discover answers server/discover: listChanged as declared
// (subscriptions/listen delivers it).
func (c *session) discover(r *request, _ struct{}) {
	s := c.srv
	cat := s.src.Declarations() // config.json, resources.json, prompts.json stat'd
	if d := s.discovered.Load(); d != nil && d.cat == cat {
		r.Out.Respond(transport.Response{ID: r.Msg.ID, Body: d.printed})
		return
	}
	cfg := cat.Config
	caps := cat.Capabilities(cfg.Capabilities())
	if offersTasks(cat) {
		caps = addExtension(caps, TasksExtension)
	}
	d := &discovered{cat: cat, printed: wire.Raw(wire.Reprint(modernResult(discoverResult(cfg, caps, cat.DiscoverCache()), cfg.ServerInfo(), nil), 2))}
	s.discovered.Store(d)
	r.Out.Respond(transport.Response{ID: r.Msg.ID, Body: d.printed})
}

// discovered is the last server/discover result and the catalog it was
// made of. The result is a function of that catalog alone (config.json,
// the declaration files, the tools' task support), and a catalog is never
// changed once published — a change publishes another — so while the
// catalog stays the same, so does the result: a client polling discover
// costs three stats, not a rebuild. It is kept as the line prints it (as
// jq printed it twice, ResultLine's form), so it is copied, not re-printed.
type discovered struct {
	cat     *catalog.Catalog
	printed wire.Raw
}

// checkModernMeta checks the _meta fields every 2026 request must carry
// (clientCapabilities after the version: checkModern).
func checkModernMeta(m transport.Meta) *wire.Error {
	switch {
	case !m.Present:
		return wire.InvalidParams("_meta is required in " + transport.ModernVersion + " requests")
	case !m.HasVersion || !m.VersionIsStr:
		return wire.InvalidParams("_meta." + transport.MetaVersion + " is required and must be a string")
	}
	return nil
}

// cacheFields are what a cacheable 2026 result carries besides its own
// (none when h is empty).
func cacheFields(h catalog.CacheHints) []field {
	if h.TTL == nil && h.Scope == nil {
		return nil
	}
	return []field{{"ttlMs", h.TTL}, {"cacheScope", h.Scope}}
}
