package jq

import (
	"math"
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
// DEL, and every other character as its own UTF-8. The repair is made as
// it goes: a string of megabytes with one bad byte is not copied first.
func AppendStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			n, ok := badSequence(s, i)
			if !ok {
				b = append(append(b, s[start:i]...), "\uFFFD"...)
				start = i + n
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7F {
			i++
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
		i++
		start = i
	}
	return append(b, s[start:]...)
}

// StringBodyLen is len(AppendStringBody(nil, s)), without building it.
func StringBodyLen(s string) int {
	_, size := StringBodyFit(s, math.MaxInt)
	return size
}

// StringBodyFit is the longest prefix of s, s[:n], whose AppendStringBody
// form takes at most max bytes (size of them) and is a prefix of s's own:
// the cut falls between two characters AppendStringBody prints (a valid
// sequence, a byte it escapes, a bad sequence it repairs), and never just
// after a bad sequence whose lead byte promises more bytes than the cut
// leaves — at the end of a string jq repairs all of those bytes as one,
// taking in the characters that followed it.
func StringBodyFit(s string, max int) (n, size int) {
	for n < len(s) {
		k, w := bodyUnit(s, n)
		if size+w > max {
			break
		}
		size += w
		n += k
	}
	for cut := true; cut && n < len(s); {
		cut = false
		for j := n - 1; j >= 0 && j >= n-3; j-- {
			if l := utf8SeqLen(s[j]); l > 0 && j+l > n {
				for p := j; p < n; {
					k, w := bodyUnit(s, p)
					size -= w
					p += k
				}
				n, cut = j, true
				break
			}
		}
	}
	return n, size
}

// bodyUnit is the character of s at i as AppendStringBody prints it: k
// bytes of s, printed as w bytes.
func bodyUnit(s string, i int) (k, w int) {
	switch c := s[i]; {
	case c >= 0x80:
		k, ok := badSequence(s, i)
		if ok {
			return k, k
		}
		return k, len("\uFFFD")
	case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
		return 1, 2
	case c < 0x20 || c == 0x7F:
		return 1, len(`\u0000`)
	}
	return 1, 1
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
