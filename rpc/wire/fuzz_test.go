package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// FuzzLineReader compares LineReader, fed in fuzzer-chosen read sizes, with
// the unbounded model refSplit, and checks the buffer bound on every call.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\n\xff\n"+strings.Repeat("x", 40)+"\nlast"), uint8(8), []byte{1, 3, 7})
	f.Add([]byte("0123456789\r\n0123456789A\r\n"), uint8(10), []byte{2})
	f.Add([]byte("é✓😀\n\xe2\x82\n"), uint8(4), []byte{1})
	f.Fuzz(func(t *testing.T, data []byte, max8 uint8, sizes []byte) {
		max := int(max8) + 1
		chunks := []int{len(data) + 1}
		if len(sizes) > 0 {
			chunks = chunks[:0]
			for _, s := range sizes {
				chunks = append(chunks, int(s)%97+1)
			}
		}
		l := NewLineReader(&chunkReader{r: bytes.NewReader(data), sizes: chunks}, max)
		got, err := readAll(t, l, max)
		if err != io.EOF {
			t.Fatalf("ended with %v", err)
		}
		if want := refSplit(data, max); !equalResults(got, want) {
			t.Fatalf("max %d chunks %v\n got %+v\nwant %+v", max, chunks, got, want)
		}
	})
}

// FuzzParse: Parse never panics, returns exactly one of its results, and
// every line built from what it returns is one valid JSON line in valid
// UTF-8. It also cross-checks the scanner with encoding/json.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x\ud83d\ude00","method":"tools/call","params":{"name":"n","arguments":{"a":[1,2.5e3,null]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}`,
		`{"jsonrpc":"2.0","id":1e2,"method":{"a":[1,{"b":"\u0000"}]}}`,
		`{"jsonrpc":2.0,"id":-0.0,"method":"ping\n"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-1}}`,
		`{"a":1} {"b":2}`, `1true`, `[1,2]`, "\ufeff{}", "  ", `"\udc00"`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, gerr := Parse(line)
		if msg != nil && gerr != nil {
			t.Fatalf("Parse(%q) = %v, %v", line, msg, gerr)
		}
		if msg == nil && gerr == nil {
			if len(bytes.ReplaceAll(line, []byte{0}, nil)) != 0 {
				t.Fatalf("Parse(%q) dropped a line that is not empty", line)
			}
			return
		}
		if gerr != nil {
			checkFuzzLine(t, gerr.Line())
			if gerr.Code != -32700 && gerr.Code != -32600 {
				t.Fatalf("Parse(%q): code %d", line, gerr.Code)
			}
		} else {
			checkFuzzLine(t, ResultLine(msg.ID, msg.Params))
			checkFuzzLine(t, ErrorLine(msg.ID, -32601, "Method not found: "+msg.Method, msg.Params))
			checkFuzzLine(t, NotificationLine(msg.Method, msg.Params))
			if msg.HasID != (msg.ID != nil) {
				t.Fatalf("Parse(%q): HasID %v with ID %q", line, msg.HasID, msg.ID)
			}
			if msg.Params != nil && !json.Valid(msg.Params) {
				t.Fatalf("Parse(%q): params %q", line, msg.Params)
			}
			if strings.HasSuffix(msg.Method, "\n") || strings.IndexByte(msg.Method, 0) >= 0 {
				t.Fatalf("Parse(%q): method %q keeps what bash drops", line, msg.Method)
			}
		}
		// Any bytes, taken as a raw value, still make a valid line.
		checkFuzzLine(t, ResultLine(line, line))

		// The scanner is never looser than encoding/json, and only stricter
		// about a high surrogate escape without its low half (as jq is).
		data := bytes.TrimPrefix(bytes.ReplaceAll(line, []byte{0}, nil), []byte(utf8BOM))
		count, _, ok := jq.Scan(data)
		one := ok && count == 1
		if one && !json.Valid(data) {
			t.Fatalf("scanner accepted %q, encoding/json does not", data)
		}
		if !one && json.Valid(data) && utf8.Valid(data) && !bytes.Contains(bytes.ToLower(data), []byte(`\ud`)) {
			t.Fatalf("scanner rejected %q, encoding/json accepts it", data)
		}
		// Where both read the line, they agree on the method string.
		if msg != nil && utf8.Valid(data) && !bytes.Contains(bytes.ToLower(data), []byte(`\ud`)) {
			var m map[string]json.RawMessage // exact keys, last one wins
			if json.Unmarshal(data, &m) == nil && len(m["method"]) > 0 && m["method"][0] == '"' {
				var s string
				if err := json.Unmarshal(m["method"], &s); err != nil {
					t.Fatal(err)
				}
				if want := strings.TrimRight(strings.ReplaceAll(s, "\x00", ""), "\n"); msg.Method != want {
					t.Fatalf("Parse(%q): method %q, encoding/json says %q", line, msg.Method, want)
				}
			}
		}
	})
}

func checkFuzzLine(t *testing.T, line []byte) {
	t.Helper()
	body, ok := bytes.CutSuffix(line, []byte("\n"))
	if !ok || bytes.IndexByte(body, '\n') >= 0 || !utf8.Valid(line) || !json.Valid(body) {
		t.Fatalf("bad line %q", line)
	}
}
