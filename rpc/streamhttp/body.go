package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"
)

// smallBody is what any request may read without a turn: nearly every
// MCP request is far smaller. Past it a body is large, and at most
// Options.MaxLargeBodies large bodies are read at once.
const smallBody = 64 << 10

// bodyError is why a body was not read: the HTTP status and its message.
type bodyError struct {
	status int
	msg    string
}

// readBody reads a POST body under three bounds: every read must bring
// bytes within the I/O timeout and the whole body must arrive within the
// body timeout (a body that stalls no longer holds its connection and its
// buffer forever); and past smallBody it waits for one of the few turns
// for large bodies, so slow clients cannot make the daemon hold many large
// buffers at once. release gives the turn back once the body is parsed.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), berr *bodyError) {
	release = func() {}
	rc := http.NewResponseController(w)
	defer func() {
		// A body read to its end: the connection's own read after it (which
		// notices a client that leaves while its call runs) must not inherit
		// a deadline. A body not read to its end is answered with
		// Connection: close, and what is left of it must not be read either:
		// net/http drains up to 256 KiB of it once the handler returns, with
		// whatever deadline is set — none would keep a stalled client's
		// connection (and, with --http-connection, the process) forever. A
		// deadline in the past fails that drain at once and the connection
		// ends after the answer.
		if berr != nil {
			_ = rc.SetReadDeadline(time.Unix(1, 0))
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
	}()
	end := time.Now().Add(h.opt.BodyTimeout)
	tb := &timedBody{r: r.Body, rc: rc, stall: h.opt.IOTimeout, end: end}
	limit := h.opt.MaxBody
	known := r.ContentLength >= 0 && r.ContentLength <= int64(limit)
	hint := smallBody
	if known && r.ContentLength < smallBody {
		hint = int(r.ContentLength)
	}
	body, err := readAtMost(tb, make([]byte, 0, hint+1), smallBody)
	if err == nil {
		// More may follow: a large body waits for its turn first.
		if !h.takeLarge(r.Context(), end) {
			return nil, release, &bodyError{http.StatusServiceUnavailable, "Service Unavailable: too many large requests at once"}
		}
		release = h.releaseLarge
		if known {
			body = slices.Grow(body, int(r.ContentLength)-len(body)+1)
		}
		if body, err = readAtMost(tb, body, limit+1); err == nil {
			return nil, release, &bodyError{http.StatusRequestEntityTooLarge, fmt.Sprintf("Parse error: body longer than the %d-byte limit", limit)}
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF):
		return body, release, nil
	case errors.As(err, &ne) && ne.Timeout():
		return nil, release, &bodyError{http.StatusRequestTimeout, "Request Timeout: the body did not arrive in time"}
	}
	return nil, release, &bodyError{http.StatusBadRequest, "Bad Request: " + err.Error()}
}

// readAtMost appends to buf from r until EOF (returned as io.EOF), an
// error, or limit bytes (nil: more may follow). A buf sized to the
// declared length plus one is never grown.
func readAtMost(r io.Reader, buf []byte, limit int) ([]byte, error) {
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(limit-len(buf), max(cap(buf), 512)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// timedBody gives every read its own deadline: the I/O timeout from now,
// and never past the body's end.
type timedBody struct {
	r     io.Reader
	rc    *http.ResponseController
	stall time.Duration
	end   time.Time
}

func (b *timedBody) Read(p []byte) (int, error) {
	d := time.Now().Add(b.stall)
	if d.After(b.end) {
		d = b.end
	}
	_ = b.rc.SetReadDeadline(d) // unsupported: the server's own limits apply
	return b.r.Read(p)
}

// takeLarge waits for a turn to read a large body, until the client
// leaves or the body's time is up.
func (h *Handler) takeLarge(ctx context.Context, end time.Time) bool {
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case h.large <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

func (h *Handler) releaseLarge() { <-h.large }
