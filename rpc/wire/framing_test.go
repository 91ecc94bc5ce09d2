package wire

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// lineResult is one outcome of Next: a line, or a LineError's kind and Len.
type lineResult struct {
	line string
	kind string
	n    int64
}

// refSplit is the obvious (unbounded) model of LineReader: split at "\n",
// strip one "\r", judge the rest; a final piece without "\n" still counts.
func refSplit(data []byte, max int) []lineResult {
	var out []lineResult
	for len(data) > 0 {
		seg := data
		data = nil
		if i := bytes.IndexByte(seg, '\n'); i >= 0 {
			seg, data = seg[:i], seg[i+1:]
		}
		s := bytes.TrimSuffix(seg, []byte("\r"))
		switch {
		case len(s) > max:
			out = append(out, lineResult{kind: LineTooLong, n: int64(len(seg))})
		case !utf8.Valid(s):
			out = append(out, lineResult{kind: LineInvalidUTF8, n: int64(len(seg))})
		default:
			out = append(out, lineResult{line: string(s)})
		}
	}
	return out
}

// readAll drains l, checking after every call that the line buffer never
// grew past max+1 bytes.
func readAll(t testing.TB, l *LineReader, max int) ([]lineResult, error) {
	t.Helper()
	var out []lineResult
	for calls := 0; ; calls++ {
		line, err := l.Next()
		if cap(l.line) > max+1 {
			t.Fatalf("line buffer cap %d > max+1 = %d", cap(l.line), max+1)
		}
		var le *LineError
		switch {
		case errors.As(err, &le):
			out = append(out, lineResult{kind: le.Kind, n: le.Len})
		case err != nil:
			return out, err
		default:
			out = append(out, lineResult{line: string(line)})
		}
		if calls > 1<<20 {
			t.Fatal("reader does not end")
		}
	}
}

func TestLineReaderCases(t *testing.T) {
	const max = 10
	cases := []struct {
		name, in string
		want     []lineResult
	}{
		{"empty input", "", nil},
		{"lines", "a\nbb\n", []lineResult{{line: "a"}, {line: "bb"}}},
		{"final line without newline", "a\nbb", []lineResult{{line: "a"}, {line: "bb"}}},
		{"empty lines", "\n\na\n", []lineResult{{line: ""}, {line: ""}, {line: "a"}}},
		{"crlf", "a\r\n\r\nb\r", []lineResult{{line: "a"}, {line: ""}, {line: "b"}}},
		{"one cr stripped", "a\r\r\n", []lineResult{{line: "a\r"}}},
		{"exactly max", "0123456789\nx\n", []lineResult{{line: "0123456789"}, {line: "x"}}},
		{"exactly max with crlf", "0123456789\r\nx\n", []lineResult{{line: "0123456789"}, {line: "x"}}},
		{"max plus one", "0123456789A\nx\n", []lineResult{{kind: LineTooLong, n: 11}, {line: "x"}}},
		{"max plus one with crlf", "0123456789A\r\nx\n", []lineResult{{kind: LineTooLong, n: 12}, {line: "x"}}},
		{"too long at end", "x\n" + strings.Repeat("y", 25), []lineResult{{line: "x"}, {kind: LineTooLong, n: 25}}},
		{"invalid utf8 then valid", "\xff\xfe\n{\"ping\"}\n", []lineResult{{kind: LineInvalidUTF8, n: 2}, {line: `{"ping"}`}}},
		{"truncated utf8", "ab\xe2\x82\nok", []lineResult{{kind: LineInvalidUTF8, n: 4}, {line: "ok"}}},
		{"utf8 across reads", "é✓😀\n", []lineResult{{line: "é✓😀"}}},
		{"too long beats invalid utf8", strings.Repeat("\xff", 20) + "\nz\n", []lineResult{{kind: LineTooLong, n: 20}, {line: "z"}}},
		{"nul is kept", "a\x00b\n", []lineResult{{line: "a\x00b"}}},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"onebyte":  iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"dataerr":  iotest.DataErrReader,
		"chunked3": func(r io.Reader) io.Reader { return &chunkReader{r: r, sizes: []int{3}} },
	}
	for _, c := range cases {
		if got := refSplit([]byte(c.in), max); !equalResults(got, c.want) {
			t.Fatalf("%s: the model disagrees with the table: %+v", c.name, got)
		}
		for rname, wrap := range readers {
			l := NewLineReader(wrap(strings.NewReader(c.in)), max)
			got, err := readAll(t, l, max)
			if err != io.EOF {
				t.Errorf("%s/%s: ended with %v, want io.EOF", c.name, rname, err)
			}
			if !equalResults(got, c.want) {
				t.Errorf("%s/%s:\n got %+v\nwant %+v", c.name, rname, got, c.want)
			}
			if _, err := l.Next(); err != io.EOF {
				t.Errorf("%s/%s: after the end got %v, want io.EOF again", c.name, rname, err)
			}
		}
	}
}

func equalResults(a, b []lineResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// chunkReader returns reads of the given sizes, in turn.
type chunkReader struct {
	r     io.Reader
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	if n < len(p) {
		p = p[:n]
	}
	return c.r.Read(p)
}

// patternReader yields n bytes of fill, then tail, without holding n bytes:
// the test input itself must not hide the reader's memory use.
type patternReader struct {
	n    int64
	fill []byte
	tail *strings.Reader
}

func newPatternReader(n int64, tail string) *patternReader {
	return &patternReader{n: n, fill: bytes.Repeat([]byte("x"), 32<<10), tail: strings.NewReader(tail)}
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.n == 0 {
		return p.tail.Read(b)
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	if len(b) > len(p.fill) {
		b = b[:len(p.fill)]
	}
	n := copy(b, p.fill)
	p.n -= int64(n)
	return n, nil
}

// allocated runs f and returns the bytes it allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLineReaderHugeLine: a 64 MiB line against a 16 MiB limit is reported
// once, the ping after it comes out next, and the reader never holds more
// than max+1 bytes of line (checked on every call by readAll).
func TestLineReaderHugeLine(t *testing.T) {
	const max = 16 << 20
	const size = 64 << 20
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	var got []lineResult
	var err error
	alloc := allocated(func() {
		l := NewLineReader(newPatternReader(size, "\n"+ping+"\n"), max)
		got, err = readAll(t, l, max)
	})
	want := []lineResult{{kind: LineTooLong, n: size}, {line: ping}}
	if err != io.EOF || !equalResults(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	// Growing the buffer to max+1 by doubling allocates under 2*(max+1).
	t.Logf("allocated %d bytes for a %d-byte line, max %d", alloc, size, max)
	if alloc > 2*max+readBufSize+1<<20 {
		t.Errorf("allocated %d bytes for a %d-byte line with max %d", alloc, size, max)
	}
}

// TestLineReaderEndlessLine: a line that goes on far past max (here 256 MiB
// before its newline) costs only max+1 bytes of buffer; one that never ends
// is reported at EOF.
func TestLineReaderEndlessLine(t *testing.T) {
	const max = 1 << 20
	const size = 256 << 20
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	var got []lineResult
	var err error
	alloc := allocated(func() {
		got, err = readAll(t, NewLineReader(newPatternReader(size, "\r\n"+ping), max), max)
	})
	want := []lineResult{{kind: LineTooLong, n: size + 1}, {line: ping}}
	if err != io.EOF || !equalResults(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	t.Logf("allocated %d bytes for a %d-byte line, max %d", alloc, size, max)
	if alloc > 4*max+readBufSize {
		t.Errorf("allocated %d bytes for a %d-byte line with max %d", alloc, size, max)
	}

	got, err = readAll(t, NewLineReader(newPatternReader(3*max, ""), max), max)
	if want := []lineResult{{kind: LineTooLong, n: 3 * max}}; err != io.EOF || !equalResults(got, want) {
		t.Fatalf("unterminated: got %+v, %v; want %+v", got, err, want)
	}
}

// TestLineReaderReleasesBigBuffer: after a line over shrinkAbove the buffer
// is dropped, so a connection does not keep max bytes for good.
func TestLineReaderReleasesBigBuffer(t *testing.T) {
	const max = 8 << 20
	l := NewLineReader(iotest.HalfReader(newPatternReader(4<<20, "\nsmall\n")), max)
	if line, err := l.Next(); err != nil || len(line) != 4<<20 {
		t.Fatalf("big line: %d bytes, %v", len(line), err)
	}
	if line, err := l.Next(); err != nil || string(line) != "small" {
		t.Fatalf("small line: %q, %v", line, err)
	}
	if cap(l.line) > shrinkAbove {
		t.Errorf("line buffer still %d bytes after a small line", cap(l.line))
	}
}

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	l := NewLineReader(io.MultiReader(strings.NewReader("one\ntwo"), iotest.ErrReader(boom)), 100)
	for _, want := range []string{"one", "two"} {
		if line, err := l.Next(); err != nil || string(line) != want {
			t.Fatalf("got %q, %v; want %q", line, err, want)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := l.Next(); err != boom {
			t.Fatalf("got %v, want the reader's error (sticky)", err)
		}
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestLineReaderNoProgress(t *testing.T) {
	if _, err := NewLineReader(emptyReader{}, 10).Next(); err != io.ErrNoProgress {
		t.Fatalf("got %v, want io.ErrNoProgress", err)
	}
}

func TestLineReaderBadMax(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewLineReader(r, 0) did not panic")
		}
	}()
	NewLineReader(strings.NewReader(""), 0)
}

func TestLineErrorText(t *testing.T) {
	for _, c := range []struct {
		e    LineError
		want string
	}{
		{LineError{Kind: LineTooLong, Len: 70}, "rpc: line too long (70 bytes)"},
		{LineError{Kind: LineInvalidUTF8, Len: 3}, "rpc: line is not valid UTF-8 (3 bytes)"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
