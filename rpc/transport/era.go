package transport

import (
	"encoding/json"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Era is the family of protocol revisions a request belongs to.
type Era uint8

const (
	// Legacy: 2024-11-05 … 2025-11-25, negotiated by initialize, with
	// per-connection state.
	Legacy Era = iota
	// Modern: the stateless 2026-07-28 revision; every request carries
	// its version and client capabilities in params._meta.
	Modern
)

func (e Era) String() string {
	if e == Modern {
		return ModernVersion
	}
	return "legacy"
}

// ModernVersion is the revision of the Modern era.
const ModernVersion = "2026-07-28"

// Keys of the per-request _meta envelope (schema RequestMetaObject).
const (
	MetaVersion  = "io.modelcontextprotocol/protocolVersion"
	MetaCaps     = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	MetaInfo     = "io.modelcontextprotocol/serverInfo"
)

// Meta is what a request's params._meta says.
type Meta struct {
	Present       bool // params._meta is an object
	Version       string
	HasVersion    bool // the key is present (any value)
	VersionIsStr  bool
	Caps          json.RawMessage // an object, or nil
	LogLevel      string
	HasLogLevel   bool
	ProgressToken json.RawMessage // a string or number, or nil
}

// ParseMeta reads params._meta.
func ParseMeta(params json.RawMessage) Meta {
	var m Meta
	if wire.FirstByte(params) != '{' {
		return m
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return m
	}
	m.Present = true
	if raw, ok := p.Meta[MetaVersion]; ok {
		m.HasVersion = true
		m.VersionIsStr = json.Unmarshal(raw, &m.Version) == nil
	}
	if raw, ok := p.Meta[MetaCaps]; ok && wire.FirstByte(raw) == '{' {
		m.Caps = raw
	}
	if raw, ok := p.Meta[MetaLogLevel]; ok {
		m.HasLogLevel = json.Unmarshal(raw, &m.LogLevel) == nil
	}
	if raw, ok := p.Meta["progressToken"]; ok {
		switch wire.FirstByte(raw) {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			m.ProgressToken = raw
		}
	}
	return m
}

// Decide is the one place a request's era is decided: by the version it
// carries (in _meta or, on HTTP, the MCP-Protocol-Version header), or
// server/discover — never by the method name alone, so a 2026 request for
// initialize is -32601 while a plain initialize negotiates. A server whose
// configuration leaves 2026-07-28 out (modernEnabled false) is
// legacy-only; modernEnabled is asked only for a request that would be
// modern, so a legacy request (every ping of an SDK client) costs no look
// at the configuration.
func Decide(method string, m Meta, versionHeader string, modernEnabled func() bool) Era {
	if (method == "server/discover" || m.HasVersion || versionHeader == ModernVersion) && modernEnabled() {
		return Modern
	}
	return Legacy
}

// Decode reads one message's _meta and decides its era.
func Decode(msg *wire.Message, versionHeader string, modernEnabled func() bool) *Request {
	m := ParseMeta(msg.Params)
	return &Request{Msg: msg, Meta: m, Era: Decide(msg.Method, m, versionHeader, modernEnabled)}
}
