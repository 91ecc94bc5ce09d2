package tests

// Slow clients over Streamable HTTP (issue 10, items 3 and 9): a client
// that stops reading its response, a request body that stalls, many large
// bodies at once, and — the trap a write timeout must avoid — a long call
// whose stream stays quiet for longer than the write timeout. Helpers
// shared with the stdio side are in reliability_slowclient_test.go.
//
// The daemon's HTTP timeouts are fixed (10 s: a body read that gets no
// byte, a response write the client does not take), so the tests that
// exercise them take that long; the rest is facts (a tool's note, bytes
// received, the daemon's answer to another client).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// scStall is the daemon's HTTP I/O timeout: how long a body read or a
// response write may go without progress.
const scStall = 10 * time.Second

// scServer serves SERVER.sh (rfLib + body) and tools.json, with flags,
// marked, its tools finding their directory as $RF_DIR.
func scServer(body string, tools []string, flags ...string) harness.Options {
	return harness.Options{Files: map[string]string{"server.sh": rfLib + body, "tools.json": harness.ToolsJSON(tools...)},
		Flags: flags, DirEnv: "RF_DIR", TempDir: true, Log: true, Mark: "sc"}
}

// scHost is the host:port an HTTP daemon listens on.
func scHost(h *harness.HTTPDaemon) string {
	return strings.TrimSuffix(strings.TrimPrefix(h.URL, "http://"), "/mcp")
}

// scSlowReader is an HTTP client with a 4 KiB receive buffer that reads
// only when the test tells it to: a large response stalls at once.
func scSlowReader() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: true}}
}

// scExitWithin waits for the daemon to end at most bound after from.
func scExitWithin(t *testing.T, h *harness.HTTPDaemon, from time.Time, bound time.Duration, what string) time.Duration {
	t.Helper()
	select {
	case <-h.Done:
	case <-time.After(time.Until(from.Add(bound))):
		t.Fatalf("daemon still running %v after %s (bound %v)\n%s", time.Since(from).Round(time.Millisecond), what, bound, h.Stderr.String())
	}
	return time.Since(from)
}

// scBig prints 32 MiB and notes that it has.
const scBig = `tool_big() { head -c 33554432 /dev/zero | tr '\0' a; rf_note big.done; }
tool_quick() { echo quick; }
`

// Item 3 (scenario 23, HTTP): one client does not read its 32 MiB
// response, then SIGTERM. The write stuck on that client must not hold
// the shutdown: the daemon dies by SIGTERM within drain + grace + 5 s and
// leaves nothing running.
func TestSlowClientHTTPSIGTERM(t *testing.T) {
	const drain, grace = time.Second, time.Second
	h := harness.StartHTTP(t, scServer(scBig, []string{"big", "quick"}, "--drain", drain.String(), "--grace", grace.String(), "--output-cap", "33554432"))
	pid := h.Cmd.Process.Pid
	sampler := rlStartSampler(pid)
	resp := h.Post(t, scSlowReader(), "application/json, text/event-stream", rfCall("1", "big", `{}`))
	defer resp.Body.Close()
	rfLine(t, h.Dir, "big.done")
	if err := h.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	took := scExitWithin(t, h, sent, drain+grace+5*time.Second, "SIGTERM with a client not reading")
	peak, _ := sampler.finish()
	if ws := h.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("daemon ended with %v, want death by SIGTERM", h.Cmd.ProcessState)
	}
	rlWaitNoneLeft(t, time.Now().Add(time.Second+rfScanSlack), rlMark{harness.MarkKey, h.Mark}, pid)
	t.Logf("died %v after SIGTERM with a client not reading its 32 MiB; peak VmRSS %.1f MiB", took.Round(time.Millisecond), float64(peak.rssKiB)/1024)
}

// Item 9: a client that stops reading its response loses it after the
// write timeout: the connection is cut, the call's slot is freed (the
// next call, with --max-concurrency 1, is answered) and what the client
// then reads is a truncated body.
func TestHTTPStalledResponseIsCut(t *testing.T) {
	h := harness.StartHTTP(t, scServer(scBig, []string{"big", "quick"}, "--max-concurrency", "1", "--output-cap", "33554432"))
	resp := h.Post(t, scSlowReader(), "application/json", rfCall("1", "big", `{}`))
	defer resp.Body.Close()
	rfLine(t, h.Dir, "big.done")
	stalled := time.Now()
	quick := h.Post(t, &http.Client{}, "application/json", rfCall("2", "quick", `{}`))
	b, err := io.ReadAll(quick.Body)
	quick.Body.Close()
	if err != nil || !strings.Contains(string(b), `"quick"`) {
		t.Fatalf("the next call: %v %q", err, b)
	}
	t.Logf("the next call was answered %v after the first client stopped reading", time.Since(stalled).Round(time.Millisecond))
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil {
		t.Fatalf("the client that stopped reading got its whole response (%d bytes): the write was never cut", n)
	}
	t.Logf("the client that stopped reading got %d bytes, then %v", n, err)
}

// scCut is a stalled client's answer: its status line and how long after
// its last byte it came.
type scCut struct {
	status string
	after  time.Duration
}

// scStalledBodies opens n connections that each declare a body of
// declared bytes, send sent of them and stop. Each reports the answer it
// then gets on cuts; first says when the first one had sent all it will
// (zero before). stop closes them all.
func scStalledBodies(t *testing.T, host string, n, declared, sent int) (cuts <-chan scCut, first func() time.Time, stop func()) {
	t.Helper()
	c := make(chan scCut, n)
	var mu sync.Mutex
	var at time.Time
	var conns []net.Conn
	var wg sync.WaitGroup
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for i := 0; i < n; i++ {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\n\r\n", host, declared)
			for n := 0; n < sent; n += len(chunk) {
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
			done := time.Now()
			mu.Lock()
			if at.IsZero() {
				at = done
			}
			mu.Unlock()
			line, _ := bufio.NewReader(conn).ReadString('\n')
			c <- scCut{strings.TrimSpace(line), time.Since(done)}
		}()
	}
	first = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return at
	}
	stop = func() {
		for _, conn := range conns {
			conn.Close()
		}
		wg.Wait()
	}
	return c, first, stop
}

// Item 9: a request body that stalls is cut after the body timeout (408),
// and at most a few large bodies are read at once: eight clients each
// send 15 of a declared 16 MiB and stop; the daemon's memory stays under
// the output cap + 50 MiB. The wait is bounded from the first client that
// stopped sending: the body timeout + 5 s.
func TestHTTPStalledBodies(t *testing.T) {
	const clients = 8
	h := harness.StartHTTP(t, scServer(scBig, []string{"big", "quick"}))
	pid := h.Cmd.Process.Pid
	sampler := rlStartSampler(pid)
	cuts, first, stop := scStalledBodies(t, scHost(h), clients, 16<<20, 15<<20)
	defer stop()
	var got scCut
	var since time.Duration
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case got = <-cuts:
			waiting = false
		case <-tick.C:
		}
		if f := first(); !f.IsZero() {
			since = time.Since(f)
		}
		if waiting && since > scStall+5*time.Second {
			t.Fatalf("no stalled body was cut %v after the first client stopped sending (body timeout %v)", since.Round(time.Millisecond), scStall)
		}
		if waiting && !time.Now().Before(harness.Deadline(t)) {
			t.Fatal("no client finished sending before the test's deadline")
		}
	}
	peak, _ := sampler.finish()
	hwm := rlMustSample(t, pid).hwmKiB
	t.Logf("a client cut %v after its last byte (%v after the first client's): %q; daemon VmHWM %.1f MiB, peak VmRSS %.1f MiB",
		got.after.Round(time.Millisecond), since.Round(time.Millisecond), got.status, float64(hwm)/1024, float64(peak.rssKiB)/1024)
	if !strings.HasPrefix(got.status, "HTTP/1.1 408") {
		t.Errorf("a stalled body was answered %q, want 408", got.status)
	}
	if limit := int64(16+50) << 10; hwm >= limit {
		t.Errorf("daemon VmHWM %.1f MiB with %d large bodies arriving, want < cap + 50 MiB = %d MiB", float64(hwm)/1024, clients, limit>>10)
	}
	// The daemon still serves.
	resp := h.Post(t, &http.Client{}, "application/json", rfCall(`"q"`, "quick", `{}`))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"quick"`) {
		t.Fatalf("a call after the stalled bodies: %q", b)
	}
}

// Item 9's trap: a long call whose response stays quiet for longer than
// the write timeout — an SSE stream after its first progress event, and a
// plain JSON answer — is delivered whole, and the connection is reused for
// the next request (no stale deadline left on it).
func TestHTTPQuietLongCallIsNotCut(t *testing.T) {
	body := `tool_quiet() { mcp_progress 1 2 started; sleep ` + fmt.Sprint(int((scStall+2*time.Second)/time.Second)) + `; echo quiet done; }
tool_quick() { echo quick; }
`
	h := harness.StartHTTP(t, scServer(body, []string{"quiet", "quick"}))
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quiet","arguments":{},"_meta":{"progressToken":"t"}}}`
	for _, accept := range []string{"application/json, text/event-stream", "application/json"} {
		t.Run(accept, func(t *testing.T) {
			t.Parallel()
			client := &http.Client{Transport: &http.Transport{}}
			resp := h.Post(t, client, accept, call)
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !strings.Contains(string(b), `quiet done`) {
				t.Fatalf("the quiet call (%s): %v; got %q", resp.Header.Get("Content-Type"), err, b)
			}
			if strings.Contains(accept, "event-stream") && !strings.Contains(string(b), `notifications/progress`) {
				t.Fatalf("no progress event on the SSE stream: %q", b)
			}
			var reused bool
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			resp, err = client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			if err != nil || json.Unmarshal(bytes.TrimSpace(b), &r) != nil || string(r.Result) != "{}" {
				t.Fatalf("ping after the quiet call: %v %q", err, b)
			}
			if !reused {
				t.Errorf("the connection of the quiet call was not reused for the next request")
			}
		})
	}
}
