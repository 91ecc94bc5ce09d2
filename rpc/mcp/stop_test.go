package mcp_test

import (
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/streamhttp"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// stuckConn is a client that does not read: Respond blocks until the
// connection is abandoned.
type stuckConn struct {
	reqs      chan *transport.Request
	responses chan transport.Response // every Respond, as it starts
	abandoned chan struct{}
	once      sync.Once
}

func newStuckConn() *stuckConn {
	return &stuckConn{reqs: make(chan *transport.Request, 8), responses: make(chan transport.Response, 8), abandoned: make(chan struct{})}
}

func (c *stuckConn) send(t *testing.T, line string) {
	t.Helper()
	msg, gerr := wire.Parse([]byte(line))
	if gerr != nil {
		t.Fatal(gerr.Message)
	}
	req := transport.Decode(msg, "", func() bool { return false })
	req.Session = transport.NewSession()
	req.Out = stuckStream{c}
	c.reqs <- req
}

func (c *stuckConn) Read() (*transport.Request, error) {
	if req, ok := <-c.reqs; ok {
		return req, nil
	}
	return nil, io.EOF
}
func (c *stuckConn) Notify(string, json.RawMessage) bool { return false }
func (c *stuckConn) Session() *transport.Session         { return nil }
func (c *stuckConn) Abandon()                            { c.once.Do(func() { close(c.abandoned) }) }

type stuckStream struct{ c *stuckConn }

func (s stuckStream) Notify(string, json.RawMessage) {}
func (s stuckStream) Finish()                        {}
func (s stuckStream) Respond(r transport.Response) {
	s.c.responses <- r
	if r.Err == nil {
		<-s.c.abandoned // an answer the client never takes
	}
}

func within[T any](t *testing.T, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10 s", what)
	}
	var zero T
	return zero
}

// Stop is bounded by a client that never takes its answer: once the
// answers being written had their time, the connection is abandoned and
// Stop returns.
func TestStopAbandonsAnswersNotTaken(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	c := newStuckConn()
	go f.srv.Serve(c)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{}}}`)
	if r := within(t, "the call's answer", c.responses); r.Err != nil {
		t.Fatalf("the call failed: %v", r.Err)
	}
	stopped := make(chan struct{})
	go func() { f.srv.Stop(0); close(stopped) }()
	within(t, "Stop with an answer the client never takes", stopped)
	select {
	case <-c.abandoned:
	default:
		t.Fatal("Stop returned without abandoning the connection")
	}
}

// From Stop on, every request is answered with a shutting-down error
// while the calls in flight drain.
func TestRequestsDuringStopAreAnswered(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	c := newStuckConn()
	go f.srv.Serve(c)
	c.send(t, `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	waitFile(t, f.dir+"/ready")
	stopped := make(chan struct{})
	go func() { f.srv.Stop(time.Hour); close(stopped) }()
	for !f.srv.Stopping() {
		time.Sleep(time.Millisecond) // polling a flag, not synchronising
	}
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	r := within(t, "an answer to a ping during the drain", c.responses)
	if string(r.ID) != "2" || r.Err == nil || r.Err.Code != wire.CodeServerClosing {
		t.Fatalf("ping during the drain: %s %+v, want error %d", r.ID, r.Err, wire.CodeServerClosing)
	}
	select {
	case <-stopped:
		t.Fatal("Stop returned while a call was still draining")
	default:
	}
}
