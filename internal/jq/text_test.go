package jq

import (
	"math/rand"
	"testing"
)

// escapeRepaired is AppendStringBody as it was first written: ValidUTF8 over
// the whole string, then the escapes. The one-pass form must print the same.
func escapeRepaired(s string) string {
	s = ValidUTF8(s)
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20 || c == 0x7F:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

var textCases = []string{
	"", "plain", "\x00\x01\x1f\x7f", `"\`, "\b\f\n\r\t", "é€😀",
	"\xff", "\xc3", "a\xc3(b", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"\xc0\xaf", "\xf0\x9f\x98", "x\x80y", "\xe2\x28\xa1",
}

// checkBody checks AppendStringBody, StringBodyLen and StringBodyFit on s
// against the reference and each other.
func checkBody(t *testing.T, s string) {
	t.Helper()
	want := escapeRepaired(s)
	got := string(AppendStringBody(nil, s))
	if got != want {
		t.Fatalf("AppendStringBody(%q) = %q, want %q", s, got, want)
	}
	if n := StringBodyLen(s); n != len(want) {
		t.Fatalf("StringBodyLen(%q) = %d, want %d", s, n, len(want))
	}
	for max := 0; max <= len(want)+1; max++ {
		n, size := StringBodyFit(s, max)
		printed := string(AppendStringBody(nil, s[:n]))
		switch {
		case size != len(printed) || size > max:
			t.Fatalf("StringBodyFit(%q, %d) = %d, %d: s[:n] prints as %d bytes", s, max, n, size, len(printed))
		case printed != want[:len(printed)]:
			t.Fatalf("StringBodyFit(%q, %d) = %d: the cut made a bad sequence: %q is not a prefix of %q", s, max, n, printed, want)
		case n < len(s) && len(want) <= max:
			t.Fatalf("StringBodyFit(%q, %d) = %d: everything fits", s, max, n)
		}
		if n < len(s) {
			// The next character would not have fitted.
			if next, _ := StringBodyFit(s[n:], max-size); next != 0 {
				t.Fatalf("StringBodyFit(%q, %d) = %d: %q more would have fitted", s, max, n, s[n:n+next])
			}
		}
	}
}

func TestStringBody(t *testing.T) {
	for _, s := range textCases {
		checkBody(t, s)
	}
	r := rand.New(rand.NewSource(1))
	alphabet := []byte("a\"\\\n\x00\x1f\x7f\x80\xbf\xc2\xc3\xe2\x82\xac\xed\xa0\xf0\x9f\x98\xf4\x90\xff")
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.Intn(12))
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		checkBody(t, string(b))
	}
}

func FuzzStringBody(f *testing.F) {
	for _, s := range textCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 {
			s = s[:64] // checkBody tries every max: keep it quadratic in little
		}
		checkBody(t, s)
	})
}
