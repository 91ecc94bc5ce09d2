package wire

import (
	"encoding/json"
	"strconv"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// The SDK builds every line with `jq -n -c --argjson ... --arg ...`, so a
// line is byte-exact only if each value in it is printed as jq 1.7 prints
// it. The functions here therefore re-print every raw JSON value they are
// given through internal/jq instead of pasting it in:
//
//   - compact, keys in the order first seen, a repeated key printed once
//     at its first position with its last value;
//   - numbers as jq prints a literal (1e2 is 1E+2, 1.0 stays 1.0, big
//     integers keep every digit), and as a second jq pass prints them (see
//     jq.Twice): every value in an SDK line had been through jq before,
//     the id read with `jq -c '.id'`, a result built with `jq -n -c`;
//   - strings with jq's escapes only: \" \\ \b \f \n \r \t, \u00XX for the
//     other control characters and DEL; "<", ">", "&", "/", U+2028 and all
//     other text stay literal;
//   - invalid UTF-8 replaced by U+FFFD the way jq replaces it, so every line
//     is valid UTF-8.
//
// A nil or empty raw value prints as null. So does a value that is not one
// valid JSON document, where jq would have failed: a line must never carry
// invalid JSON, and callers pass values they built themselves.

// ResultLine is {"jsonrpc":"2.0","id":<id>,"result":<result>} and a newline.
func ResultLine(id json.RawMessage, result json.RawMessage) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"result":`...)
	b = appendRaw(b, result)
	return append(b, "}\n"...)
}

// Body is a result the server built itself (compact, valid JSON and valid
// UTF-8 by construction, printed as jq prints it) that is rendered straight
// into the line carrying it: Len is known before, so the line is allocated
// once at its final size and a result of megabytes is never first built
// in a buffer of its own and then copied into the line.
type Body interface {
	Len() int                 // bytes AppendTo adds
	AppendTo(b []byte) []byte // appends the JSON text
}

// Raw is a Body already held as JSON text the server built (a tool's own
// CallToolResult, compacted): it is copied into the line, not re-printed,
// which matters for a result carrying megabytes of text.
type Raw []byte

func (r Raw) Len() int                 { return len(r) }
func (r Raw) AppendTo(b []byte) []byte { return append(b, r...) }

// ResultLineBody is {"jsonrpc":"2.0","id":<id>,"result":<body>} and a
// newline: the id printed as jq prints it, the body as it renders itself.
func ResultLineBody(id json.RawMessage, body Body) []byte {
	const head, tail = `{"jsonrpc":"2.0","id":`, `,"result":`
	idText := appendRaw(nil, id)
	b := make([]byte, 0, len(head)+len(idText)+len(tail)+body.Len()+len("}\n"))
	b = append(append(append(b, head...), idText...), tail...)
	b = body.AppendTo(b)
	return append(b, "}\n"...)
}

// ErrorLine is {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,
// "message":<msg>}} and a newline, with "data":<data> after the message
// when data is not empty (the SDK omits it when empty).
func ErrorLine(id json.RawMessage, code int, msg string, data json.RawMessage) []byte {
	b := make([]byte, 0, 64+len(id)+len(msg)+len(data))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = jq.AppendString(b, msg)
	if len(data) > 0 {
		b = append(b, `,"data":`...)
		b = appendRaw(b, data)
	}
	return append(b, "}}\n"...)
}

// NotificationLine is {"jsonrpc":"2.0","method":<method>,"params":<params>}
// and a newline; "params" is left out when params is nil or empty.
func NotificationLine(method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 40+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = jq.AppendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = appendRaw(b, params)
	}
	return append(b, "}\n"...)
}

// RequestLine is {"jsonrpc":"2.0","id":<id>,"method":<method>,"params":
// <params>} and a newline (params left out when empty): a request the
// server sends the client.
func RequestLine(id json.RawMessage, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 48+len(id)+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"method":`...)
	b = jq.AppendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = appendRaw(b, params)
	}
	return append(b, "}\n"...)
}

// appendRaw appends raw as the SDK's jq printed it, or null (see above).
func appendRaw(b []byte, raw []byte) []byte {
	if printsAsIs(raw) {
		return append(b, raw...) // the common id and result: no parse needed
	}
	v, ok := jq.Parse(raw)
	if !ok {
		return append(b, jsonNull...)
	}
	return jq.Append(b, v, jq.Compact|jq.Twice)
}

// Reprint is raw, one JSON document, as jq prints it after reading it
// passes times (1 or 2) with `jq -c`: compact, string escapes decoded and
// re-escaped as jq escapes, numbers in jq's spelling (jq.Reprint). raw
// itself when it already is that text, or when it is not one valid
// document (where the SDK's jq failed: the gates answered before).
func Reprint(raw json.RawMessage, passes int) json.RawMessage {
	s := jq.Compact
	if passes > 1 {
		s |= jq.Twice
	}
	if out, ok := jq.Reprint(raw, s); ok {
		return out
	}
	return raw
}

// AppendStringBody appends s as the body of a JSON string, without the
// quotes, as jq prints it: invalid UTF-8 repaired as ValidUTF8 does, then
// jq's escapes.
func AppendStringBody(b []byte, s string) []byte { return jq.AppendStringBody(b, s) }

// StringBodyLen is len(AppendStringBody(nil, s)), counted without building
// it.
func StringBodyLen(s string) int { return jq.StringBodyLen(s) }

// FitStringBody is the longest prefix s[:n] of s whose AppendStringBody
// form takes at most max bytes (size), cut between two characters.
func FitStringBody(s string, max int) (n, size int) { return jq.StringBodyFit(s, max) }

// ValidUTF8 replaces invalid UTF-8 in s with U+FFFD as jq does: one per bad
// sequence as jq's decoder delimits it, not Go's one per byte.
func ValidUTF8(s string) string { return jq.ValidUTF8(s) }

// printsAsIs reports whether jq prints raw exactly as written, for the
// values nearly every message carries: a small integer id (up to 15
// digits, exact in a double, so a second jq pass keeps it too), a string
// of printable ASCII without escapes, and the empty object.
func printsAsIs(raw []byte) bool {
	if _, ok := plainString(raw); ok {
		return true
	}
	if string(raw) == "{}" {
		return true
	}
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainString returns the text of a JSON string literal made only of
// printable ASCII other than '"' and '\\' (nothing to unescape, nothing jq
// would escape).
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(raw[1 : len(raw)-1]), true
}
