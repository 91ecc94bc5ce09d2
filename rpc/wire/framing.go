package wire

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// Kinds of LineError.
const (
	LineTooLong     = "too_long"
	LineInvalidUTF8 = "invalid_utf8"
)

// LineError reports a line that LineReader rejected. The reader has already
// moved past the whole line, so the next call to Next reads the line after it.
type LineError struct {
	Kind string // LineTooLong or LineInvalidUTF8
	Len  int64  // bytes in the line, not counting its "\n"
}

func (e *LineError) Error() string {
	if e.Kind == LineTooLong {
		return "rpc: line too long (" + strconv.FormatInt(e.Len, 10) + " bytes)"
	}
	return "rpc: line is not valid UTF-8 (" + strconv.FormatInt(e.Len, 10) + " bytes)"
}

// readBufSize is the chunk read from the underlying reader. A line that fits
// in one chunk is returned without being copied.
const readBufSize = 64 << 10

// shrinkAbove is the line-buffer capacity past which the buffer is dropped
// before the next line, so one large request does not pin up to max bytes
// for the life of the connection.
const shrinkAbove = 1 << 20

// LineReader reads newline-delimited messages from r with memory bounded by
// max bytes per line.
//
// It exists because bufio.Scanner gives up for good on the first line past
// its limit, and a client that sends one huge request must still be served
// afterwards: an over-long line is discarded while it streams past (never
// held beyond max bytes), reported once when its newline (or EOF) arrives,
// and reading resumes with the next line. Memory stays at most max+1 bytes
// of line buffer plus one 64 KiB read buffer, whatever the input.
//
// Two choices differ from the bash SDK's `IFS= read -r` loop: a trailing
// "\r" is stripped (bash kept it, so a line holding only "\r" was answered
// -32700 there and is empty, so skipped, here), and a line that is not valid
// UTF-8 is rejected whole (jq replaced the bad bytes and went on).
type LineReader struct {
	r   io.Reader
	max int

	buf        []byte // read buffer; buf[start:end] is not yet consumed
	start, end int

	line       []byte // the current line when it spans more than one read
	discarding bool   // the current line is over max: count it, keep nothing
	dropped    int64  // bytes of the current line seen while discarding

	err error // sticky error from r (io.EOF at the end)

	// OnPartial, when set, is called when a line's first bytes are kept
	// with no newline after them yet (the line spans reads): the moment
	// the reader first holds a fragment.
	OnPartial    func()
	unterminated bool // the last line returned ended at EOF, not "\n"
}

// Unterminated reports whether the line Next last returned had no
// newline: the input ended after it.
func (l *LineReader) Unterminated() bool { return l.unterminated }

// NewLineReader returns a reader of lines of at most max bytes (the "\n" and
// a "\r" before it are not counted). max must be positive.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		panic("rpc: NewLineReader: max must be positive")
	}
	return &LineReader{r: r, max: max, buf: make([]byte, readBufSize)}
}

// Next returns the next line without its trailing "\n" (and a trailing "\r"
// stripped too).
//
// It returns (line, nil) for a normal line, including an empty one (the
// caller skips those); (nil, *LineError) for a line that was too long (its
// bytes were discarded up to and including the next newline, never buffered
// beyond max) or not valid UTF-8; and (nil, io.EOF) at the end. A final line
// without a trailing newline is returned as a line, and io.EOF comes on the
// call after. An error from the underlying reader other than io.EOF is
// returned the same way, after any partial final line.
//
// The returned slice is only valid until the next call: it may point into
// the reader's buffers, which that call reuses.
func (l *LineReader) Next() ([]byte, error) {
	if cap(l.line) > shrinkAbove {
		l.line = nil
	}
	l.line = l.line[:0]
	l.unterminated = false
	spanning := false // the line began in an earlier chunk and lives in l.line
	for {
		chunk := l.buf[l.start:l.end]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			l.start += i + 1
			if l.discarding {
				return nil, l.tooLong(int64(i))
			}
			if !spanning {
				return l.finish(chunk[:i])
			}
			if !l.keep(chunk[:i]) {
				return nil, l.tooLong(0)
			}
			return l.finish(l.line)
		}
		// No newline in what is buffered: keep (or count) it and read more.
		l.start = l.end
		if l.discarding {
			l.dropped += int64(len(chunk))
		} else if len(chunk) > 0 {
			if !spanning && l.OnPartial != nil {
				l.OnPartial()
			}
			spanning = true
			l.keep(chunk)
		}
		if l.err != nil {
			return l.atEnd(spanning)
		}
		l.fill()
	}
}

// keep appends p to the current line, or switches to discarding when the
// line would pass max+1 bytes. One byte over max is kept so that a line of
// exactly max bytes followed by "\r\n" still fits once the "\r" is stripped.
// It reports whether the line is still being kept.
func (l *LineReader) keep(p []byte) bool {
	if l.discarding {
		l.dropped += int64(len(p))
		return false
	}
	limit := l.max + 1
	if len(l.line)+len(p) > limit {
		l.discarding = true
		l.dropped = int64(len(l.line) + len(p))
		l.line = l.line[:0]
		return false
	}
	if need := len(l.line) + len(p); need > cap(l.line) {
		// Grow by hand: append's doubling could allocate up to twice max.
		n := 2 * cap(l.line)
		if n < need {
			n = need
		}
		if n > limit {
			n = limit
		}
		grown := make([]byte, len(l.line), n)
		copy(grown, l.line)
		l.line = grown
	}
	l.line = append(l.line, p...)
	return true
}

// tooLong ends a discarded line whose last extra bytes (before its newline
// or EOF) were not yet counted.
func (l *LineReader) tooLong(extra int64) error {
	n := l.dropped + extra
	l.discarding = false
	l.dropped = 0
	l.line = l.line[:0]
	return &LineError{Kind: LineTooLong, Len: n}
}

// finish checks a complete line and strips its "\r".
func (l *LineReader) finish(line []byte) ([]byte, error) {
	n := int64(len(line))
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > l.max {
		return nil, &LineError{Kind: LineTooLong, Len: n}
	}
	if !utf8.Valid(line) {
		return nil, &LineError{Kind: LineInvalidUTF8, Len: n}
	}
	return line, nil
}

// atEnd handles the end of input (or a read error) with nothing buffered.
func (l *LineReader) atEnd(spanning bool) ([]byte, error) {
	if l.discarding {
		return nil, l.tooLong(0)
	}
	if spanning {
		line, err := l.finish(l.line)
		l.line = l.line[:0]
		l.unterminated = true
		return line, err
	}
	return nil, l.err
}

// fill reads the next chunk into the (fully consumed) read buffer.
func (l *LineReader) fill() {
	l.start, l.end = 0, 0
	// Like bufio: a reader that keeps returning nothing is broken, not slow.
	for tries := 0; tries < 100; tries++ {
		n, err := l.r.Read(l.buf)
		if n < 0 || n > len(l.buf) {
			l.err = errors.New("rpc: reader returned an invalid count")
			return
		}
		l.end = n
		if err != nil {
			l.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	l.err = io.ErrNoProgress
}
