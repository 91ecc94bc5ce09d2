package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// seqRunner runs "block" until released or cancelled (telling started
// first) and "echo" at once.
type seqRunner struct {
	started chan string // the call's id
	release chan struct{}
}

func (r *seqRunner) Call(ctx context.Context, req supervisor.Request) supervisor.Outcome {
	if req.Tool == "block" {
		r.started <- req.ID
		select {
		case <-r.release:
		case <-ctx.Done():
			return supervisor.Outcome{End: supervisor.Cancelled}
		}
	}
	return supervisor.Outcome{Output: []byte(req.Tool + " " + req.ID), Phase: "tool"}
}

// seqConn is a client: each line sent is read once (read tells when), and
// every answer (or Finish, as "finished ID") is recorded in order.
type seqConn struct {
	lines   chan string
	read    chan string
	answers chan string
}

func newSeqConn() *seqConn {
	return &seqConn{lines: make(chan string, 16), read: make(chan string, 16), answers: make(chan string, 16)}
}

func (c *seqConn) Read() (*transport.Request, error) {
	line, ok := <-c.lines
	if !ok {
		return nil, io.EOF
	}
	msg, gerr := wire.Parse([]byte(line))
	if gerr != nil {
		panic(gerr.Message)
	}
	req := transport.Decode(msg, "", func() bool { return false })
	req.Session = transport.NewSession()
	req.Out = seqStream{c, string(msg.ID)}
	c.read <- line
	return req, nil
}
func (c *seqConn) Notify(string, json.RawMessage) bool { return false }
func (c *seqConn) Session() *transport.Session         { return nil }
func (c *seqConn) Abandon()                            {}

// sendRead sends a line and waits until the server has read it.
func (c *seqConn) sendRead(t *testing.T, line string) {
	t.Helper()
	c.lines <- line
	if got := within(t, "the server to read "+line, c.read); got != line {
		t.Fatalf("read %s, want %s", got, line)
	}
}

type seqStream struct {
	c  *seqConn
	id string
}

func (s seqStream) Notify(string, json.RawMessage) {}
func (s seqStream) Finish()                        { s.c.answers <- "finished " + s.id }
func (s seqStream) Respond(r transport.Response) {
	s.c.answers <- strings.TrimSuffix(string(r.Line()), "\n")
}

func newSeqServer(t *testing.T) (*mcp.Server, *seqRunner) {
	t.Helper()
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	must(t, os.WriteFile(tools, []byte(`{"tools":[{"name":"block","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}}]}`), 0o644))
	r := &seqRunner{started: make(chan string, 4), release: make(chan struct{})}
	snap := &supervisor.Snapshot{Functions: map[string]bool{"tool_block": true, "tool_echo": true}}
	srv := mcp.New(mcp.Options{
		Catalog: catalog.NewSource(catalog.Options{ToolsFile: tools, ConfigFile: filepath.Join(dir, "config.json")}),
		Runner:  r, Snapshot: func() *supervisor.Snapshot { return snap }, Sequential: true, Log: zaptest.NewLogger(t),
	})
	return srv, r
}

const (
	seqBlock1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`
	seqPing2  = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	// seqLater is read after a line: once it is read, the concurrent
	// loop has answered a ping before it (it answers pings as it reads).
	seqLater = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// A request read while a call runs is answered after it.
func TestSequentialAnswersInArrivalOrder(t *testing.T) {
	srv, r := newSeqServer(t)
	c := newSeqConn()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(c) }()
	c.sendRead(t, seqBlock1)
	within(t, "the call to start", r.started)
	c.sendRead(t, seqPing2)
	c.sendRead(t, seqLater)
	close(r.release)
	if got := within(t, "the first answer", c.answers); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"block 1"}],"isError":false}}` {
		t.Fatalf("first answer %s", got)
	}
	if got := within(t, "the second answer", c.answers); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("second answer %s", got)
	}
	close(c.lines)
	if err := within(t, "Serve to return at EOF", served); err != nil {
		t.Fatal(err)
	}
}

// A cancellation of the running call overtakes the queue; one of a call
// still queued waits its turn and then finds nothing in flight.
func TestSequentialCancellation(t *testing.T) {
	srv, r := newSeqServer(t)
	c := newSeqConn()
	go srv.Serve(c)
	c.sendRead(t, seqBlock1)
	within(t, "the call to start", r.started)
	c.sendRead(t, seqPing2)
	c.sendRead(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	c.sendRead(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	c.sendRead(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	for _, want := range []string{
		"finished 1",
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"echo 3"}],"isError":false}}`,
	} {
		if got := within(t, "an answer", c.answers); got != want {
			t.Fatalf("answer %s, want %s", got, want)
		}
	}
	close(c.lines)
}

// Across connections (HTTP's requests) one request is handled at a time.
func TestSequentialAcrossConnections(t *testing.T) {
	srv, r := newSeqServer(t)
	a, b := newSeqConn(), newSeqConn()
	go srv.Serve(a)
	go srv.Serve(b)
	a.sendRead(t, seqBlock1)
	within(t, "the call to start", r.started)
	b.sendRead(t, seqPing2)
	b.sendRead(t, seqLater) // the ping was handled, had it not waited
	select {
	case got := <-b.answers:
		t.Fatalf("answered while a call runs on another connection: %s", got)
	default:
	}
	close(r.release)
	within(t, "the call's answer", a.answers)
	if got := within(t, "the ping's answer", b.answers); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("ping: %s", got)
	}
	close(a.lines)
	close(b.lines)
}

// Once Stop begins, what waits in the queue is answered as shutting down,
// and so is the call Stop ended.
func TestSequentialStop(t *testing.T) {
	srv, r := newSeqServer(t)
	c := newSeqConn()
	go srv.Serve(c)
	c.sendRead(t, seqBlock1)
	within(t, "the call to start", r.started)
	c.sendRead(t, seqPing2)
	go srv.Stop(0)
	// Shutdown ended the running call: it was accepted, so it is answered
	// (issue 23), with the same error.
	if got, want := within(t, "the ended call", c.answers), `{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"Server is shutting down"}}`; got != want {
		t.Fatalf("first: %s, want %s", got, want)
	}
	got := within(t, "the queued ping", c.answers)
	if want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32004,"message":"Server is shutting down"}}`; got != want {
		t.Fatalf("queued ping: %s, want %s", got, want)
	}
}
