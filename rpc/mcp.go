package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"regexp"
	"unicode/utf8"
)

// Protocol revisions answered by initialize, oldest first.
var supportedVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const (
	newestVersion = "2025-11-25"
	sdkDefault    = "2024-11-05" // the bash SDK's answer when nothing is configured
)

// config is one parse of config.json.
type config struct {
	path    string
	missing bool  // no file: defaults apply
	err     error // the file exists but does not hold one JSON object
	fields  map[string]json.RawMessage
}

func loadConfig(path string) *config {
	c := &config{path: path, fields: map[string]json.RawMessage{}}
	kvs, err := readObjectFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.missing = true
		return c
	}
	if err != nil {
		c.err = err
		return c
	}
	for _, kv := range kvs {
		c.fields[kv.key] = kv.val
	}
	return c
}

// negotiate picks the protocol version to answer: the client's when we
// speak it; otherwise the configured preference when we speak that; else
// the newest. A client that sends none gets the configured version or the
// SDK's default, byte for byte as the bash SDK answered.
func negotiate(requested string, hasRequested bool, configured string) string {
	if !hasRequested {
		if configured != "" {
			return configured
		}
		return sdkDefault
	}
	for _, v := range supportedVersions {
		if v == requested {
			return v
		}
	}
	for _, v := range supportedVersions {
		if v == configured {
			return v
		}
	}
	return newestVersion
}

// initializeResult builds the initialize result in the SDK's key order:
// protocolVersion, serverInfo, capabilities, then instructions when set.
func (c *config) initializeResult(params json.RawMessage) (json.RawMessage, string) {
	var p struct {
		ProtocolVersion *string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	var configured string
	if raw, ok := c.fields["protocolVersion"]; ok {
		_ = json.Unmarshal(raw, &configured)
	}
	requested := ""
	if p.ProtocolVersion != nil {
		requested = *p.ProtocolVersion
	}
	version := negotiate(requested, p.ProtocolVersion != nil, configured)
	var b bytes.Buffer
	b.WriteString(`{"protocolVersion":`)
	b.Write(mustJSON(version))
	b.WriteString(`,"serverInfo":`)
	if raw, ok := c.fields["serverInfo"]; ok && firstByte(raw) != 'n' {
		b.Write(raw)
	} else {
		b.WriteString(`{"name":"mcp-server","version":"1.0.0"}`)
	}
	b.WriteString(`,"capabilities":`)
	if raw, ok := c.fields["capabilities"]; ok && firstByte(raw) != 'n' {
		b.Write(raw)
	} else {
		b.WriteString(`{"tools":{}}`)
	}
	if raw, ok := c.fields["instructions"]; ok && firstByte(raw) == '"' {
		b.WriteString(`,"instructions":`)
		b.Write(raw)
	}
	b.WriteByte('}')
	return b.Bytes(), version
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// callParams is a tools/call's params after the SDK's gates.
type callParams struct {
	name string
	args json.RawMessage
	meta json.RawMessage
}

// parseCallParams applies the SDK's params rules: absent, null and false
// params count as {}; any other non-object is -32602.
func parseCallParams(params json.RawMessage) (callParams, *rpcError) {
	var cp callParams
	switch firstByte(params) {
	case 0, 'n', 'f':
		params = json.RawMessage(`{}`)
	case '{':
	default:
		return cp, &rpcError{code: codeInvalidParams, msg: "Invalid params: expected an object"}
	}
	kvs, err := splitObject(params)
	if err != nil {
		return cp, &rpcError{code: codeInvalidParams, msg: "Invalid params: expected an object"}
	}
	cp.args = json.RawMessage(`{}`) // "arguments" absent means {}
	for _, kv := range kvs {
		switch kv.key {
		case "name":
			var s string
			if json.Unmarshal(kv.val, &s) == nil {
				cp.name = s
			} else if firstByte(kv.val) != 'n' && firstByte(kv.val) != 'f' {
				cp.name = string(kv.val) // rendered as jq -r would: the JSON text
			}
		case "arguments":
			cp.args = kv.val // present null/false/... is validated, never coerced
		case "_meta":
			cp.meta = kv.val
		}
	}
	return cp, nil
}

// textResult is a CallToolResult with one text item, in the SDK's key order.
// The text may be given in parts (prefix, output, marker) so a large output
// is escaped once into a buffer of the right size, never concatenated first.
func textResult(text string, isError bool) json.RawMessage {
	return textResultParts([]string{text}, isError)
}

func textResultParts(parts []string, isError bool) json.RawMessage {
	n := 64
	for _, p := range parts {
		n += len(p) + len(p)/16
	}
	b := make([]byte, 0, n)
	b = append(b, `{"content":[{"type":"text","text":"`...)
	for _, p := range parts {
		b = appendJQStringBody(b, jqValidUTF8(p))
	}
	b = append(b, `"}],"isError":`...)
	if isError {
		b = append(b, "true}"...)
	} else {
		b = append(b, "false}"...)
	}
	return b
}

// mustJSON encodes a string without HTML escaping (jq prints <, > and &
// literally) and without the trailing newline of json.Encoder.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// validUTF8 replaces invalid byte sequences with U+FFFD the way jq (and so
// the bash SDK) does — one per bad byte — and reports whether it had to, so
// the caller can log it: a JSON string cannot carry them.
func validUTF8(s string) (string, bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	return jqValidUTF8(s), true
}
