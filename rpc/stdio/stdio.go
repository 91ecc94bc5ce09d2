// Package stdio is the stdio transport: one JSON-RPC message per line on
// stdin, responses and notifications as lines on stdout, nothing else on
// stdout ever. Lines are framed with bounded memory (rpc/wire.LineReader)
// and gated as the bash SDK gated them; a rejected line is answered here
// and reading goes on.
//
// Writes are whole lines, in the order they are handed over, by one
// goroutine of the output (output.go); responses carry their ids and may
// leave in any order. A writer waits until its line is written — the
// backpressure that keeps a slow client from piling answers up in memory —
// but never on a lock held across write(2): Abandon releases every writer
// at once, whatever the client does. When the client closes our stdout —
// seen by a failed write, or by watching the pipe for a hangup while
// nothing is written (hangup_linux.go) — nothing more is written and
// OutputDead is closed.
//
// It imports rpc/wire and rpc/transport, never the server.
package stdio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Options configure a stdio connection.
type Options struct {
	MaxLine int // bytes per request line
	// ModernEnabled says whether the server speaks 2026-07-28 now (its
	// configuration may change while it runs).
	ModernEnabled func() bool
	// SkipBlank, when set and true, drops a line of whitespace unanswered
	// (the 2026 bash SDK's dialect) instead of answering -32700.
	SkipBlank func() bool
	// Busy reports whether a call is running now. A fragment the input
	// ends in that is not JSON, and that began while a call ran, is
	// dropped with a warning and no answer, as the 2026 bash SDK dropped
	// it; one that began while idle is answered -32700.
	Busy func() bool
	Log  *zap.Logger
}

// Conn is the one connection of a stdio server.
type Conn struct {
	opt     Options
	lr      *wire.LineReader
	session *transport.Session
	out     *output
	queue   []*transport.Request // a batch's members not yet read (batch)
	busyAt  bool                 // a call ran when the current fragment began (Options.Busy)
}

// New reads requests from r and writes to w. When w is a file (stdout),
// it is watched for the client hanging up.
func New(r io.Reader, w io.Writer, opt Options) *Conn {
	if opt.MaxLine <= 0 {
		opt.MaxLine = 16 << 20
	}
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.ModernEnabled == nil {
		opt.ModernEnabled = func() bool { return true }
	}
	c := &Conn{opt: opt, lr: wire.NewLineReader(r, opt.MaxLine), session: transport.NewSession(), out: newOutput(w, opt.Log)}
	if opt.Busy != nil {
		c.lr.OnPartial = func() { c.busyAt = opt.Busy() }
	}
	if f, ok := w.(*os.File); ok {
		watchHangup(f, func() {
			opt.Log.Warn("client hung up our stdout")
			c.out.fail()
		})
	}
	return c
}

// OutputDead is closed when the client closed our stdout (a write failed
// with EPIPE, or the pipe hung up while nothing was being written); the
// caller should shut down.
func (c *Conn) OutputDead() <-chan struct{} { return c.out.dead }

// Abandon gives up on a client that does not read: writers waiting for
// their line return at once, and nothing more is written.
func (c *Conn) Abandon() { c.out.abandon() }

// Session is the process's one legacy session.
func (c *Conn) Session() *transport.Session { return c.session }

// Read returns the next request. Rejected lines are answered here; empty
// lines (the SDK skipped them) and silently dropped lines are skipped; a
// client's response comes back with Msg.IsResponse set, for the server to
// match with the request it sent.
func (c *Conn) Read() (*transport.Request, error) {
	for {
		if len(c.queue) > 0 {
			req := c.queue[0]
			c.queue = c.queue[1:]
			return req, nil
		}
		line, err := c.lr.Next()
		var le *wire.LineError
		switch {
		case errors.As(err, &le):
			c.opt.Log.Warn("request line rejected", zap.String("reason", le.Kind), zap.Int64("bytes", le.Len))
			msg := "Parse error: Invalid JSON (the line is not valid UTF-8)"
			if le.Kind == wire.LineTooLong {
				msg = fmt.Sprintf("Parse error: line longer than the %d-byte limit", c.opt.MaxLine)
			}
			c.write(wire.ErrorLine(json.RawMessage("null"), wire.CodeParse, msg, nil))
			continue
		case err != nil:
			return nil, err
		case len(line) == 0:
			continue // the SDK skips empty lines
		case c.opt.SkipBlank != nil && wire.Blank(line) && c.opt.SkipBlank():
			continue
		}
		msg, gerr := wire.Parse(line)
		if gerr != nil && c.batch(line) {
			continue
		}
		if gerr != nil && gerr.Code == wire.CodeParse && c.lr.Unterminated() && c.busyAt {
			c.opt.Log.Warn(fmt.Sprintf("Discarding a partial line of %d characters left by EOF", utf8.RuneCount(line)))
			continue
		}
		if gerr != nil {
			c.opt.Log.Warn(gerr.Sentence, zap.Int("code", gerr.Code), zap.String("message", gerr.Message))
			c.write(gerr.Line())
			continue
		}
		if msg == nil {
			continue
		}
		if msg.IsResponse {
			// An answer to a request the server sent (rpc/mcp ask.go).
			return &transport.Request{Msg: msg, Out: stream{c}}, nil
		}
		req := transport.Decode(msg, "", c.opt.ModernEnabled)
		if req.Era == transport.Legacy {
			req.Session = c.session
		}
		req.Out = stream{c}
		return req, nil
	}
}

// batch serves a line that is a JSON-RPC batch, once initialize has
// negotiated the one revision that has them; false for any other line (it
// keeps the gates' answer). The members are queued for Read; their answers
// leave as one array line, and a batch of notifications only is answered
// with nothing.
func (c *Conn) batch(line []byte) bool {
	if c.session.Version() != wire.BatchVersion {
		return false
	}
	members, ok := wire.Batch(line)
	if !ok {
		return false
	}
	if len(members) == 0 {
		c.opt.Log.Warn("empty JSON-RPC batch refused")
		c.write(wire.EmptyBatch())
		return true
	}
	reqs, refused := transport.SplitBatch(members, "", c.opt.ModernEnabled, func(s string) { c.opt.Log.Warn(s) })
	answers := 0
	for _, r := range reqs {
		if transport.Answers(r) {
			answers++
		}
	}
	b := transport.NewBatch(stream{c}, answers, refused)
	for _, r := range reqs {
		r.Session, r.Out = c.session, b.Member()
	}
	c.queue = append(c.queue, reqs...)
	return true
}

// Notify writes a notification that belongs to no request.
func (c *Conn) Notify(method string, params json.RawMessage) bool {
	c.write(wire.NotificationLine(method, params))
	return true
}

// write sends one line and returns once it is written or given up on.
func (c *Conn) write(line []byte) { c.out.write(line) }

// Flush waits until every line queued so far is written, the output is
// over, or d has passed: before the process exits, small answers queued
// without their writers waiting still reach a client that reads.
func (c *Conn) Flush(d time.Duration) bool {
	done := make(chan bool, 1)
	go func() { done <- c.out.flush() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case ok := <-done:
		return ok
	case <-t.C:
		return false
	}
}

// stream is a request's output on stdio: lines on the one stdout.
type stream struct{ c *Conn }

func (s stream) Notify(method string, params json.RawMessage) {
	s.c.write(wire.NotificationLine(method, params))
}
func (s stream) Respond(r transport.Response) { s.c.write(r.Line()) }

// Live: stdio's one connection carries everything while it lasts.
func (s stream) Live() bool { return true }

// Request sends a server-to-client request: stdio has one connection, on
// which it always goes out.
func (s stream) Request(id json.RawMessage, method string, params json.RawMessage) bool {
	return s.c.out.write(wire.RequestLine(id, method, params))
}
func (s stream) Finish() {}
