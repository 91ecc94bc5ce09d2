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
	"sync/atomic"
	"syscall"
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
	// A root daemon's sandboxed calls run as nobody and reach the binary
	// through $MCP_BASHD, as they would in /usr/local/bin.
	os.Chmod(dir, 0o755)
	Binary = filepath.Join(dir, "mcp-bashd")
	if err := useTestBash(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The daemon is built as this test binary was (buildtags*.go):
	// -tags portable tests the portable process logic end to end.
	build := exec.Command("go", "build", "-tags="+buildTags, "-o", Binary, "./cmd/mcp-bashd")
	build.Dir = RepoPath(".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build mcp-bashd:", err)
		return 1
	}
	return m.Run()
}

// useTestBash: with MCP_BASHD_TEST_BASH naming a bash (bash 3.2 in
// scripts/test.sh's bash 3.2 step), that bash comes first on PATH for the
// whole run, so it is the bash that runs the servers' scripts (#!/usr/bin/env
// bash) and the daemon's default bash for tools. A copy, in a directory
// everyone may enter: a root daemon's sandboxed calls run as nobody.
func useTestBash(dir string) error {
	b := os.Getenv("MCP_BASHD_TEST_BASH")
	if b == "" {
		return nil
	}
	body, err := os.ReadFile(b)
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "testbash")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(bin, "bash"), body, 0o755); err != nil {
		return err
	}
	for _, d := range []string{dir, bin} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	return os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
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
	// Files are written into Dir (default: a fresh directory) first;
	// Daemon.Dir names it.
	Files map[string]string
	Dir   string
	// DirEnv, when set, names an environment variable holding Dir, for
	// tools that write evidence beside their script.
	DirEnv string
	// Script is the file to serve: relative to Dir, or absolute. Empty
	// with Files or Dir: server.sh in Dir.
	Script     string
	Flags      []string // the daemon's flags, before the script
	ScriptArgs []string // the script's own arguments, after "--"
	Args       []string // the whole argv after the binary, instead of the above
	Env        []string // added to this process's environment
	// CleanEnv drops the MCP_* variables (and PROJECT_ROOT) of this
	// process's environment first, so a setting of the machine running the
	// tests cannot leak in. That drops MCP_BASHD_WARM too: scripts/test.sh's
	// second run with warm processes off does not reach such a daemon.
	CleanEnv bool
	WorkDir  string // the daemon's working directory
	// Mark, when set, tags the daemon and everything it starts with
	// MarkKey=Mark(t, Mark) plus a sequence number (Daemon.Mark), so
	// WaitNoneLeft and Alive find them by /proc.
	Mark string
	// Marked is an explicit marker value, for a test that made one
	// already (its clients carry it too). Marked processes still alive at
	// the test's cleanup are killed.
	Marked string
	// TempDir gives the daemon a fresh TMPDIR; Tmp a given one
	// (Daemon.Tmp names it).
	TempDir bool
	Tmp     string
	// Init sends InitLine (2025-11-25) once started and fails the test
	// unless it is answered with a result.
	Init bool
	// Revision is the one the schema checks use until an initialize
	// answer says otherwise (default 2024-11-05; 2026-07-28 negotiates
	// nothing).
	Revision string
	// Log sends the daemon's JSON log to a fresh file (Daemon.Log), whose
	// tail is printed if the test fails.
	Log bool
	// LogFile, when set, is the daemon's MCP_LOG_FILE (Daemon.Log), made by
	// the test where it wants it.
	LogFile string
	// SysProcAttr is the started process's (a process group of its own,
	// another user's credential).
	SysProcAttr *syscall.SysProcAttr
	// Exe, when set, is started instead of mcp-bashd with Args: a drop-in
	// server script, bash, socat, a script that runs the daemon itself.
	Exe string
	// Shim puts what a drop-in server needs in the environment: MCP_BASHD
	// (this binary, for the shim to find) and SHIM (the shim's path).
	Shim bool
}

// Layout is what a started daemon was given: the directory its files were
// written into, its marker, TMPDIR and log file ("" when not asked for).
type Layout struct {
	Dir  string // the directory Options.Files were written into
	Mark string // the value of MarkKey in its environment
	Tmp  string // its TMPDIR
	Log  string // its MCP_LOG_FILE
}

var seq atomic.Int64

// command builds the exec.Cmd o describes, writing o.Files, and says
// what it was given.
func (o Options) command(t testing.TB, pre ...string) (*exec.Cmd, Layout) {
	t.Helper()
	l := Layout{Dir: o.Dir}
	if o.Files != nil {
		if l.Dir == "" {
			l.Dir = t.TempDir()
		}
		WriteFilesIn(t, l.Dir, o.Files)
	}
	exe := Binary
	if o.Exe != "" {
		exe = o.Exe
	}
	cmd := exec.Command(exe, append(append([]string{}, pre...), o.argv(l.Dir)...)...)
	cmd.Env = o.environ(t, &l)
	cmd.Dir = o.WorkDir
	cmd.SysProcAttr = o.SysProcAttr
	return cmd, l
}

// argv is Args, or Flags, the script (resolved against dir) and "--"
// ScriptArgs.
func (o Options) argv(dir string) []string {
	if o.Args != nil {
		return o.Args
	}
	script := o.Script
	if script == "" && dir != "" {
		script = "server.sh"
	}
	if script != "" && !filepath.IsAbs(script) && dir != "" {
		script = filepath.Join(dir, script)
	}
	args := append(append([]string{}, o.Flags...), script)
	if len(o.ScriptArgs) > 0 {
		args = append(append(args, "--"), o.ScriptArgs...)
	}
	return args
}

// environ is the daemon's environment, filling in l's marker, TMPDIR and
// log file; o.Env comes last, so it wins over what the harness set.
func (o Options) environ(t testing.TB, l *Layout) []string {
	env := Environ(o.CleanEnv)
	if o.Shim {
		env = append(env, "MCP_BASHD="+Binary, "SHIM="+RepoPath("scripts/mcpserver_core.sh"))
	}
	if l.Mark = o.Marked; o.Mark != "" && l.Mark == "" {
		l.Mark = fmt.Sprintf("%s-%d", Mark(t, o.Mark), seq.Add(1))
	}
	if mark := l.Mark; mark != "" {
		env = append(env, MarkKey+"="+mark)
		t.Cleanup(func() { KillMarked(mark) })
	}
	if l.Tmp = o.Tmp; o.TempDir && l.Tmp == "" {
		l.Tmp = t.TempDir()
	}
	if l.Tmp != "" {
		env = append(env, "TMPDIR="+l.Tmp)
	}
	if o.DirEnv != "" {
		env = append(env, o.DirEnv+"="+l.Dir)
	}
	if o.LogFile != "" {
		l.Log = o.LogFile
	} else if o.Log {
		l.Log = filepath.Join(t.TempDir(), "daemon.log")
		log := l.Log
		t.Cleanup(func() {
			if t.Failed() {
				b, _ := os.ReadFile(log)
				t.Logf("daemon log %s:\n%s", log, Tail(b, 40))
			}
		})
	}
	if l.Log != "" {
		env = append(env, "MCP_LOG_FILE="+l.Log)
	}
	return append(env, o.Env...)
}

// Command is the exec.Cmd o describes, not started: for a client SDK's
// command transport, which starts it itself, or a one-shot run.
func Command(t testing.TB, o Options) *exec.Cmd {
	t.Helper()
	cmd, _ := o.command(t)
	return cmd
}

// Tail is the last n lines of b.
func Tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Environ is this process's environment, without its MCP_* variables
// and PROJECT_ROOT (which the bash SDK reads) when clean.
func Environ(clean bool) []string {
	if !clean {
		return os.Environ()
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCP_") && !strings.HasPrefix(kv, "PROJECT_ROOT=") {
			env = append(env, kv)
		}
	}
	return env
}
