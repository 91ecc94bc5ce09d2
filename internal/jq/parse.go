package jq

import (
	"bytes"
	"iter"
)

// jq's reader, as far as the daemon follows it:
//
//   - jq splits its input into tokens at whitespace and at `[]{},:"`, so
//     `1 2` and `1"a"` are two documents while `1true` is one bad token.
//   - Literals are RFC 8259's only, as encoding/json reads them (jq also
//     took nan, 01, +1, .5 and 1.; every caller here refuses those).
//   - A string may not hold a raw control character, an unknown escape or a
//     \uD800-\uDBFF escape without a \uDC00-\uDFFF escape after it; a lone
//     low surrogate escape is read as U+FFFD, and so, after the escapes are
//     expanded, is each bad UTF-8 sequence as ValidUTF8 delimits it.
//   - Nesting is bounded by MaxDepth, kept on the heap (jq 1.7 stops at 256
//     levels; encoding/json's limit is the daemon's).

// MaxDepth is how deeply arrays and objects may nest, the same limit
// encoding/json applies. The scanner keeps its own stack, so no depth can
// exhaust the goroutine stack.
const MaxDepth = 10000

// Scan validates data as a whitespace-separated sequence of JSON documents,
// as `jq -s` reads it, and returns how many there are and where the first
// one starts. ok is false on any syntax error anywhere in data.
func Scan(data []byte) (count, first int, ok bool) {
	return scanDocuments(data, false)
}

// Parse reads data as exactly one JSON document, with whitespace around it,
// the way jq reads it. ok is false when data is not one valid document.
func Parse(data []byte) (v *Value, ok bool) {
	return parseOne(data, false)
}

// ParseLenient is Parse that also accepts a high surrogate escape without
// its low half and reads it as U+FFFD, as encoding/json does. It is for
// callers whose idea of valid JSON is encoding/json's: with that one
// exception they agree with jq on what is valid, and the value is read as
// jq reads it.
func ParseLenient(data []byte) (v *Value, ok bool) {
	return parseOne(data, true)
}

func parseOne(data []byte, lenient bool) (*Value, bool) {
	count, first, ok := scanDocuments(data, lenient)
	if !ok || count != 1 {
		return nil, false
	}
	v, _ := buildValue(data, first)
	return v, true
}

// Span is where a value lies in the bytes it was read from: data[Start:End].
type Span struct{ Start, End int }

// Members yields the key (decoded as jq decodes it) and the value's span of
// each member of the object starting at data[i], in order, repeated keys
// included. data must be what Scan or Parse accepted, with an object at i.
func Members(data []byte, i int) iter.Seq2[string, Span] {
	return func(yield func(string, Span) bool) {
		i := skipSpace(data, i+1)
		for data[i] != '}' {
			keyEnd := skipString(data, i)
			key := decodeString(data[i:keyEnd])
			i = skipSpace(data, keyEnd)
			i = skipSpace(data, i+1) // past ':'
			v := Span{Start: i, End: skipValue(data, i)}
			if !yield(key, v) {
				return
			}
			i = skipSpace(data, v.End)
			if data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
	}
}

// Elements yields the span of each element of the array starting at
// data[i], in order. data must be what Scan or Parse accepted, with an
// array at i.
func Elements(data []byte, i int) iter.Seq[Span] {
	return func(yield func(Span) bool) {
		i := skipSpace(data, i+1)
		for data[i] != ']' {
			v := Span{Start: i, End: skipValue(data, i)}
			if !yield(v) {
				return
			}
			i = skipSpace(data, v.End)
			if data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
	}
}

// --- validating --------------------------------------------------------------

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

func scanDocuments(data []byte, lenient bool) (count, first int, ok bool) {
	i := skipSpace(data, 0)
	for i < len(data) {
		end, good := scanValue(data, i, lenient)
		if !good {
			return 0, 0, false
		}
		if count == 0 {
			first = i
		}
		count++
		i = skipSpace(data, end)
	}
	return count, first, true
}

// scanValue validates one value starting at data[i] (not whitespace) and
// returns its end. It keeps its own stack so depth costs heap, not stack.
func scanValue(data []byte, i int, lenient bool) (int, bool) {
	stack := make([]byte, 0, 32) // '[' or '{' per open container; deeper nesting grows it
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
				if i, ok = scanKey(data, i, lenient); !ok {
					return i, false
				}
			}
			continue
		case '"':
			if i, ok = scanString(data, i, lenient); !ok {
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
					if i, ok = scanKey(data, i, lenient); !ok {
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
func scanKey(data []byte, i int, lenient bool) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := scanString(data, i, lenient)
	if !ok {
		return i, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return skipSpace(data, i+1), true
}

// scanString validates the string starting at the quote at i (see the top
// of this file for what jq refuses in one).
func scanString(data []byte, i int, lenient bool) (int, bool) {
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
				if lowSurrogateAt(data, j) {
					j += 6
				} else if !lenient {
					return j, false
				}
			}
		default:
			return j, false
		}
	}
	return len(data), false
}

// lowSurrogateAt reports a \uDC00-\uDFFF escape at data[i].
func lowSurrogateAt(data []byte, i int) bool {
	if i+1 >= len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return false
	}
	lo, ok := hex4(data, i+2)
	return ok && lo >= 0xDC00 && lo <= 0xDFFF
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

// --- reading validated input -------------------------------------------------

// The functions below assume input that scanValue accepted.

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
// expanded (a lone surrogate escape becomes U+FFFD), then invalid UTF-8 is
// replaced as jq replaces it.
func decodeString(tok []byte) string {
	body := tok[1 : len(tok)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return ValidUTF8(string(body))
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
				if lowSurrogateAt(body, i) {
					lo, _ := hex4(body, i+2)
					i += 6
					cp = 0x10000 + (cp-0xD800)<<10 + (lo - 0xDC00)
				} else {
					cp = 0xFFFD // only ParseLenient lets one through
				}
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
	return ValidUTF8(string(out))
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

// buildValue reads the validated value at data[i] and returns it and its
// end. Recursion is bounded by MaxDepth, which scanValue enforced.
func buildValue(data []byte, i int) (*Value, int) {
	switch c := data[i]; c {
	case '"':
		end := skipString(data, i)
		return &Value{Kind: KindString, Text: decodeString(data[i:end])}, end
	case '[':
		v := &Value{Kind: KindArray}
		i = skipSpace(data, i+1)
		for data[i] != ']' {
			var e *Value
			e, i = buildValue(data, i)
			v.Elems = append(v.Elems, e)
			i = skipSpace(data, i)
			if data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		return v, i + 1
	case '{':
		v := &Value{Kind: KindObject}
		i = skipSpace(data, i+1)
		for data[i] != '}' {
			end := skipString(data, i)
			key := decodeString(data[i:end])
			i = skipSpace(data, end)
			i = skipSpace(data, i+1) // past ':'
			var e *Value
			e, i = buildValue(data, i)
			v.set(key, e)
			i = skipSpace(data, i)
			if data[i] == ',' {
				i = skipSpace(data, i+1)
			}
		}
		return v, i + 1
	}
	end := literalEnd(data, i)
	switch data[i] {
	case 'n':
		return &Value{Kind: KindNull}, end
	case 't':
		return &Value{Kind: KindTrue}, end
	case 'f':
		return &Value{Kind: KindFalse}, end
	}
	return &Value{Kind: KindNumber, Text: string(data[i:end])}, end
}
