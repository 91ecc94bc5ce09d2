package jq

import (
	"unicode/utf8"
	"unsafe"
)

// Reprint is data, one JSON document, as jq prints it after reading it in
// style s: `jq -c .` for Compact, the second of two such passes for
// Compact|Twice. String escapes are decoded and printed as jq escapes
// (\u0041 is A, \/ is /), numbers as Number prints them (1e2 is 1E+2,
// 1.50 and 12345678901234567890123 stay as written), whitespace goes and
// a repeated key keeps its first position with its last value. The
// document is read as ParseLenient reads it: a lone high surrogate escape,
// which encoding/json accepted upstream, becomes U+FFFD.
//
// data that already is that text (the common case: a client's compact
// JSON without escapes jq would print otherwise) is returned itself,
// without a copy and without building a Value. ok is false when data is
// not one valid document.
func Reprint(data []byte, s Style) (out []byte, ok bool) {
	count, first, ok := scanDocuments(data, true)
	if !ok || count != 1 {
		return nil, false
	}
	if s&Indent == 0 && printedAsIs(data, s) {
		return data, true
	}
	v, _ := buildValue(data, first)
	return Append(make([]byte, 0, len(data)), v, s), true
}

// maxKeysAsIs bounds the keys of one object that printedAsIs compares
// pairwise for repeats; a larger object takes the slow path, whose lookup
// is indexed.
const maxKeysAsIs = 32

// printedAsIs reports whether data, one document that scanDocuments
// accepted, is byte for byte what Append prints for it in style s (without
// Indent): no whitespace, only the escapes jq itself writes, valid UTF-8,
// numbers already in Number's form and no key repeated within an object.
func printedAsIs(data []byte, s Style) bool {
	// Per open container: whether it is an object, and where its keys
	// start in keys. Small arrays keep the common case off the heap.
	type frame struct {
		object bool
		keys   int
	}
	var stackBuf [16]frame
	var keysBuf [maxKeysAsIs][]byte
	stack, keys := stackBuf[:0], keysBuf[:0]
	wantKey := false
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case '{', '[':
			stack = append(stack, frame{object: c == '{', keys: len(keys)})
			wantKey = c == '{'
			i++
		case '}', ']':
			keys = keys[:stack[len(stack)-1].keys]
			stack = stack[:len(stack)-1]
			wantKey = false
			i++
		case ',':
			wantKey = stack[len(stack)-1].object
			i++
		case ':':
			i++
		case '"':
			end, ok := stringAsIs(data, i)
			if !ok {
				return false
			}
			if wantKey {
				top := stack[len(stack)-1]
				if len(keys)-top.keys >= maxKeysAsIs {
					return false
				}
				key := data[i:end]
				for _, k := range keys[top.keys:] {
					// Printed as jq prints it, a key has one spelling.
					if string(k) == string(key) {
						return false
					}
				}
				keys = append(keys, key)
				wantKey = false
			}
			i = end
		case ' ', '\t', '\n', '\r':
			return false
		default:
			end := literalEnd(data, i)
			if !numberAsIs(data[i:end], s) {
				return false
			}
			i = end
		}
	}
	return true
}

// stringAsIs reports whether the valid string token at data[i] is printed
// by AppendString as it is, and returns its end.
func stringAsIs(data []byte, i int) (int, bool) {
	for j := i + 1; ; {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c == 0x7F: // jq writes \u007f
			return j, false
		case c >= 0x80:
			r, n := utf8.DecodeRune(data[j:])
			if r == utf8.RuneError && n == 1 {
				return j, false // repaired to U+FFFD
			}
			j += n
		case c != '\\':
			j++
		default:
			switch data[j+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if !escapeAsIs(data[j+2 : j+6]) {
					return j, false
				}
				j += 6
			default: // \/
				return j, false
			}
		}
	}
}

// escapeAsIs reports whether jq writes the character of the \u escape
// whose four hex digits are h as exactly this escape: a control character
// without a short escape, or DEL, in lower-case hex.
func escapeAsIs(h []byte) bool {
	if h[0] != '0' || h[1] != '0' {
		return false
	}
	v := 0
	for _, c := range h[2:] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		default:
			return false
		}
	}
	switch v {
	case '\b', '\t', '\n', '\f', '\r':
		return false // printed with its short escape
	}
	return v < 0x20 || v == 0x7F
}

// numberAsIs reports whether the literal tok (a number, true, false or
// null) is printed as it is. An integer without exponent always is; a
// fraction or an exponent is compared with what Number makes of it.
func numberAsIs(tok []byte, s Style) bool {
	switch tok[0] {
	case 't', 'f', 'n':
		return true
	}
	plain := true
	for _, c := range tok {
		if c == '.' || c == 'e' || c == 'E' {
			plain = false
			break
		}
	}
	if plain {
		return true
	}
	// Printed into buffers on the stack, read through unsafe.String: the
	// check allocates nothing for the numbers calls usually carry.
	var b1, b2 [64]byte
	n := appendNumber(b1[:0], unsafe.String(unsafe.SliceData(tok), len(tok)))
	if s&Twice != 0 {
		n = appendNumber(b2[:0], unsafe.String(unsafe.SliceData(n), len(n)))
	}
	return string(n) == string(tok)
}
