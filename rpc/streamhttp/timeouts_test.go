package streamhttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// bound is how long a step that must be prompt may take before the test
// calls it a hang (never a timing assertion).
const bound = 10 * time.Second

// testServer serves the handler with a short I/O timeout; serve plays
// the MCP server for each Connection.
func testServer(t *testing.T, timeout time.Duration, serve func(transport.Connection)) (*httptest.Server, *Handler) {
	t.Helper()
	h := New(Options{Path: "/mcp", Loopback: true, IOTimeout: timeout, BodyTimeout: bound,
		ModernEnabled: func() bool { return false }, Stopping: func() bool { return false },
		Serve: func(c transport.Connection) error { serve(c); return nil }})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, h
}

// respondWith reads the one request of a Connection and answers it with
// result after first sending the given notifications, reporting when
// Respond returned.
func respondWith(result json.RawMessage, notify int, wait time.Duration, returned chan<- *transport.Request) func(transport.Connection) {
	return func(c transport.Connection) {
		req, err := c.Read()
		if err != nil {
			return
		}
		for i := 0; i < notify; i++ {
			req.Out.Notify("notifications/progress", json.RawMessage(`{"progressToken":1,"progress":1}`))
		}
		time.Sleep(wait) // the scenario: a call that stays quiet this long
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Body: wire.Raw(result)})
		if returned != nil {
			returned <- req
		}
	}
}

const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// A body that stops arriving is answered 408 after the I/O timeout.
func TestStalledBodyIsTimedOut(t *testing.T) {
	ts, _ := testServer(t, 200*time.Millisecond, respondWith(json.RawMessage(`{}`), 0, 0, nil))
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", ts.Listener.Addr())
	c.SetReadDeadline(time.Now().Add(bound))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 408") {
		t.Fatalf("a stalled body was answered %q (%v), want 408", line, err)
	}
}

// bigResult is a result larger than any socket buffer.
func bigResult() json.RawMessage {
	return json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("a", 16<<20) + `"}],"isError":false}`)
}

// slowClient posts body and returns the response with its body unread,
// over a connection with a 4 KiB receive buffer.
func slowClient(t *testing.T, url, body string) *http.Response {
	t.Helper()
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// A client that takes nothing for the I/O timeout loses its answer: the
// write fails, Respond returns (a call's slot is freed), the request's
// Gone fires (its call is cancelled) and what it then reads is cut short.
func TestStalledResponseIsCut(t *testing.T) {
	returned := make(chan *transport.Request, 1)
	ts, _ := testServer(t, 200*time.Millisecond, respondWith(bigResult(), 0, 0, returned))
	resp := slowClient(t, ts.URL+"/mcp", ping)
	var req *transport.Request
	select {
	case req = <-returned:
	case <-time.After(bound):
		t.Fatal("Respond still blocked on a client that does not read")
	}
	select {
	case <-req.Gone:
	case <-time.After(bound):
		t.Fatal("the request's Gone did not fire after its stream broke")
	}
	if n, err := io.Copy(io.Discard, resp.Body); err == nil {
		t.Fatalf("the client got its whole answer (%d bytes)", n)
	}
}

// Abandon (shutdown) ends a write stuck on a client that does not read,
// long before the I/O timeout.
func TestAbandonEndsStuckWrite(t *testing.T) {
	returned := make(chan *transport.Request, 1)
	conns := make(chan transport.Connection, 1)
	ts, _ := testServer(t, time.Hour, func(c transport.Connection) {
		conns <- c
		respondWith(bigResult(), 0, 0, returned)(c)
	})
	slowClient(t, ts.URL+"/mcp", ping)
	c := <-conns
	select {
	case <-returned:
		t.Fatal("a 16 MiB answer was written to a client that does not read")
	default:
	}
	c.Abandon()
	select {
	case <-returned:
	case <-time.After(bound):
		t.Fatal("Respond still blocked after Abandon")
	}
}

// A stream quiet for longer than the I/O timeout between its writes is
// not cut (the timeout is per write, never for the whole response), and
// the connection serves the next request.
func TestQuietStreamIsNotCut(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, accept := range []string{"application/json, text/event-stream", "application/json"} {
		t.Run(accept, func(t *testing.T) {
			ts, _ := testServer(t, timeout, respondWith(json.RawMessage(`{"quiet":true}`), 1, 3*timeout, nil))
			client := &http.Client{Transport: &http.Transport{}}
			post := func() (string, bool) {
				var reused bool
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(ping))
				req.Header.Set("Accept", accept)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("reading the answer: %v (%q)", err, b)
				}
				return string(b), reused
			}
			if b, _ := post(); !strings.Contains(b, `{"quiet":true}`) {
				t.Fatalf("the quiet call's answer: %q", b)
			}
			if b, reused := post(); !strings.Contains(b, `{"quiet":true}`) || !reused {
				t.Fatalf("the next request: reused %v, %q", reused, b)
			}
		})
	}
}
