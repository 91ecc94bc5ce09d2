package tests

import (
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"

	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// eofServer serves a tool that runs until GATE exists.
func eofServer(t *testing.T) (*harness.Daemon, string) {
	t.Helper()
	marks := t.TempDir()
	dir := harness.WriteFiles(t, map[string]string{
		"tools.json": harness.ToolsJSON("hold"),
		"server.sh": `tool_hold() { : >"$MARKS/started"; until [ -e "$MARKS/gate" ]; do sleep 0.05; done; echo held; }
`,
	})
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"MARKS=" + marks}})
	s.RoundTrip(harness.InitLine)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, marks
}

// An unterminated fragment the input ends in, begun while a call was
// running, gets no answer (as the 2026 bash SDK, which joins such bytes
// and drops what does not parse): the daemon logs a warning with its
// length in characters, and the running call is still answered. A
// fragment that begins while nothing runs keeps its -32700.
func TestEOFPartialLineDuringCallDropped(t *testing.T) {
	s, marks := eofServer(t)
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{}}}`)
	proctest.WaitUntil(t, harness.Deadline(t), "the call to start", func() (bool, string) {
		_, err := os.Stat(filepath.Join(marks, "started"))
		return err == nil, ""
	})
	frag := `{"jsonrpc":"2.0","id":2,"method":"é`
	if _, err := io.WriteString(s.Stdin, frag); err != nil {
		t.Fatal(err)
	}
	s.Stdin.Close()
	want := "Discarding a partial line of 35 characters left by EOF"
	proctest.WaitUntil(t, harness.Deadline(t), "the warning", func() (bool, string) {
		return strings.Contains(s.Stderr.String(), want), s.Stderr.String()
	})
	os.WriteFile(filepath.Join(marks, "gate"), nil, 0o644)
	if got := string(s.Recv()); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"held"}],"isError":false}}` {
		t.Errorf("the running call: %s", got)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v", ee)
	}
	for line := range s.Lines {
		t.Errorf("answered the fragment: %s", line)
	}
}

func TestEOFPartialLineWhileIdleAnswered(t *testing.T) {
	s, _ := eofServer(t)
	s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	io.WriteString(s.Stdin, `{"jsonrpc":"2.0","id":2,"meth`)
	s.Stdin.Close()
	if got := string(s.Recv()); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}` {
		t.Errorf("idle fragment: %s", got)
	}
	s.CloseAndWait()
	if strings.Contains(s.Stderr.String(), "Discarding a partial line") {
		t.Errorf("idle fragment discarded:\n%s", s.Stderr.String())
	}
}
