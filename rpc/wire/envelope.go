package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The SDK builds every line with `jq -n -c --argjson ... --arg ...`, so a
// line is byte-exact only if each value in it is printed as jq 1.7 prints
// it. The functions here therefore re-print every raw JSON value they are
// given instead of pasting it in:
//
//   - compact, keys in the order first seen, a repeated key printed once
//     at its first position with its last value;
//   - numbers as jq prints a literal (1e2 is 1E+2, 1.0 stays 1.0, big
//     integers keep every digit);
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

// resultLineTrusted is ResultLine for a result the server built itself
// (compact, valid JSON by construction): it is copied, not re-parsed, which
// matters for a tool result carrying megabytes of text.
func resultLineTrusted(id json.RawMessage, result json.RawMessage) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"result":`...)
	b = append(b, result...)
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
	b = appendJQString(b, jqValidUTF8(msg))
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
	b = appendJQString(b, jqValidUTF8(method))
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = appendRaw(b, params)
	}
	return append(b, "}\n"...)
}

// appendRaw appends raw as jq -c prints it, or null (see above).
func appendRaw(b []byte, raw []byte) []byte {
	start := skipSpace(raw, 0)
	if start == len(raw) {
		return append(b, jsonNull...)
	}
	end, ok := scanValue(raw, start)
	if !ok || skipSpace(raw, end) != len(raw) {
		return append(b, jsonNull...)
	}
	v, _ := buildValue(raw, start)
	return appendValue(b, v, false, 0)
}

// appendValue prints v as jq does: compact, or indented by two spaces per
// level as jq prints without -c.
func appendValue(b []byte, v *value, pretty bool, indent int) []byte {
	switch v.kind {
	case 'n':
		return append(b, "null"...)
	case 't':
		return append(b, "true"...)
	case 'f':
		return append(b, "false"...)
	case '0':
		return append(b, canonicalNumber(v.text)...)
	case '"':
		return appendJQString(b, v.text)
	}
	opener, closer := byte('['), byte(']')
	if v.kind == '{' {
		opener, closer = '{', '}'
	}
	if len(v.elems) == 0 {
		return append(b, opener, closer)
	}
	b = append(b, opener)
	for n, e := range v.elems {
		if n > 0 {
			b = append(b, ',')
		}
		b = lineBreak(b, pretty, indent+1)
		if v.kind == '{' {
			b = appendJQString(b, v.keys[n])
			b = append(b, ':')
			if pretty {
				b = append(b, ' ')
			}
		}
		b = appendValue(b, e, pretty, indent+1)
	}
	b = lineBreak(b, pretty, indent)
	return append(b, closer)
}

func lineBreak(b []byte, pretty bool, indent int) []byte {
	if !pretty {
		return b
	}
	b = append(b, '\n')
	for ; indent > 0; indent-- {
		b = append(b, "  "...)
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJQString appends s (valid UTF-8) as a JSON string with jq's escapes.
func appendJQString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJQStringBody(b, s)
	return append(b, '"')
}

// appendJQStringBody appends s escaped, without the quotes.
func appendJQStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7F {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	return append(b, s[start:]...)
}

// jqValidUTF8 replaces invalid UTF-8 in s with U+FFFD exactly as jq does
// (jvp_utf8_next): one U+FFFD per bad lead or stray continuation byte, per
// sequence cut short by a non-continuation byte (that byte is kept), per
// complete but overlong, surrogate or out-of-range sequence, and one for a
// sequence cut short by the end of the string, whatever its bytes are.
func jqValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			b.WriteByte(c)
			i++
			continue
		}
		n, ok := 1, false
		if length := utf8SeqLen(c); length > 1 {
			if i+length > len(s) {
				n = len(s) - i
			} else {
				n, ok = length, true
				cp := rune(c) & (0x7F >> length)
				for k := 1; k < length; k++ {
					cc := s[i+k]
					if cc < 0x80 || cc > 0xBF {
						n, ok = k, false
						break
					}
					cp = cp<<6 | rune(cc&0x3F)
				}
				if ok && (cp < minCodepoint[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
					ok = false
				}
			}
		}
		if ok {
			b.WriteString(s[i : i+n])
		} else {
			b.WriteString("\uFFFD")
		}
		i += n
	}
	return b.String()
}

// minCodepoint is the smallest code point a sequence of each length may
// carry; anything lower is overlong.
var minCodepoint = [5]rune{0, 0, 0x80, 0x800, 0x10000}

// utf8SeqLen is jq's sequence length for a lead byte >= 0x80: 2..4, or 0
// for a continuation byte or a byte that never starts a sequence.
func utf8SeqLen(c byte) int {
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 2
	case c >= 0xE0 && c <= 0xEF:
		return 3
	case c >= 0xF0 && c <= 0xF4:
		return 4
	}
	return 0
}
