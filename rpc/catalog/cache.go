package catalog

import (
	"encoding/json"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// CacheHints are the ttlMs and cacheScope a cacheable 2026-07-28 result
// carries (tools/list, server/discover). A nil member is unset.
type CacheHints struct {
	TTL   json.RawMessage // a non-negative integer
	Scope json.RawMessage // "public" or "private"
}

// The defaults when nothing sets them, the 2026 SDK's: one minute, public
// (the tools a server offers do not depend on who asks).
var (
	defaultTTL   = json.RawMessage("60000")
	defaultScope = json.RawMessage(`"public"`)
)

// ListCache is what tools/list answers. The 2026 SDK's precedence, for a
// server in its shape (config.json declares supportedVersions): the tools
// file's own ttlMs and cacheScope, then MCP_DEFAULT_TTL_MS and
// MCP_DEFAULT_CACHE_SCOPE, then one minute, public; that SDK read
// config.json's values for server/discover only. Any other server's
// config.json values come after the tools file's, as mcp-bashd always read
// them.
func (c *Catalog) ListCache() CacheHints {
	h := c.Tools.Cache
	if !c.Config.DeclaresSupportedVersions() {
		h = h.or(c.Config.cache())
	}
	return h.or(c.cacheDefaults).or(CacheHints{defaultTTL, defaultScope})
}

// DiscoverCache is what server/discover answers: config.json's ttlMs and
// cacheScope, then the defaults, as the 2026 SDK's discover read them.
func (c *Catalog) DiscoverCache() CacheHints {
	return c.Config.cache().or(c.cacheDefaults).or(CacheHints{defaultTTL, defaultScope})
}

// or fills what h leaves unset from d.
func (h CacheHints) or(d CacheHints) CacheHints {
	if h.TTL == nil {
		h.TTL = d.TTL
	}
	if h.Scope == nil {
		h.Scope = d.Scope
	}
	return h
}

// cache is config.json's ttlMs and cacheScope (the 2026 SDK's shape).
func (c *Config) cache() CacheHints {
	return CacheHints{validTTL(c.fields["ttlMs"]), validScope(c.fields["cacheScope"])}
}

// validTTL is raw when it is a non-negative integer (the schema's ttlMs),
// as its digits; nil otherwise.
func validTTL(raw json.RawMessage) json.RawMessage {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := n.Int64(); err == nil && i >= 0 {
			return json.RawMessage(n.String())
		}
	}
	return nil
}

// validScope is raw when it is "public" or "private"; nil otherwise.
func validScope(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil && (s == "public" || s == "private") {
		return wire.Quote(s)
	}
	return nil
}
