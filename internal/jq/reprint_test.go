package jq

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"
)

// Reprint prints every document of the golden table as jq 1.7 did, once
// (jq -c .) and twice (jq -c . | jq -c .), whether it took the fast path
// or not; what jq refused it refuses too, except a lone high surrogate
// escape, which it reads as ParseLenient does.
func TestReprintGolden(t *testing.T) {
	for _, doc := range documents {
		want := golden[doc]
		for _, s := range []Style{Compact, Compact | Twice} {
			got, ok := Reprint([]byte(doc), s)
			if want.Invalid {
				if _, lenient := ParseLenient([]byte(doc)); ok != lenient {
					t.Errorf("Reprint(%q, %d) ok = %v, want %v", doc, s, ok, lenient)
				}
				continue
			}
			w := want.Compact
			if s&Twice != 0 {
				w = want.Twice
			}
			if !ok || string(got) != w {
				t.Errorf("Reprint(%q, %d) = %q, %v; jq printed %q", doc, s, got, ok, w)
			}
			// What jq printed, read and printed again: the second pass.
			if again, _ := Reprint([]byte(w), s); string(again) != want.Twice && s&Twice != 0 {
				t.Errorf("Reprint(%q, %d) = %q, want %q", w, s, again, want.Twice)
			}
		}
	}
}

// The fast path: text that already is jq's is returned itself (no copy),
// and anything jq would print otherwise is not.
func TestReprintAsIs(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, "\"é😀\u2028<>&/\"",
		`{"n":-0,"big":12345678901234567890123,"f":1.50,"g":0.000001,"e":1E+2}`,
		`"\u0000\u001f\u007f\b\f\n\r\t\"\\"`, `{"a":{"a":1},"b":{"a":2}}`,
	} {
		got, ok := Reprint([]byte(doc), Compact)
		if !ok || string(got) != doc {
			t.Errorf("Reprint(%q) = %q, %v; want it unchanged", doc, got, ok)
			continue
		}
		if unsafe.SliceData(got) != unsafe.SliceData([]byte(doc)) && len(doc) > 0 {
			// []byte(doc) is a new slice each time: compare with one.
			in := []byte(doc)
			if out, _ := Reprint(in, Compact); unsafe.SliceData(out) != unsafe.SliceData(in) {
				t.Errorf("Reprint(%q) copied text already in jq's form", doc)
			}
		}
	}
	for doc, want := range map[string]string{
		`{ "a":1}`:                      `{"a":1}`,
		`{"a":"x\u0041"}`:               `{"a":"xA"}`,
		`"\/"`:                          `"/"`,
		`"\u001F"`:                      `"\u001f"`,
		`"\u000a"`:                      `"\n"`,
		"\"\x7f\"":                      `"\u007f"`,
		"\"a\xffb\"":                    "\"a\uFFFDb\"",
		`{"i":1e2,"j":1.5e3,"k":1E400}`: `{"i":1E+2,"j":1.5E+3,"k":1E+400}`,
		`{"a":1,"b":2,"a":3}`:           `{"a":3,"b":2}`,
		`{"a":{"x":1,"x":2}}`:           `{"a":{"x":2}}`,
		`"\ud800"`:                      "\"\uFFFD\"",
		`{"p":0.0000001}`:               `{"p":1E-7}`,
		`[1.5e-7]`:                      `[1.5E-7]`,
	} {
		if got, ok := Reprint([]byte(doc), Compact); !ok || string(got) != want {
			t.Errorf("Reprint(%q) = %q, %v; want %q", doc, got, ok, want)
		}
	}
	// More keys than the fast path compares: the slow path decides.
	var b strings.Builder
	b.WriteString("{")
	for i := range maxKeysAsIs + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	b.WriteString("}")
	if got, ok := Reprint([]byte(b.String()), Compact); !ok || string(got) != b.String() {
		t.Errorf("a %d-key object: got %q, %v", maxKeysAsIs+5, got, ok)
	}
	for _, bad := range []string{"", " ", "1 2", "{", `{"a":1,}`, "tru"} {
		if _, ok := Reprint([]byte(bad), Compact); ok {
			t.Errorf("Reprint(%q) accepted it", bad)
		}
	}
}

// A call whose arguments are already jq's text pays no allocation.
func TestReprintAsIsAllocs(t *testing.T) {
	doc := []byte(`{"path":"/tmp/x","n":3,"tags":["a","b"],"opt":{"deep":true,"v":null}}`)
	if n := testing.AllocsPerRun(100, func() { Reprint(doc, Compact|Twice) }); n != 0 {
		t.Errorf("Reprint of text in jq's form allocated %v times per call, want 0", n)
	}
}

// The fast path and the slow one agree on every input.
func FuzzReprint(f *testing.F) {
	for _, doc := range documents {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range []Style{Compact, Compact | Twice} {
			got, ok := Reprint(data, s)
			v, lenient := ParseLenient(data)
			if ok != lenient {
				t.Fatalf("Reprint(%q) ok = %v, ParseLenient ok = %v", data, ok, lenient)
			}
			if !ok {
				continue
			}
			if want := Append(nil, v, s); !bytes.Equal(got, want) {
				t.Fatalf("Reprint(%q, %d) = %q, Append printed %q", data, s, got, want)
			}
		}
	})
}

func BenchmarkReprint(b *testing.B) {
	for name, doc := range map[string]string{
		"as-is":   `{"path":"/tmp/some/file.txt","limit":20,"tags":["a","b","c"],"opts":{"recursive":true,"depth":1.5}}`,
		"escaped": `{"path":"\/tmp\/some\/file.txt","limit":2e1,"tags":["\u0061","b","c"],"opts":{"recursive":true,"depth":1.5}}`,
	} {
		b.Run(name, func(b *testing.B) {
			data := []byte(doc)
			b.ReportAllocs()
			for b.Loop() {
				Reprint(data, Compact)
			}
		})
	}
}
