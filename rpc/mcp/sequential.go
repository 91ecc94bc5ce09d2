package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
)

// Sequential mode (Options.Sequential, --sequential): requests are answered
// one at a time, in the order they arrive, as bash-mcp-sdk's strictly
// sequential loop answered them — a ping sent during a call is answered
// after that call. What must still work while a call runs is what worked
// under the SDK (its behaviour 19): a notifications/cancelled naming the
// running call cancels it at once; every other line waits its turn and is
// handled after the call's answer, in order (a cancellation of a call that
// had not started yet finds nothing in flight by then, and is dropped).
//
// Per connection, a reader goroutine hands requests to the connection's
// loop (readSequential), which handles one and, until it is answered,
// takes in what arrives next: a cancellation of the running call is acted
// on, the rest is queued (at most maxQueued; beyond that the reader, and so
// the client, waits). Across connections (HTTP: sessions, and stateless
// requests each a connection of their own) one request is handled at a
// time server-wide, in the order they reach the gate (s.turn, FIFO as Go's
// channel senders are); a request whose HTTP client goes away while it
// waits is dropped.

// maxQueued bounds the requests held while a call runs: each may be a
// line of up to --max-line bytes.
const maxQueued = 64

// received is one result of a connection's Read.
type received struct {
	req *transport.Request
	err error // io.EOF at the end
}

// readSequential serves one connection in sequential mode; it returns when
// the client is done and everything it sent is answered (or, after Stop,
// refused).
func (c *session) readSequential() error {
	s := c.srv
	in := make(chan received)
	stopReading := make(chan struct{})
	defer close(stopReading)
	go func() {
		for {
			req, err := c.t.Read()
			if err == nil && s.clientResponse(req) {
				// At once, not in turn: the call it answers is running.
				continue
			}
			select {
			case in <- received{req, err}:
			case <-stopReading:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var queue []*transport.Request
	var end error // the reader's last word; nil while it reads
	for {
		var req *transport.Request
		switch {
		case len(queue) > 0:
			req, queue = queue[0], queue[1:]
		case end != nil:
			if errors.Is(end, io.EOF) {
				return nil
			}
			return end
		default:
			r := <-in
			if r.err != nil {
				end = r.err
				continue
			}
			req = r.req
		}
		done := c.handleInTurn(req)
		// Until it is answered: cancellations of the running call act now,
		// everything else waits its turn.
		for done != nil {
			var recv <-chan received
			if end == nil && len(queue) < maxQueued {
				recv = in
			}
			select {
			case <-done:
				done = nil
			case r := <-recv:
				switch {
				case r.err != nil:
					end = r.err
				case c.cancelsRunning(r.req):
					c.notification(r.req)
				default:
					queue = append(queue, r.req)
				}
			}
		}
	}
}

// handleInTurn handles one request when its turn comes and returns a
// channel closed once it is answered (nil when nothing is to wait for: a
// notification, a request refused or dropped).
func (c *session) handleInTurn(req *transport.Request) <-chan struct{} {
	s := c.srv
	if !req.Msg.HasID {
		c.handle(req)
		return nil
	}
	if s.Stopping() {
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
		return nil
	}
	select {
	case s.turn <- struct{}{}:
	case <-req.Gone: // an HTTP client that left while waiting
		req.Out.Finish()
		return nil
	}
	if s.Stopping() { // Stop began while it waited
		<-s.turn
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
		return nil
	}
	done := make(chan struct{})
	answered := &answeredStream{Stream: req.Out, done: done}
	own := *req
	own.Out = answered
	c.handle(&own)
	release := make(chan struct{})
	go func() {
		<-done
		<-s.turn
		close(release)
	}()
	return release
}

// cancelsRunning reports whether req is a notifications/cancelled naming a
// call in flight on c (in sequential mode: the running one).
func (c *session) cancelsRunning(req *transport.Request) bool {
	if req.Msg.HasID || req.Msg.Method != "notifications/cancelled" {
		return false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(req.Msg.Params, &p) != nil || p.RequestID == nil {
		return false
	}
	key, ok := idKey(p.RequestID)
	if !ok {
		return false
	}
	running := false
	c.update(func(st *connState) { running = st.inflight[key] != nil })
	return running
}

// answeredStream closes done once its request is answered or finished
// without an answer.
type answeredStream struct {
	transport.Stream
	done chan struct{}
	once sync.Once
}

// Unwrap is the stream under a (transport.RequesterOf).
func (a *answeredStream) Unwrap() transport.Stream { return a.Stream }

func (a *answeredStream) Respond(r transport.Response) {
	a.Stream.Respond(r)
	a.once.Do(func() { close(a.done) })
}

func (a *answeredStream) Finish() {
	a.Stream.Finish()
	a.once.Do(func() { close(a.done) })
}
