package tests

// Issue 23, item 7: a request body that stalls gets its 408, and then the
// connection is closed — in one-connection mode (--http-connection: inetd,
// systemd Accept=yes, socat) the process exits, under --http the daemon
// holds no descriptor for that client any more. Before, net/http drained
// up to 256 KiB of the unread body with no deadline after the handler
// returned, so the process (or the descriptor and its goroutine) stayed
// for as long as the client kept the connection open.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// stalledPost is a POST whose body stops after its first byte.
func stalledPost(host string) string {
	return "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"
}

// read408ThenEOF reads the answer to a stalled body and then the
// connection's end; it fails if either does not come by the deadline.
func read408ThenEOF(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(harness.Deadline(t))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to the stalled body: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	if rest, err := io.ReadAll(br); err != nil {
		t.Fatalf("after the 408 the connection stayed open: %v (read %q)", err, rest)
	}
}

func TestHTTPStalledBodyClosesConnection(t *testing.T) {
	t.Run("one connection", func(t *testing.T) {
		dir := harness.WriteFiles(t, map[string]string{"server.sh": "tool_x() { :; }\n", "tools.json": harness.ToolsJSON("x")})
		child, conn := dr2SocketPair(t)
		p, _ := harness.RunCmd(t, harness.Options{Dir: dir, Flags: []string{"--http-connection"}, TempDir: true},
			func(cmd *exec.Cmd) { cmd.Stdin, cmd.Stdout = child, child })
		stderr := p.Stderr
		child.Close()
		if _, err := io.WriteString(conn, stalledPost("127.0.0.1:3000")); err != nil {
			t.Fatal(err)
		}
		read408ThenEOF(t, conn)
		proctest.WaitUntil(t, harness.Deadline(t), "the one-connection process to exit", func() (bool, string) {
			select {
			case <-p.Done:
				return true, ""
			default:
				return false, stderr.String()
			}
		})
	})
	t.Run("listener", func(t *testing.T) {
		h := harness.StartHTTP(t, scServer("tool_x() { :; }\n", []string{"x"}))
		pid := h.Cmd.Process.Pid
		before := socketFDs(t, pid)
		conn, err := net.Dial("tcp", scHost(h))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, stalledPost(scHost(h))); err != nil {
			t.Fatal(err)
		}
		read408ThenEOF(t, conn)
		proctest.WaitUntil(t, harness.Deadline(t), "the daemon to let go of the connection's descriptor", func() (bool, string) {
			n := socketFDs(t, pid)
			return n <= before, fmt.Sprintf("%d sockets, %d before the client", n, before)
		})
	})
}

// socketFDs counts the sockets among pid's descriptors.
func socketFDs(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
