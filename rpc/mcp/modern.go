package mcp

import (
	"encoding/json"
	"slices"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// handleModern answers one 2026-07-28 request. Check order follows the
// spec's and the conformance suite's: _meta fields (-32602), headers
// against the body (-32020, HTTP only), version (-32022), method (-32601).
func (c *session) handleModern(req *transport.Request) {
	s := c.srv
	id, m := req.Msg.ID, req.Meta
	fail := func(e *wire.Error) { req.Out.Respond(transport.Response{ID: id, Err: e}) }
	if e := checkModernMeta(m); e != nil {
		fail(e)
		return
	}
	if req.Headers != nil {
		if why := req.Headers.Check(req.Msg, m.Version); why != "" {
			fail(wire.Errorf(wire.CodeHeaderMismatch, "Header mismatch: "+why))
			return
		}
	}
	cfg := s.src.Config()
	if supported := cfg.ModernVersions(); !slices.Contains(supported, m.Version) {
		data := wire.Marshal(map[string]any{"requested": m.Version, "supported": supported})
		fail(&wire.Error{Code: wire.CodeUnsupportedVersion, Message: "Unsupported protocol version: " + m.Version, Data: data})
		return
	}
	if m.HasLogLevel && transport.LevelRank(m.LogLevel) < 0 {
		fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: unknown log level "+m.LogLevel))
		return
	}
	if cfg.Err != nil && req.Msg.Method == "server/discover" {
		fail(s.fileError(cfg.ConfigError(), req.Era))
		return
	}
	respond := func(result json.RawMessage, cache catalog.CacheHints) {
		req.Out.Respond(transport.Response{ID: id, Result: modernResult(result, cfg.ServerInfo(), cacheFields(cache))})
	}
	switch req.Msg.Method {
	case "server/discover":
		// listChanged as declared: subscriptions/listen delivers it.
		cat := s.src.Declarations()
		caps := cat.Capabilities(cfg.Capabilities())
		if offersTasks(cat) {
			caps = addExtension(caps, TasksExtension)
		}
		respond(discoverResult(cfg, caps, s.src.Current().DiscoverCache()), catalog.CacheHints{})
	case "tools/list":
		c.toolsList(req, func(cat *catalog.Catalog, list json.RawMessage) json.RawMessage {
			return modernResult(list, cat.Config.ServerInfo(), cacheFields(cat.ListCache()))
		})
	case "tools/call":
		c.startCall(req)
	default:
		// resources, prompts, completion, subscriptions/listen
		// (declared.go): a 2026 server answers only what server/discover
		// declared.
		if !c.serveDeclared(req) && !c.serveTasks(req) {
			fail(wire.Errorf(wire.CodeMethodNotFound, "Method not found: "+req.Msg.Method))
		}
	}
}

// checkModernMeta checks the _meta fields every 2026 request must carry.
func checkModernMeta(m transport.Meta) *wire.Error {
	switch {
	case !m.Present:
		return wire.Errorf(wire.CodeInvalidParams, "Invalid params: _meta is required in "+transport.ModernVersion+" requests")
	case !m.HasVersion || !m.VersionIsStr:
		return wire.Errorf(wire.CodeInvalidParams, "Invalid params: _meta."+transport.MetaVersion+" is required and must be a string")
	case m.Caps == nil:
		return wire.Errorf(wire.CodeInvalidParams, "Invalid params: _meta."+transport.MetaCaps+" is required and must be an object")
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
