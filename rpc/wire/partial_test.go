package wire

import (
	"io"
	"strings"
	"testing"
)

// The reader says when a line ended at EOF, and calls OnPartial once per
// line whose first bytes came with no newline after them.
func TestLineReaderReportsUnterminatedLines(t *testing.T) {
	l := NewLineReader(strings.NewReader("a\nbc"), 16)
	partials := 0
	l.OnPartial = func() { partials++ }
	if line, err := l.Next(); string(line) != "a" || err != nil || l.Unterminated() {
		t.Fatalf("first line: %q %v unterminated=%v", line, err, l.Unterminated())
	}
	if line, err := l.Next(); string(line) != "bc" || err != nil || !l.Unterminated() {
		t.Fatalf("last line: %q %v unterminated=%v", line, err, l.Unterminated())
	}
	if _, err := l.Next(); err != io.EOF || l.Unterminated() {
		t.Fatalf("end: %v unterminated=%v", err, l.Unterminated())
	}
	if partials != 1 {
		t.Errorf("OnPartial called %d times, want 1", partials)
	}
}
