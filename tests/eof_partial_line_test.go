package tests

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// eofServer serves a tool that runs until GATE exists.
func eofServer(t *testing.T) (*server, string) {
	t.Helper()
	marks := t.TempDir()
	dir := writeServer(t, map[string]string{
		"tools.json": toolsJSON("hold"),
		"server.sh": `tool_hold() { : >"$MARKS/started"; until [ -e "$MARKS/gate" ]; do sleep 0.05; done; echo held; }
`,
	})
	s := startServer(t, serverOpt{args: []string{filepath.Join(dir, "server.sh")}, env: []string{"MARKS=" + marks}})
	s.roundTrip(initLine)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, marks
}

// An unterminated fragment the input ends in, begun while a call was
// running, gets no answer (as the 2026 bash SDK, which joins such bytes
// and drops what does not parse): the daemon logs a warning with its
// length in characters, and the running call is still answered. A
// fragment that begins while nothing runs keeps its -32700.
func TestEOFPartialLineDuringCallDropped(t *testing.T) {
	s, marks := eofServer(t)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{}}}`)
	proctest.WaitUntil(t, deadline(t), "the call to start", func() (bool, string) {
		_, err := os.Stat(filepath.Join(marks, "started"))
		return err == nil, ""
	})
	frag := `{"jsonrpc":"2.0","id":2,"method":"é`
	if _, err := io.WriteString(s.stdin, frag); err != nil {
		t.Fatal(err)
	}
	s.stdin.Close()
	want := "Discarding a partial line of 35 characters left by EOF"
	proctest.WaitUntil(t, deadline(t), "the warning", func() (bool, string) {
		return strings.Contains(s.stderr.String(), want), s.stderr.String()
	})
	os.WriteFile(filepath.Join(marks, "gate"), nil, 0o644)
	if got := string(s.recv()); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"held"}],"isError":false}}` {
		t.Errorf("the running call: %s", got)
	}
	if ee := s.closeAndWait(); ee != nil {
		t.Errorf("exit: %v", ee)
	}
	for line := range s.lines {
		t.Errorf("answered the fragment: %s", line)
	}
}

func TestEOFPartialLineWhileIdleAnswered(t *testing.T) {
	s, _ := eofServer(t)
	s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	io.WriteString(s.stdin, `{"jsonrpc":"2.0","id":2,"meth`)
	s.stdin.Close()
	if got := string(s.recv()); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}` {
		t.Errorf("idle fragment: %s", got)
	}
	s.closeAndWait()
	if strings.Contains(s.stderr.String(), "Discarding a partial line") {
		t.Errorf("idle fragment discarded:\n%s", s.stderr.String())
	}
}
