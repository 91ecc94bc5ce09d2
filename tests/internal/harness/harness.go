// Package harness runs mcp-bashd for the end-to-end tests in tests/: the
// real binary, built once per run, started from files and options over
// stdio (Start) or HTTP (StartHTTP), driven with Send, Recv, Call and
// Request, and checked for processes left behind through /proc (WaitGone).
// Every line a stdio daemon writes is checked against the official MCP
// schema of the negotiated revision, so no test can read an invalid
// response without failing.
package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary is the mcp-bashd built once for the whole run by Main.
var Binary string

// Main builds mcp-bashd (static, as released) into a temporary directory,
// runs the tests and returns their exit code; a test package's TestMain
// is `os.Exit(harness.Main(m))`.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcp-bashd-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	Binary = filepath.Join(dir, "mcp-bashd")
	build := exec.Command("go", "build", "-o", Binary, "./cmd/mcp-bashd")
	build.Dir = RepoPath(".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build mcp-bashd:", err)
		return 1
	}
	return m.Run()
}

// RepoPath is a path relative to the repository root.
func RepoPath(p string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", p)
}

// Deadline is how long any single wait may take: generous, never a
// timing assertion, only a bound so a hang fails instead of blocking.
func Deadline(t testing.TB) time.Time {
	d := time.Now().Add(60 * time.Second)
	if td, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := td.Deadline(); ok && end.Before(d) {
			d = end.Add(-2 * time.Second)
		}
	}
	return d
}

// Output is a writer that may be read while it is written (a daemon's
// stderr, a client's stdout). The zero value is ready to use.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is what was written so far (the writer may still be writing).
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Len is how many bytes were written so far.
func (o *Output) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Len()
}

// WriteFiles writes files (name → body, names may hold directories) into a
// fresh directory and returns it. Names ending in .sh are executable.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	WriteFilesIn(t, dir, files)
	return dir
}

// WriteFilesIn writes files into dir, as WriteFiles does.
func WriteFilesIn(t testing.TB, dir string, files map[string]string) {
	t.Helper()
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
}

// ToolsJSON declares tools with a permissive object schema.
func ToolsJSON(names ...string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf(`{"name":%q,"description":"test tool","inputSchema":{"type":"object"}}`, n))
	}
	return `{"tools":[` + strings.Join(parts, ",") + `]}`
}

// InitLine is a 2025-11-25 initialize request with id 0.
const InitLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`

// Options say which daemon to start. With Args the daemon's argv is Args;
// otherwise it is Flags, the script, then "--" and ScriptArgs if any.
type Options struct {
	// Files are written into a fresh directory (Daemon.Dir) first.
	Files map[string]string
	// Script is the file to serve: relative to the files' directory, or
	// absolute. Empty with a "server.sh" among Files: that one.
	Script     string
	Flags      []string // the daemon's flags, before the script
	ScriptArgs []string // the script's own arguments, after "--"
	Args       []string // the whole argv after the binary, instead of the above
	Env        []string // added to this process's environment
	// CleanEnv drops the MCP_* variables of this process's environment
	// first, so a setting of the machine running the tests cannot leak in.
	CleanEnv bool
	WorkDir  string // the daemon's working directory
}

// command builds the exec.Cmd o describes, writing o.Files; it returns the
// files' directory ("" without Files).
func (o Options) command(t testing.TB, pre ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := ""
	if o.Files != nil {
		dir = WriteFiles(t, o.Files)
	}
	args := o.Args
	if args == nil {
		script := o.Script
		if _, ok := o.Files["server.sh"]; ok && script == "" {
			script = "server.sh"
		}
		if script != "" && !filepath.IsAbs(script) && dir != "" {
			script = filepath.Join(dir, script)
		}
		args = append(append([]string{}, o.Flags...), script)
		if len(o.ScriptArgs) > 0 {
			args = append(append(args, "--"), o.ScriptArgs...)
		}
	}
	cmd := exec.Command(Binary, append(append([]string{}, pre...), args...)...)
	cmd.Env = append(Environ(o.CleanEnv), o.Env...)
	cmd.Dir = o.WorkDir
	return cmd, dir
}

// Environ is this process's environment, without its MCP_* variables
// when clean.
func Environ(clean bool) []string {
	if !clean {
		return os.Environ()
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCP_") {
			env = append(env, kv)
		}
	}
	return env
}
