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
// against the body (-32020, HTTP only), version (-32022),
// clientCapabilities (-32602), method (-32601).
func (s *Server) handleModern(c *conn, req *transport.Request) {
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
	// The version before clientCapabilities, as the 2026 SDK checks them
	// (the spec orders neither); that SDK answers server/discover at any
	// version, and never requires clientCapabilities: for a server in its
	// dialect a missing one is {} (the spec requires it: -32602 for the
	// others).
	sdk2026 := cfg.DeclaresSupportedVersions()
	supported := cfg.ModernVersions()
	if !slices.Contains(supported, m.Version) && !(sdk2026 && req.Msg.Method == "server/discover") {
		data := wire.Marshal(map[string]any{"requested": m.Version, "supported": supported})
		fail(&wire.Error{Code: wire.CodeUnsupportedVersion, Message: "Unsupported protocol version: " + m.Version, Data: data})
		return
	}
	if m.Caps == nil {
		if !sdk2026 {
			fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: _meta."+transport.MetaCaps+" is required and must be an object"))
			return
		}
		req.Meta.Caps = json.RawMessage(`{}`)
		m = req.Meta
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
		s.toolsList(c, req, func(cat *catalog.Catalog, list json.RawMessage) json.RawMessage {
			return modernResult(list, cat.Config.ServerInfo(), cacheFields(cat.ListCache()))
		})
	case "tools/call":
		s.startCall(c, req)
	default:
		// resources, prompts, completion, subscriptions/listen
		// (declared.go): a 2026 server answers only what server/discover
		// declared.
		if !s.serveDeclared(c, req) && !s.serveTasks(c, req) {
			fail(wire.Errorf(wire.CodeMethodNotFound, "Method not found: "+req.Msg.Method))
		}
	}
}

// checkModernMeta checks the _meta fields every 2026 request must carry
// (clientCapabilities after the version: handleModern).
func checkModernMeta(m transport.Meta) *wire.Error {
	switch {
	case !m.Present:
		return wire.Errorf(wire.CodeInvalidParams, "Invalid params: _meta is required in "+transport.ModernVersion+" requests")
	case !m.HasVersion || !m.VersionIsStr:
		return wire.Errorf(wire.CodeInvalidParams, "Invalid params: _meta."+transport.MetaVersion+" is required and must be a string")
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
