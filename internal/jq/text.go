package jq

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string the way jq prints one: invalid
// UTF-8 repaired as ValidUTF8 does, then escaped as AppendStringBody does.
// encoding/json differs (it escapes <, >, &, U+2028 and U+2029), which is
// why it cannot print jq's text.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendStringBody(b, s)
	return append(b, '"')
}

// AppendStringBody appends s without the quotes, repaired as ValidUTF8 does
// and escaped as jq's jvp_dump_string escapes: `"` and `\`, the named
// escapes \b \f \n \r \t, \u00xx (lowercase) for the other C0 controls and
// DEL, and every other character as its own UTF-8.
func AppendStringBody(b []byte, s string) []byte {
	s = ValidUTF8(s)
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

// ValidUTF8 replaces invalid UTF-8 in s with U+FFFD exactly as jq does
// (jvp_utf8_next): one U+FFFD per bad lead or stray continuation byte, per
// sequence cut short by a non-continuation byte (that byte is kept), per
// complete but overlong, surrogate or out-of-range sequence, and one for a
// sequence cut short by the end of the string, whatever its bytes are. Go's
// own repair (one U+FFFD per byte) differs on all but the first two.
func ValidUTF8(s string) string {
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
		n, ok := badSequence(s, i)
		if ok {
			b.WriteString(s[i : i+n])
		} else {
			b.WriteString("\uFFFD")
		}
		i += n
	}
	return b.String()
}

// badSequence measures the sequence whose lead byte (>= 0x80) is at s[i] as
// jq does: n bytes long, ok when they encode a code point.
func badSequence(s string, i int) (n int, ok bool) {
	c := s[i]
	length := utf8SeqLen(c)
	if length == 0 {
		return 1, false
	}
	if i+length > len(s) {
		return len(s) - i, false
	}
	cp := rune(c) & (0x7F >> length)
	for k := 1; k < length; k++ {
		cc := s[i+k]
		if cc < 0x80 || cc > 0xBF {
			return k, false
		}
		cp = cp<<6 | rune(cc&0x3F)
	}
	if cp < minCodepoint[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF {
		return length, false
	}
	return length, true
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
