package rpc

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The stateless revision. A request belongs to it when it carries the
// modern version in params._meta (or, on HTTP, in the MCP-Protocol-Version
// header), or when it is server/discover: the era is decided per request
// from the version it carries, never from the method name, so a 2026
// request for initialize is -32601 while a plain initialize negotiates.
const modernVersion = "2026-07-28"

// Keys of the per-request _meta envelope (schema RequestMetaObject).
const (
	metaVersion  = "io.modelcontextprotocol/protocolVersion"
	metaCaps     = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel = "io.modelcontextprotocol/logLevel"
	metaInfo     = "io.modelcontextprotocol/serverInfo"
)

// Error codes of the 2026-07-28 revision.
const (
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// reqMeta is what a request's params._meta says.
type reqMeta struct {
	hasMeta       bool
	version       string
	hasVersion    bool // key present (any value)
	versionIsStr  bool
	caps          json.RawMessage
	logLevel      string
	hasLogLevel   bool
	progressToken json.RawMessage
}

func parseMeta(params json.RawMessage) reqMeta {
	var m reqMeta
	if firstByte(params) != '{' {
		return m
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return m
	}
	m.hasMeta = true
	if raw, ok := p.Meta[metaVersion]; ok {
		m.hasVersion = true
		m.versionIsStr = json.Unmarshal(raw, &m.version) == nil
	}
	if raw, ok := p.Meta[metaCaps]; ok && firstByte(raw) == '{' {
		m.caps = raw
	}
	if raw, ok := p.Meta[metaLogLevel]; ok {
		m.hasLogLevel = json.Unmarshal(raw, &m.logLevel) == nil
	}
	if raw, ok := p.Meta["progressToken"]; ok {
		switch firstByte(raw) {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			m.progressToken = raw
		}
	}
	return m
}

// isModern decides the era of one request.
func isModern(method string, m reqMeta, hint transportHint) bool {
	if method == "server/discover" || m.hasVersion {
		return true
	}
	return hint.versionHeader == modernVersion
}

// handleModern answers one 2026-07-28 request. Check order follows the
// spec's and the conformance suite's: _meta fields (-32602), headers
// against the body (-32020, HTTP only), version (-32022), method (-32601).
func (s *Server) handleModern(id json.RawMessage, msg *Message, m reqMeta, out sink) {
	switch {
	case !m.hasMeta:
		out.respond(ErrorLine(id, codeInvalidParams, "Invalid params: _meta is required in "+modernVersion+" requests", nil))
		return
	case !m.hasVersion || !m.versionIsStr:
		out.respond(ErrorLine(id, codeInvalidParams, "Invalid params: _meta."+metaVersion+" is required and must be a string", nil))
		return
	case m.caps == nil:
		out.respond(ErrorLine(id, codeInvalidParams, "Invalid params: _meta."+metaCaps+" is required and must be an object", nil))
		return
	}
	if check := out.hint().checkHeaders; check != nil {
		if why := check(msg, m.version); why != "" {
			out.respond(ErrorLine(id, codeHeaderMismatch, "Header mismatch: "+why, nil))
			return
		}
	}
	cfg := s.config.get()
	supported := cfg.modernVersions()
	if !contains(supported, m.version) {
		data, _ := json.Marshal(map[string]any{"requested": m.version, "supported": supported})
		out.respond(ErrorLine(id, codeUnsupportedVersion, "Unsupported protocol version: "+m.version, data))
		return
	}
	if m.hasLogLevel && !validLevel(m.logLevel) {
		out.respond(ErrorLine(id, codeInvalidParams, "Invalid params: unknown log level "+m.logLevel, nil))
		return
	}
	if cfg.err != nil && msg.Method == "server/discover" {
		out.respond(ErrorLine(id, codeInternal, "Cannot read server configuration: "+cfg.path, nil))
		return
	}
	info := cfg.serverInfo()
	switch msg.Method {
	case "server/discover":
		out.respond(ResultLine(id, cfg.discoverResult(info)))
	case "tools/list":
		list, err := s.toolsList()
		if err != nil {
			out.respond(ErrorLine(id, codeInternal, err.Error(), nil))
			return
		}
		out.respond(ResultLine(id, modernResult(list, info, cfg.cacheFields())))
	case "tools/call":
		s.startCall(id, append(json.RawMessage(nil), msg.Params...), out)
	// A 2026 server must not answer what server/discover did not declare:
	// the empty lists the SDK era answers exist only for servers whose
	// config.json declares resources or prompts.
	case "resources/list", "resources/templates/list", "prompts/list":
		capName, key := "resources", "resources"
		switch msg.Method {
		case "resources/templates/list":
			key = "resourceTemplates"
		case "prompts/list":
			capName, key = "prompts", "prompts"
		}
		if !cfg.declares(capName) {
			out.respond(ErrorLine(id, codeMethodNotFound, "Method not found: "+msg.Method, nil))
			return
		}
		out.respond(ResultLine(id, modernResult(json.RawMessage(`{"`+key+`":[]}`), info, cfg.cacheFields())))
	default:
		out.respond(ErrorLine(id, codeMethodNotFound, "Method not found: "+msg.Method, nil))
	}
}

// modernResult adds what every 2026 result carries: resultType, then any
// extra fields (ttlMs, cacheScope), then _meta with serverInfo.
func modernResult(obj json.RawMessage, info json.RawMessage, extra string) json.RawMessage {
	// A tool's own result (mcp_result) may already carry resultType or
	// _meta; those are kept rather than duplicated.
	has := map[string]bool{}
	if kvs, err := splitObject(obj); err == nil {
		for _, kv := range kvs {
			has[kv.key] = true
		}
	}
	var b bytes.Buffer
	body := bytes.TrimSpace(obj)
	body = bytes.TrimSuffix(body, []byte("}"))
	b.Write(body)
	sep := len(bytes.TrimSpace(body)) > 1
	add := func(s string) {
		if sep {
			b.WriteByte(',')
		}
		b.WriteString(s)
		sep = true
	}
	if !has["resultType"] {
		add(`"resultType":"complete"`)
	}
	if extra != "" {
		add(strings.TrimPrefix(extra, ","))
	}
	if !has["_meta"] {
		add(`"_meta":{"` + metaInfo + `":` + string(info) + `}`)
	}
	b.WriteString("}")
	return b.Bytes()
}

// declares reports whether config.json's capabilities name capability.
func (c *config) declares(capability string) bool {
	var caps map[string]json.RawMessage
	raw, ok := c.fields["capabilities"]
	if !ok || json.Unmarshal(raw, &caps) != nil {
		return false
	}
	_, ok = caps[capability]
	return ok
}

// modernEnabled is false for a server whose config.json lists
// supportedVersions without 2026-07-28: it is then legacy-only, answers
// server/discover -32601 (so probing clients fall back to initialize) and
// treats every request by the older rules.
func (c *config) modernEnabled() bool {
	raw, ok := c.fields["supportedVersions"]
	if !ok {
		return true
	}
	var vs []string
	if json.Unmarshal(raw, &vs) != nil {
		return true
	}
	return contains(vs, modernVersion)
}

// modernVersions is what server/discover advertises: config.json's
// supportedVersions (the 2026 SDK's shape) filtered to what we speak.
func (c *config) modernVersions() []string {
	var vs []string
	if raw, ok := c.fields["supportedVersions"]; ok {
		_ = json.Unmarshal(raw, &vs)
	}
	var out []string
	for _, v := range vs {
		if v == modernVersion {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = []string{modernVersion}
	}
	return out
}

func (c *config) serverInfo() json.RawMessage {
	if raw, ok := c.fields["serverInfo"]; ok && firstByte(raw) == '{' {
		return raw
	}
	return json.RawMessage(`{"name":"mcp-server","version":"1.0.0"}`)
}

// cacheFields are ttlMs and cacheScope for cacheable results: config.json's
// values (the 2026 SDK's shape) or one minute, public — the tools a server
// offers do not depend on who asks.
func (c *config) cacheFields() string {
	ttl := "60000"
	if raw, ok := c.fields["ttlMs"]; ok {
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			if i, err := n.Int64(); err == nil && i >= 0 {
				ttl = n.String()
			}
		}
	}
	scope := `"public"`
	if raw, ok := c.fields["cacheScope"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && (s == "public" || s == "private") {
			scope = string(raw)
		}
	}
	return `,"ttlMs":` + ttl + `,"cacheScope":` + scope
}

func (c *config) discoverResult(info json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"supportedVersions":`)
	b.Write(mustJSON(c.modernVersions()))
	b.WriteString(`,"capabilities":`)
	if raw, ok := c.fields["capabilities"]; ok && firstByte(raw) == '{' {
		b.Write(withoutListChanged(raw))
	} else {
		b.WriteString(`{"tools":{}}`)
	}
	if raw, ok := c.fields["instructions"]; ok && firstByte(raw) == '"' {
		b.WriteString(`,"instructions":`)
		b.Write(raw)
	}
	b.WriteByte('}')
	return modernResult(b.Bytes(), info, c.cacheFields())
}

// Log levels of notifications/message (syslog order).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func validLevel(l string) bool { return levelRank(l) >= 0 }

func levelRank(l string) int {
	for i, v := range logLevels {
		if v == strings.ToLower(l) {
			return i
		}
	}
	return -1
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// withoutListChanged drops tools.listChanged: true from capabilities advertised
// to 2026-07-28 clients: that revision delivers list_changed only on a
// subscriptions/listen stream, which mcp-bashd does not offer, so claiming
// it would leave a client waiting for notifications that never come.
func withoutListChanged(caps json.RawMessage) json.RawMessage {
	kvs, err := splitObject(caps)
	if err != nil {
		return caps
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(kv.key))
		b.WriteByte(':')
		val := kv.val
		if kv.key == "tools" {
			if inner, err := splitObject(kv.val); err == nil {
				var t bytes.Buffer
				t.WriteByte('{')
				n := 0
				for _, f := range inner {
					if f.key == "listChanged" && string(f.val) == "true" {
						continue
					}
					if n > 0 {
						t.WriteByte(',')
					}
					n++
					t.Write(mustJSON(f.key))
					t.WriteByte(':')
					t.Write(f.val)
				}
				t.WriteByte('}')
				val = t.Bytes()
			}
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
