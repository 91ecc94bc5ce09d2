package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// The request gates reproduce, byte for byte, what the bash SDK we replace
// (shopwareLabs/bash-mcp-sdk, process_request in lib/mcpserver_core.sh)
// answers. That function reads every line through jq 1.7 and bash, so the
// rules below are jq's and bash's, not encoding/json's:
//
//   - bash's `read` drops NUL bytes, and a UTF-8 byte order mark at the
//     start of a line is skipped by jq's parser.
//   - `jq -cs length` must see exactly one document. jq splits the input
//     into tokens at whitespace and at "[]{},:\"": `{"a":1}{"b":2}`, `1 2`
//     and `1"a"` are two documents, while `1true` is one bad token. Any
//     syntax error anywhere in the line wins over the document count.
//   - Fields are read with `jq -r '.field // ""'` inside $(...): null and
//     false read as "", numbers print as jq prints them, objects and arrays
//     print indented, NUL bytes vanish and trailing newlines are cut. So
//     {"jsonrpc":2.0} passes the version gate and a method of "ping\n" is
//     ping, as in the SDK.
//   - Duplicate keys: the last one wins (jq objects), for presence and value.
//   - An id is valid when it is a string, or a number the SDK's integer test
//     accepts: whole-valued by its decimal digits (1.0, 1e2, -0, 12.00 are
//     integers; 1.5 is not), plus the SDK's documented gap that a fraction
//     too small for a double (1.5e-400) counts as an integer.
//
// Deliberate differences from the SDK:
//   - RFC 8259 literals only, as encoding/json and the rest of the daemon
//     read JSON: jq also took nan, NaN, Infinity, 01, +1, .5 and 1. (here
//     "Invalid JSON").
//   - Nesting up to MaxDepth (10000, encoding/json's limit); jq 1.7 stops at
//     256 levels, 128 for objects. Because jq's indented text of a deeply
//     nested non-string method grows with the square of its depth, it is
//     printed compact past a size budget (see indentBudget).
//   - A client-sent response (a result or error key and no method key) is
//     returned with IsResponse set and never answered; the SDK answered it
//     as an unknown method ("Method not found: ").

// MaxDepth is how deeply arrays and objects may nest in one line, the same
// limit encoding/json applies. Deeper input is "Invalid JSON"; the reader
// (internal/jq) keeps its own stack, so no depth can exhaust the goroutine
// stack.
const MaxDepth = jq.MaxDepth

// Message is one parsed JSON-RPC message.
type Message struct {
	// ID is the id value's exact bytes as the client wrote them (e.g.
	// 9007199254740993, "7"); nil when the key is absent. The envelope
	// functions print it the way jq does (1e2 as 1E+2, "\u0041" as "A").
	ID json.RawMessage
	// HasID reports key presence, not value: {"id":null} has an id.
	HasID bool
	// Method is the method as the SDK matched it (see the top of gates.go):
	// "" when absent, null or false; a string with NUL bytes removed and
	// trailing newlines cut; any other value as jq -r prints it.
	Method string
	// Params is nil when absent, the raw bytes otherwise (null included).
	Params json.RawMessage
	// IsResponse marks a client-sent response (result or error present, no
	// method key): never answered; the server matches it to a request it
	// sent (rpc/mcp ask.go) or drops it.
	IsResponse bool
	// Result and Error are a response's members as written (nil: absent).
	Result, Error json.RawMessage
}

// GateError is the error response Parse wants sent back.
type GateError struct {
	ID      json.RawMessage // "null" or the echoed id
	Code    int
	Message string
	// Sentence is what the SDK logged for this refusal; operators grep it.
	Sentence string
}

func (e *GateError) Error() string { return e.Message }

// Line is the response line for e, ready to write.
func (e *GateError) Line() []byte { return ErrorLine(e.ID, e.Code, e.Message, nil) }

// The gate texts and codes, exactly as the SDK has them.
const (
	gateInvalidJSON = "Parse error: Invalid JSON"
	gateNotOneDoc   = "Parse error: Expected exactly one JSON document per line"
	gateNotObject   = "Invalid Request: expected a JSON object"
	gateBadVersion  = "Invalid Request: jsonrpc must be 2.0"
	gateBadIDType   = "Invalid Request: id must be a string or an integer"
	gateCodeParse   = -32700
	gateCodeInvalid = -32600
)

const (
	utf8BOM  = "\xef\xbb\xbf"
	jsonNull = "null"
)

// Parse applies the SDK's gates in order to one line and returns either a
// Message or the error to send back. A notification comes back with HasID
// false and a client response with IsResponse set; the caller answers
// neither. (nil, nil) means the line is dropped silently: it is empty once
// NUL bytes are removed, and the SDK's read loop skipped empty lines.
//
// The gates, in order:
//  1. exactly one JSON document, else -32700 (Invalid JSON, or Expected
//     exactly one JSON document per line for zero or several documents, so
//     a whitespace-only line gets the latter, as in the SDK), id null;
//  2. an object, else -32600 expected a JSON object, id null;
//  3. jsonrpc reads as "2.0", else -32600 jsonrpc must be 2.0 with the id
//     echoed when it is valid (string or integer), null otherwise; a
//     message without an id is answered here too;
//  4. a client response is returned with IsResponse (see the top of gates.go);
//  5. no id key: a notification, returned with HasID false;
//  6. an id that is not a string or an integer: -32600 id must be a string
//     or an integer, id null.
//
// A request whose method is missing or not a string passes: its Method is
// what the SDK printed, which matches no method, so the caller answers
// -32601 "Method not found: "+Method exactly as the SDK did.
//
// The returned Message does not alias line.
func Parse(line []byte) (*Message, *GateError) {
	var data []byte
	if bytes.IndexByte(line, 0) >= 0 {
		data = make([]byte, 0, len(line))
		for _, b := range line {
			if b != 0 {
				data = append(data, b)
			}
		}
	} else {
		data = append([]byte(nil), line...)
	}
	if len(data) == 0 {
		return nil, nil
	}
	data = bytes.TrimPrefix(data, []byte(utf8BOM))

	count, doc, ok := jq.Scan(data)
	if !ok {
		return nil, logged(gateError(nil, gateCodeParse, gateInvalidJSON), "Invalid JSON received")
	}
	if count != 1 {
		return nil, logged(gateError(nil, gateCodeParse, gateNotOneDoc),
			"Received a line holding "+strconv.Itoa(count)+" JSON documents; expected exactly one")
	}
	if data[doc] != '{' {
		return nil, logged(gateError(nil, gateCodeInvalid, gateNotObject), "JSON-RPC request is not a JSON object")
	}
	f := objectFields(data, doc)

	var id json.RawMessage
	if f.id.present {
		id = data[f.id.start:f.id.end:f.id.end] // capped: appending must not clobber data
	}
	idOK := f.id.present && validID(id)
	if !versionOK(data, f.jsonrpc) {
		sentence := "Invalid JSON-RPC version: " + jqRawField(data, f.jsonrpc)
		if idOK {
			return nil, logged(gateError(id, gateCodeInvalid, gateBadVersion), sentence)
		}
		return nil, logged(gateError(nil, gateCodeInvalid, gateBadVersion), sentence)
	}

	msg := &Message{ID: id, HasID: f.id.present, Method: jqRawField(data, f.method)}
	if f.params.present {
		msg.Params = data[f.params.start:f.params.end:f.params.end]
	}
	if !f.method.present && (f.result.present || f.error.present) {
		msg.IsResponse = true
		if f.result.present {
			msg.Result = data[f.result.start:f.result.end:f.result.end]
		}
		if f.error.present {
			msg.Error = data[f.error.start:f.error.end:f.error.end]
		}
		return msg, nil
	}
	if !f.id.present {
		return msg, nil
	}
	if !idOK {
		return nil, logged(gateError(nil, gateCodeInvalid, gateBadIDType), "Request id must be a string or an integer")
	}
	return msg, nil
}

// Blank reports whether line holds nothing but what bash's [[:space:]]
// matches (space, tab, newline, vertical tab, form feed, carriage return)
// and NUL bytes, which bash's read drops: the lines the 2026 bash SDK
// skipped without an answer (`[[ -z "${input//[[:space:]]/}" ]]`), where
// bash-mcp-sdk answered -32700.
func Blank(line []byte) bool {
	for _, b := range line {
		switch b {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
		default:
			return false
		}
	}
	return true
}

func gateError(id json.RawMessage, code int, text string) *GateError {
	if id == nil {
		id = json.RawMessage(jsonNull)
	}
	return &GateError{ID: id, Code: code, Message: text}
}

func logged(e *GateError, sentence string) *GateError {
	e.Sentence = sentence
	return e
}

// --- the SDK's view of a line -----------------------------------------------

// span is a member's value in the line; present is false for an absent key.
type span struct {
	start, end int
	present    bool
}

type gateFields struct {
	jsonrpc, id, method, params, result, error span
}

// objectFields finds the members the gates read in the object at data[i],
// which jq.Scan accepted; for a repeated key the last one wins, as in jq.
func objectFields(data []byte, i int) gateFields {
	var f gateFields
	for key, at := range jq.Members(data, i) {
		v := span{start: at.Start, end: at.End, present: true}
		switch key {
		case "jsonrpc":
			f.jsonrpc = v
		case "id":
			f.id = v
		case "method":
			f.method = v
		case "params":
			f.params = v
		case "result":
			f.result = v
		case "error":
			f.error = v
		}
	}
	return f
}

// versionOK is the SDK's version gate, `[[ "$jsonrpc" != "2.0" ]]` on the
// field as jqRawField reads it. An object or array never reads as "2.0", so
// it is not printed at all.
func versionOK(data []byte, v span) bool {
	if v.present && (data[v.start] == '{' || data[v.start] == '[') {
		return false
	}
	return jqRawField(data, v) == "2.0"
}

// jqRawField is what `$(jq -r '.field // ""')` yields for the value at v:
// jq -r's text, then bash drops NUL bytes and trailing newlines.
func jqRawField(data []byte, v span) string {
	if !v.present {
		return ""
	}
	raw := data[v.start:v.end]
	if s, ok := plainString(raw); ok {
		return s // no NUL, no newline, nothing jq -r would change
	}
	val, _ := jq.Parse(raw) // a member of a line jq.Scan accepted
	switch val.Kind {
	case jq.KindNull, jq.KindFalse: // what `//` replaces
		return ""
	case jq.KindArray, jq.KindObject:
		return jqIndented(val, len(raw))
	}
	s := jq.Raw(val, jq.Indent)
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return strings.TrimRight(s, "\n")
}

// indentBudget bounds the indented text of an object or array method. jq's
// indentation grows with the square of the depth, so a 20 KB line nesting
// 10000 arrays would print as 100 MB; past the budget the value is printed
// compact instead. The SDK's jq (256 levels at most) never got that far.
const indentBudget = 64 << 10

// jqIndented prints val as jq -r does (indented by two spaces), or compact
// when that would pass indentBudget plus twice the size of its text.
func jqIndented(val *jq.Value, size int) string {
	compact := jq.Append(nil, val, jq.Compact)
	if int64(len(compact))+indentCost(val, 0) > int64(indentBudget+2*size) {
		return string(compact)
	}
	return string(jq.Append(make([]byte, 0, 2*len(compact)), val, jq.Indent))
}

// indentCost is how many bytes indenting adds to v's compact text at depth
// level: a newline and the indentation before each member and before the
// closing bracket, and a space after each colon.
func indentCost(v *jq.Value, level int64) int64 {
	if len(v.Elems) == 0 {
		return 0
	}
	cost := 1 + 2*level // before the closing bracket
	for _, e := range v.Elems {
		cost += 1 + 2*(level+1) + indentCost(e, level+1)
		if v.Kind == jq.KindObject {
			cost++
		}
	}
	return cost
}

// validID is the SDK's test for an id it may echo: a string, or a number
// that is whole by its decimal digits, or whose double is zero (the SDK
// reads a value rendered with an exponent through a double, so a fraction
// that underflows, like 1.5e-400, passes there).
func validID(raw []byte) bool {
	switch c := raw[0]; {
	case c == '"':
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		if wholeNumber(string(raw)) {
			return true
		}
		f, _ := strconv.ParseFloat(string(raw), 64)
		return f == 0
	}
	return false
}

// wholeNumber reports whether a valid JSON number has no fractional part.
func wholeNumber(lit string) bool {
	_, coef, exp := jq.Decimal(lit)
	if coef == "0" || exp >= 0 {
		return true
	}
	if -exp >= int64(len(coef)) {
		return false // nonzero and below 1
	}
	return strings.TrimLeft(coef[int64(len(coef))+exp:], "0") == ""
}
