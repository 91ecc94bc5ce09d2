package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
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
// limit encoding/json applies. Deeper input is "Invalid JSON"; the scanner
// keeps its own stack, so no depth can exhaust the goroutine stack.
const MaxDepth = 10000

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
	// method key): never answered, dropped by the caller.
	IsResponse bool
}

// GateError is the error response Parse wants sent back.
type GateError struct {
	ID      json.RawMessage // "null" or the echoed id
	Code    int
	Message string
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
	// maxExponent is where an absurd exponent saturates instead of
	// overflowing; far beyond anything a double or decNumber can hold.
	maxExponent = 1 << 40
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

	count, doc, ok := scanDocuments(data)
	if !ok {
		return nil, gateError(nil, gateCodeParse, gateInvalidJSON)
	}
	if count != 1 {
		return nil, gateError(nil, gateCodeParse, gateNotOneDoc)
	}
	if data[doc.start] != '{' {
		return nil, gateError(nil, gateCodeInvalid, gateNotObject)
	}
	f := objectFields(data, doc.start)

	var id json.RawMessage
	if f.id.present {
		id = data[f.id.start:f.id.end:f.id.end] // capped: appending must not clobber data
	}
	idOK := f.id.present && validID(id)
	if !versionOK(data, f.jsonrpc) {
		if idOK {
			return nil, gateError(id, gateCodeInvalid, gateBadVersion)
		}
		return nil, gateError(nil, gateCodeInvalid, gateBadVersion)
	}

	msg := &Message{ID: id, HasID: f.id.present, Method: jqRawField(data, f.method)}
	if f.params.present {
		msg.Params = data[f.params.start:f.params.end:f.params.end]
	}
	if !f.method.present && (f.result.present || f.error.present) {
		msg.IsResponse = true
		return msg, nil
	}
	if !f.id.present {
		return msg, nil
	}
	if !idOK {
		return nil, gateError(nil, gateCodeInvalid, gateBadIDType)
	}
	return msg, nil
}

func gateError(id json.RawMessage, code int, text string) *GateError {
	if id == nil {
		id = json.RawMessage(jsonNull)
	}
	return &GateError{ID: id, Code: code, Message: text}
}

// --- scanning ---------------------------------------------------------------

type span struct {
	start, end int
	present    bool
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isDelim reports the bytes that end one of jq's literal tokens.
func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '[', ']', '{', '}', ',', ':':
		return true
	}
	return false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// literalEnd returns the end of the literal token starting at i.
func literalEnd(data []byte, i int) int {
	for i < len(data) && !isDelim(data[i]) {
		i++
	}
	return i
}

// scanDocuments validates data as a whitespace-separated sequence of JSON
// documents, as `jq -s` reads it, and returns how many there are and where
// the first one is. ok is false on any syntax error.
func scanDocuments(data []byte) (count int, first span, ok bool) {
	i := skipSpace(data, 0)
	for i < len(data) {
		end, good := scanValue(data, i)
		if !good {
			return 0, span{}, false
		}
		if count == 0 {
			first = span{start: i, end: end, present: true}
		}
		count++
		i = skipSpace(data, end)
	}
	return count, first, true
}

// scanValue validates one value starting at data[i] (not whitespace) and
// returns its end. It keeps its own stack so depth costs heap, not stack.
func scanValue(data []byte, i int) (int, bool) {
	var stack []byte // '[' or '{' per open container
	ok := true
	for {
		// A value starts at i.
		if i >= len(data) {
			return i, false
		}
		switch c := data[i]; c {
		case '[', '{':
			if len(stack) >= MaxDepth {
				return i, false
			}
			stack = append(stack, c)
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // "[]" or "{}"
				i++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if i, ok = scanKey(data, i); !ok {
					return i, false
				}
			}
			continue
		case '"':
			if i, ok = scanString(data, i); !ok {
				return i, false
			}
		default:
			end := literalEnd(data, i)
			if !validLiteral(data[i:end]) {
				return i, false
			}
			i = end
		}
		// A value ended at i: close containers until one wants another value.
		for {
			if len(stack) == 0 {
				return i, true
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			top := stack[len(stack)-1]
			if data[i] == ',' {
				i = skipSpace(data, i+1)
				if top == '{' {
					if i, ok = scanKey(data, i); !ok {
						return i, false
					}
				}
				break
			}
			if data[i] != top+2 { // ']' or '}'
				return i, false
			}
			i++
			stack = stack[:len(stack)-1]
		}
	}
}

// scanKey validates `"key" :` at i and returns where the value starts.
func scanKey(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := scanString(data, i)
	if !ok {
		return i, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return skipSpace(data, i+1), true
}

// scanString validates the string starting at the quote at i. Like jq it
// rejects raw control characters, unknown escapes and a high surrogate
// escape without a low one after it; it accepts a lone low surrogate and
// any other byte (invalid UTF-8 is replaced when the string is decoded).
func scanString(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c != '\\':
			j++
			continue
		}
		if j+1 >= len(data) {
			return j, false
		}
		switch data[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			cp, ok := hex4(data, j+2)
			if !ok {
				return j, false
			}
			j += 6
			if cp >= 0xD800 && cp <= 0xDBFF {
				if j+1 >= len(data) || data[j] != '\\' || data[j+1] != 'u' {
					return j, false
				}
				lo, ok := hex4(data, j+2)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return j, false
				}
				j += 6
			}
		default:
			return j, false
		}
	}
	return len(data), false
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// validLiteral accepts true, false, null and RFC 8259 numbers.
func validLiteral(tok []byte) bool {
	switch string(tok) {
	case "true", "false", "null":
		return true
	}
	return validNumber(tok)
}

func validNumber(tok []byte) bool {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	switch {
	case i < len(tok) && tok[i] == '0':
		i++
	case i < len(tok) && tok[i] >= '1' && tok[i] <= '9':
		i = digitsEnd(tok, i)
	default:
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		j := digitsEnd(tok, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		j := digitsEnd(tok, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(tok)
}

func digitsEnd(tok []byte, i int) int {
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		i++
	}
	return i
}

// --- reading validated input ------------------------------------------------

// The functions below assume input that scanValue accepted.

type gateFields struct {
	jsonrpc, id, method, params, result, error span
}

// objectFields finds the members the gates read in the object at data[i];
// for a repeated key the last one wins, as in jq.
func objectFields(data []byte, i int) gateFields {
	var f gateFields
	i = skipSpace(data, i+1)
	for data[i] != '}' {
		keyStart := i
		i = skipString(data, i)
		key := data[keyStart:i]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(decodeString(key))
		} else {
			key = key[1 : len(key)-1]
		}
		i = skipSpace(data, i)
		i = skipSpace(data, i+1) // past ':'
		v := span{start: i, end: skipValue(data, i), present: true}
		switch string(key) {
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
		i = skipSpace(data, v.end)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return f
}

// skipString returns the end of the string whose quote is at i.
func skipString(data []byte, i int) int {
	for j := i + 1; ; {
		switch data[j] {
		case '"':
			return j + 1
		case '\\':
			j += 2
		default:
			j++
		}
	}
}

// skipValue returns the end of the value starting at i.
func skipValue(data []byte, i int) int {
	depth := 0
	for {
		switch c := data[i]; {
		case c == '"':
			i = skipString(data, i)
		case c == '[' || c == '{':
			depth++
			i++
		case c == ']' || c == '}':
			depth--
			i++
		case depth > 0 && (isSpace(c) || c == ',' || c == ':'):
			i++
			continue
		default:
			i = literalEnd(data, i)
		}
		if depth == 0 {
			return i
		}
	}
}

// decodeString decodes a string token the way jq's parser does: escapes are
// expanded (a lone low surrogate escape becomes U+FFFD), then invalid UTF-8
// is replaced as jq replaces it.
func decodeString(tok []byte) string {
	body := tok[1 : len(tok)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return jqValidUTF8(string(body))
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch body[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			cp, _ := hex4(body, i+2)
			i += 6
			if cp >= 0xD800 && cp <= 0xDBFF {
				lo, _ := hex4(body, i+2)
				i += 6
				cp = 0x10000 + (cp-0xD800)<<10 + (lo - 0xDC00)
			}
			// jq encodes a lone low surrogate as its 3-byte form, which the
			// UTF-8 repair below turns into one U+FFFD.
			out = appendUTF8Raw(out, cp)
			continue
		default: // '"', '\\', '/'
			out = append(out, body[i+1])
		}
		i += 2
	}
	return jqValidUTF8(string(out))
}

// appendUTF8Raw encodes cp as UTF-8 without refusing surrogates, as jq does.
func appendUTF8Raw(b []byte, cp rune) []byte {
	switch {
	case cp < 0x80:
		return append(b, byte(cp))
	case cp < 0x800:
		return append(b, 0xC0|byte(cp>>6), 0x80|byte(cp&0x3F))
	case cp < 0x10000:
		return append(b, 0xE0|byte(cp>>12), 0x80|byte(cp>>6&0x3F), 0x80|byte(cp&0x3F))
	default:
		return append(b, 0xF0|byte(cp>>18), 0x80|byte(cp>>12&0x3F), 0x80|byte(cp>>6&0x3F), 0x80|byte(cp&0x3F))
	}
}

// --- the SDK's view of a field ----------------------------------------------

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
	var s string
	switch raw[0] {
	case '"':
		s = decodeString(raw)
	case 'n', 'f': // null and false are what `//` replaces
		return ""
	case 't':
		return "true"
	case '[', '{':
		return jqIndented(data, v.start, len(raw))
	default:
		return canonicalNumber(string(raw))
	}
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

// jqIndented prints the value at data[i] as jq -r does (indented by two
// spaces), or compact when that would pass indentBudget plus twice the
// value's own size.
func jqIndented(data []byte, i, size int) string {
	val, _ := buildValue(data, i)
	compact := appendValue(nil, val, false, 0)
	if int64(len(compact))+indentCost(val, 0) > int64(indentBudget+2*size) {
		return string(compact)
	}
	return string(appendValue(make([]byte, 0, 2*len(compact)), val, true, 0))
}

// indentCost is how many bytes indenting adds to v's compact text at depth
// level: a newline and the indentation before each member and before the
// closing bracket, and a space after each colon.
func indentCost(v *value, level int64) int64 {
	if len(v.elems) == 0 {
		return 0
	}
	cost := 1 + 2*level // before the closing bracket
	for _, e := range v.elems {
		cost += 1 + 2*(level+1) + indentCost(e, level+1)
		if v.kind == '{' {
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

// decimal splits a valid JSON number into sign, coefficient digits without
// leading zeros ("0" for zero) and exponent, so its value is
// ±coef × 10^exp. Absurd exponents saturate rather than overflow.
func decimal(s string) (neg bool, coef string, exp int64) {
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	mant, expPart := s, ""
	if k := strings.IndexAny(s, "eE"); k >= 0 {
		mant, expPart = s[:k], s[k+1:]
	}
	intPart, frac := mant, ""
	if k := strings.IndexByte(mant, '.'); k >= 0 {
		intPart, frac = mant[:k], mant[k+1:]
	}
	coef = strings.TrimLeft(intPart+frac, "0")
	if coef == "" {
		coef = "0"
	}
	expNeg := false
	if expPart != "" && (expPart[0] == '+' || expPart[0] == '-') {
		expNeg = expPart[0] == '-'
		expPart = expPart[1:]
	}
	for _, d := range expPart {
		if exp < maxExponent {
			exp = exp*10 + int64(d-'0')
		}
	}
	if expNeg {
		exp = -exp
	}
	return neg, coef, exp - int64(len(frac))
}

// wholeNumber reports whether a valid JSON number has no fractional part.
func wholeNumber(lit string) bool {
	_, coef, exp := decimal(lit)
	if coef == "0" || exp >= 0 {
		return true
	}
	if -exp >= int64(len(coef)) {
		return false // nonzero and below 1
	}
	return strings.TrimLeft(coef[int64(len(coef))+exp:], "0") == ""
}

// canonicalNumber prints a valid JSON number the way jq 1.7 prints a number
// literal: decNumber's to-scientific-string (1e2 is 1E+2, 1.50 stays 1.50,
// 100e-2 is 1.00, 1e-7 is 1E-7, -0 stays -0).
func canonicalNumber(lit string) string {
	neg, coef, exp := decimal(lit)
	adjusted := exp + int64(len(coef)) - 1
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case exp == 0:
		b.WriteString(coef)
	case exp < 0 && adjusted >= -6:
		point := int64(len(coef)) + exp // digits before the point
		if point > 0 {
			b.WriteString(coef[:point])
			b.WriteByte('.')
			b.WriteString(coef[point:])
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", int(-point)))
			b.WriteString(coef)
		}
	default:
		b.WriteByte(coef[0])
		if len(coef) > 1 {
			b.WriteByte('.')
			b.WriteString(coef[1:])
		}
		b.WriteByte('E')
		if adjusted >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(adjusted, 10))
	}
	return b.String()
}

// --- values, for re-printing as jq prints ------------------------------------

// value is a parsed JSON value. Objects keep first-seen key order and the
// last value for a repeated key, as jq objects do.
type value struct {
	kind  byte     // 'n' null, 't' true, 'f' false, '0' number, '"' string, '[' array, '{' object
	text  string   // number literal or decoded string
	keys  []string // object keys, in order
	elems []*value // array elements, or object values parallel to keys
}

// buildValue parses the validated value at data[i] and returns it and its
// end. Recursion is bounded by MaxDepth, which scanValue enforced.
func buildValue(data []byte, i int) (*value, int) {
	switch c := data[i]; c {
	case '"':
		end := skipString(data, i)
		return &value{kind: '"', text: decodeString(data[i:end])}, end
	case '[':
		v := &value{kind: '['}
		i = skipSpace(data, i+1)
		for data[i] != ']' {
			var e *value
			e, i = buildValue(data, i)
			v.elems = append(v.elems, e)
			i = skipSpace(data, i)
			if data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		return v, i + 1
	case '{':
		v := &value{kind: '{'}
		var index map[string]int // built once the object is big enough to need it
		i = skipSpace(data, i+1)
		for data[i] != '}' {
			end := skipString(data, i)
			key := decodeString(data[i:end])
			i = skipSpace(data, end)
			i = skipSpace(data, i+1) // past ':'
			var e *value
			e, i = buildValue(data, i)
			if at, dup := findKey(v.keys, index, key); dup {
				v.elems[at] = e
			} else {
				v.keys = append(v.keys, key)
				v.elems = append(v.elems, e)
				if index != nil {
					index[key] = len(v.keys) - 1
				} else if len(v.keys) > 16 {
					index = make(map[string]int, 2*len(v.keys))
					for k, name := range v.keys {
						index[name] = k
					}
				}
			}
			i = skipSpace(data, i)
			if data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		return v, i + 1
	}
	end := literalEnd(data, i)
	switch data[i] {
	case 'n', 't', 'f':
		return &value{kind: data[i]}, end
	}
	return &value{kind: '0', text: string(data[i:end])}, end
}

func findKey(keys []string, index map[string]int, key string) (int, bool) {
	if index != nil {
		at, ok := index[key]
		return at, ok
	}
	for at, k := range keys {
		if k == key {
			return at, true
		}
	}
	return 0, false
}
