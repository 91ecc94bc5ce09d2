// Package tests holds mcp-bashd's end-to-end tests: the real binary, real
// bash, real pipes, real clients. Every response line is checked against
// the official MCP schema of the negotiated revision.
package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
)

// binary is the mcp-bashd built once for the whole run.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-bashd-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcp-bashd")
	// A root daemon's sandboxed calls run as nobody and reach the binary
	// through $MCP_BASHD, as they would in /usr/local/bin.
	os.Chmod(dir, 0o755)
	build := exec.Command("go", "build", "-o", binary, "../cmd/mcp-bashd")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build mcp-bashd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoPath is a path relative to the repository root.
func repoPath(p string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", p)
}

// deadline is how long any single wait may take: generous, never a
// timing assertion, only a bound so a hang fails instead of blocking.
func deadline(t *testing.T) time.Time {
	d := time.Now().Add(60 * time.Second)
	if td, ok := t.Deadline(); ok && td.Before(d) {
		d = td.Add(-2 * time.Second)
	}
	return d
}

// server is a running mcp-bashd driven over its stdio.
type server struct {
	t        *testing.T
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan []byte
	stderr   *lockedWriter // the daemon's stderr; read with String
	revision string
	methods  sync.Map // id literal -> method, for schema checks
	done     chan struct{}
	waitErr  error
}

type serverOpt struct {
	args []string // after the binary: flags and the script
	env  []string
	dir  string
}

func startServer(t *testing.T, o serverOpt) *server {
	t.Helper()
	cmd := exec.Command(binary, o.args...)
	cmd.Env = append(os.Environ(), o.env...)
	cmd.Dir = o.dir
	return startPrepared(t, cmd)
}

func startPrepared(t *testing.T, cmd *exec.Cmd) *server {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 1024), stderr: &lockedWriter{w: &bytes.Buffer{}}, revision: "2024-11-05", done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go pumpLines(stdout, s.lines)
	go func() { s.waitErr = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// String is what was written so far (the writer may still be writing).
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// send writes one raw line (a newline is added).
func (s *server) send(line string) {
	s.t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
		s.methods.Store(string(m.ID), m.Method)
	}
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("write to server: %v", err)
	}
}

// recv returns the next line from the server, after checking it is valid
// JSON and valid against the official schema of the current revision.
func (s *server) recv() []byte {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("server closed stdout; stderr:\n%s", s.stderr.String())
		}
		s.check(line)
		return bytes.TrimSuffix(line, []byte("\n"))
	case <-time.After(time.Until(deadline(s.t))):
		s.t.Fatalf("no response before the deadline; stderr:\n%s", s.stderr.String())
	}
	return nil
}

func (s *server) check(line []byte) {
	s.t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		s.t.Fatalf("server wrote a line that is not JSON: %q", line)
	}
	method := ""
	if v, ok := s.methods.Load(string(m.ID)); ok {
		method = v.(string)
	}
	if method == "initialize" && m.Result != nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Result, &r)
		s.revision = r.ProtocolVersion
	}
	if !isKnownMethod(method) {
		method = ""
	}
	if err := mcpschema.Check(s.revision, method, line); err != nil {
		s.t.Errorf("response not valid for %s (%s): %v\n%s", s.revision, method, err, line)
	}
}

func isKnownMethod(m string) bool {
	switch m {
	case "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/templates/list", "prompts/list":
		return true
	case "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/get", "completion/complete", "subscriptions/listen":
		return true
	}
	return false
}

// roundTrip sends a request and returns the response line.
func (s *server) roundTrip(line string) string {
	s.t.Helper()
	s.send(line)
	return string(s.recv())
}

// closeAndWait closes stdin and waits for the exit, returning the status.
func (s *server) closeAndWait() *exec.ExitError {
	s.t.Helper()
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(time.Until(deadline(s.t))):
		s.t.Fatalf("server did not exit after stdin EOF; stderr:\n%s", s.stderr.String())
	}
	if s.waitErr == nil {
		return nil
	}
	ee, _ := s.waitErr.(*exec.ExitError)
	return ee
}

// writeServer writes files into a fresh directory and returns it.
func writeServer(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// toolsJSON declares tools with a permissive object schema.
func toolsJSON(names ...string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf(`{"name":%q,"description":"test tool","inputSchema":{"type":"object"}}`, n))
	}
	return `{"tools":[` + strings.Join(parts, ",") + `]}`
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`

// startServerCmd runs an executable server script directly.
func startServerCmd(t *testing.T, script string, env []string) *server {
	t.Helper()
	return startExec(t, script, nil, env)
}

func startExec(t *testing.T, path string, args, env []string) *server {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	return startPrepared(t, cmd)
}

// callResponse is a JSON-RPC response as the tests read it; each test file
// embeds it in its own type to hang its helpers on.
type callResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// pumpLines sends every line read from r (newline kept) to lines, and
// closes lines at EOF or on a read error.
func pumpLines(r io.Reader, lines chan<- []byte) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			lines <- line
		}
		if err != nil {
			close(lines)
			return
		}
	}
}
