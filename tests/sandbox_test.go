package tests

// Issue 16: per-tool limits enforced by the kernel. Each test declares a
// limit in the tool's x-mcp-bashd entry, runs a tool that goes past it
// with real processes, and asserts what the kernel did and what the
// result says. A test skips only when the daemon itself reports that the
// kernel or its privileges lack the mechanism (its log names why); on a
// root Linux 6.x machine with Landlock, network namespaces and memory/pids
// cgroups none skips.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// sbTool is one tools.json entry with its x-mcp-bashd settings.
type sbTool struct{ name, settings string }

func sbToolsJSON(tools ...sbTool) string {
	var parts []string
	for _, t := range tools {
		e := fmt.Sprintf(`{"name":%q,"description":"test tool","inputSchema":{"type":"object"}`, t.name)
		if t.settings != "" {
			e += `,"x-mcp-bashd":` + t.settings
		}
		parts = append(parts, e+"}")
	}
	return `{"tools":[` + strings.Join(parts, ",") + `]}`
}

// sbServe is a daemon serving body with tools (and their settings).
func sbServe(t *testing.T, body string, tools ...sbTool) harness.Options {
	dir, tmp := t.TempDir(), t.TempDir()
	sbShare(t, dir, tmp)
	o := rfIn(dir, tmp, nil)
	o.Files = map[string]string{"server.sh": rfLib + body, "tools.json": sbToolsJSON(tools...)}
	return o
}

// sbShare lets a root daemon's sandboxed calls, which run as nobody
// (docs/security.md), reach the test's directories as they would /tmp: the
// tools write their notes into the server's directory ($RF_DIR), and the
// call roots are in TMPDIR. t.TempDir makes them 0700.
func sbShare(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		for _, c := range []struct {
			path string
			mode os.FileMode
		}{{filepath.Dir(d), 0o711}, {d, 0o777}} {
			if err := os.Chmod(c.path, c.mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sbCall calls tool and returns its result's text and isError.
func sbCall(t *testing.T, d *harness.Daemon, id int, tool, args string) (string, bool) {
	t.Helper()
	line := d.RoundTrip(rfCall(strconv.Itoa(id), tool, args))
	r := harness.Parse(t, line)
	if r.Result == nil {
		t.Fatalf("%s: not a result: %s", tool, line)
	}
	return r.First(), r.Result.IsError
}

// sbRequire skips when the daemon said (once, at its first sandboxed call)
// that the mechanism is unavailable here, quoting its reason.
func sbRequire(t *testing.T, d *harness.Daemon, what string) {
	t.Helper()
	for _, line := range strings.Split(d.Stderr.String(), "\n") {
		if strings.Contains(line, what+" unavailable") {
			t.Skipf("this kernel or these privileges lack it: %s", line)
		}
	}
}

// A tool allocating past its memory limit is stopped by the kernel (the
// call's cgroup OOM-kills it) and the result says so; the daemon, outside
// the call's cgroup and without its rlimits, serves the next call.
func TestSandboxMemoryLimitStopsTool(t *testing.T) {
	d := harness.Start(t, sbServe(t, `
tool_hog() { local s=x; while :; do s="$s$s"; done; }
tool_ok() { echo fine; }
`, sbTool{"hog", `{"limits":{"memory":"64MiB"}}`}, sbTool{"ok", ""}))
	text, isErr := sbCall(t, d, 1, "hog", `{}`)
	sbRequire(t, d, "cgroup limits")
	if !isErr || !strings.HasSuffix(text, "\n[mcp-bashd: stopped: memory limit 64 MiB reached]") {
		t.Fatalf("hog: isError %v, text %q", isErr, text)
	}
	if text, isErr := sbCall(t, d, 2, "ok", `{}`); isErr || text != "fine" {
		t.Fatalf("next call: %v %q", isErr, text)
	}
	self, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", d.Cmd.Process.Pid))
	if err != nil || strings.Contains(string(self), "/call-") {
		t.Fatalf("the daemon is in a call's cgroup: %s %v", self, err)
	}
}

// A fork loop stops at the process limit (the pids cgroup refuses its
// forks), the call ends by itself, and nothing it started is left. Bash
// retries a refused fork for 15 s (1+2+4+8) before it gives up and ends
// the command: this test takes that long.
func TestSandboxForkLoopStopsAtProcessLimit(t *testing.T) {
	d := harness.Start(t, sbServe(t, `tool_forks() { while :; do sleep 1000 & done; }`, sbTool{"forks", `{"limits":{"processes":32}}`}))
	text, isErr := sbCall(t, d, 1, "forks", `{}`)
	sbRequire(t, d, "cgroup limits")
	if !isErr || !strings.Contains(text, "fork: Resource temporarily unavailable") ||
		!strings.HasSuffix(text, "\n[mcp-bashd: process limit 32 reached: new processes were refused]") {
		t.Fatalf("forks: isError %v, text %q", isErr, text)
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the fork loop's processes to be gone", func() (bool, string) {
		ps, err := proctest.WithEnv(harness.MarkKey, d.Mark)
		if err != nil {
			return false, err.Error()
		}
		var left []proctest.Proc
		for _, p := range proctest.Alive(ps) {
			if p.PID != d.Cmd.Process.Pid {
				left = append(left, p)
			}
		}
		return len(left) == 0, fmt.Sprint(left)
	})
}

// A CPU spin is stopped at its CPU limit: RLIMIT_CPU sends SIGXCPU after
// one second of CPU time, and the result names the limit.
func TestSandboxCPULimitStopsSpin(t *testing.T) {
	d := harness.Start(t, sbServe(t, `tool_spin() { while :; do :; done; }`, sbTool{"spin", `{"limits":{"cpu":1}}`}))
	text, isErr := sbCall(t, d, 1, "spin", `{}`)
	if !isErr || text != "Error executing spin: \n[mcp-bashd: stopped: CPU time limit 1s reached]" {
		t.Fatalf("spin: isError %v, text %q", isErr, text)
	}
	// The daemon logs the signal after it has answered: wait for the line.
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon to log SIGXCPU", func() (bool, string) {
		s := d.Stderr.String()
		return strings.Contains(s, `"signal": "SIGXCPU"`) || strings.Contains(s, `"signal":"SIGXCPU"`), s
	})
}

// Landlock: a write outside the allowed paths fails with EACCES while the
// allowed ones work; with "read" restricted, a file outside it cannot be
// read while bash, its libraries and the call's own files still can.
func TestSandboxFilesystemRules(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	sbShare(t, allowed, outside) // refused by Landlock, not by their modes
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "public"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each attempt prints what it did and how: bash's "Permission denied"
	// is strerror(EACCES).
	body := fmt.Sprintf(`
try() { if ( "$@" ) 2>"$MCP_CALL_TMPDIR/err"; then echo "ok: $*"; else echo "refused: $(cat "$MCP_CALL_TMPDIR/err")"; fi; }
tool_write() {
    try eval 'echo a >"$MCP_CALL_TMPDIR/f"'
    try eval 'echo b >%[1]s/new'
    try eval 'echo c >%[2]s/new'
}
tool_read() {
    try cat %[1]s/public
    try cat %[2]s/secret
}
`, allowed, outside)
	d := harness.Start(t, sbServe(t, body, sbTool{"write", fmt.Sprintf(`{"filesystem":{"write":["$MCP_CALL_TMPDIR",%q]}}`, allowed)}, sbTool{"read", fmt.Sprintf(`{"filesystem":{"read":["/usr","/lib","/lib64","/bin","/etc",%q]}}`, allowed)}))
	text, isErr := sbCall(t, d, 1, "write", `{}`)
	sbRequire(t, d, "landlock")
	lines := strings.Split(text, "\n")
	if isErr || len(lines) != 3 || !strings.HasPrefix(lines[0], "ok:") || !strings.HasPrefix(lines[1], "ok:") ||
		!strings.HasPrefix(lines[2], "refused:") || !strings.HasSuffix(lines[2], "Permission denied") {
		t.Fatalf("write: isError %v, text %q", isErr, text)
	}
	if b, err := os.ReadFile(filepath.Join(allowed, "new")); err != nil || string(b) != "b\n" {
		t.Fatalf("allowed write: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Fatalf("the write outside the allowed paths happened: %v", err)
	}
	text, isErr = sbCall(t, d, 2, "read", `{}`)
	lines = strings.Split(text, "\n")
	if isErr || len(lines) != 3 || lines[0] != "hello" || !strings.HasPrefix(lines[1], "ok:") ||
		!strings.HasPrefix(lines[2], "refused:") || !strings.HasSuffix(lines[2], "Permission denied") {
		t.Fatalf("read: isError %v, text %q", isErr, text)
	}
}

// With "network": false a connect to a loopback listener the test started
// fails, while the same tool without the key connects (so the listener
// was reachable); the listener saw exactly that one connection.
func TestSandboxNoNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	body := fmt.Sprintf(`
connect() { if (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null; then echo connected; else echo refused; fi; }
tool_offline() { connect; }
tool_online() { connect; }
`, port)
	d := harness.Start(t, sbServe(t, body, sbTool{"offline", `{"network":false}`}, sbTool{"online", ""}))
	text, isErr := sbCall(t, d, 1, "offline", `{}`)
	if strings.Contains(text, "network namespace") {
		t.Skipf("this daemon may not create a network namespace: %s", text)
	}
	if isErr || text != "refused" {
		t.Fatalf("offline: isError %v, text %q", isErr, text)
	}
	if text, isErr := sbCall(t, d, 2, "online", `{}`); isErr || text != "connected" {
		t.Fatalf("online: isError %v, text %q", isErr, text)
	}
	select {
	case <-accepted:
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("the online connection was not accepted")
	}
	select {
	case <-accepted:
		t.Fatal("a second connection reached the listener")
	default:
	}
}

// A tool that detaches a child with setsid: under a sandbox the child is
// in the call's cgroup, and dies with the call (without one it outlives
// the call: TestDetachedToolsAreReaped).
func TestSandboxSetsidChildDiesWithCall(t *testing.T) {
	d := harness.Start(t, sbServe(t, `
tool_detach() {
    setsid bash -c 'echo "$$" >"$RF_DIR/child.tmp"; mv "$RF_DIR/child.tmp" "$RF_DIR/child"; exec sleep 1000' &
    while [ ! -s "$RF_DIR/child" ]; do sleep 0.01; done
    echo started
}
`, sbTool{"detach", `{"limits":{}}`}))
	text, isErr := sbCall(t, d, 1, "detach", `{}`)
	sbRequire(t, d, "cgroup limits")
	if isErr || text != "started" {
		t.Fatalf("detach: isError %v, text %q", isErr, text)
	}
	pid := rfInt(t, d.Dir, "child")
	proctest.WaitUntil(t, harness.Deadline(t), "the setsid child to be killed and reaped", func() (bool, string) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil, string(b)
	})
}

// The exec helper leaves no trace in the call's process: ps shows the
// server script and its arguments as without a sandbox (CONTRACT 31), no
// signal is blocked or ignored, no descriptor beyond 0-2 is inherited by
// the tool, and the limits are the declared ones.
func TestSandboxCallProcessIsPlainBash(t *testing.T) {
	body := `
show() {
    tr '\0' ' ' </proc/$$/cmdline; echo
    grep -E '^(SigBlk|SigIgn)' /proc/self/status
    ls /proc/self/fd | tr '\n' ' '; echo
    ulimit -n -f
}
tool_boxed() { show; }
tool_plain() { show; }
`
	d := harness.Start(t, sbServe(t, body, sbTool{"boxed", `{"limits":{"openFiles":100,"fileSize":"1MiB"},"network":false}`}, sbTool{"plain", ""}))
	boxed, isErr := sbCall(t, d, 1, "boxed", `{}`)
	if isErr {
		t.Fatalf("boxed: %q", boxed)
	}
	plain, _ := sbCall(t, d, 2, "plain", `{}`)
	b, p := strings.Split(boxed, "\n"), strings.Split(plain, "\n")
	if len(b) != 6 || len(p) != 6 {
		t.Fatalf("boxed %q\nplain %q", boxed, plain)
	}
	if want := strings.Replace(p[0], "# call plain", "# call boxed", 1); b[0] != want || !strings.Contains(b[0], filepath.Join(d.Dir, "server.sh")) {
		t.Fatalf("cmdline: boxed %q, plain %q", b[0], p[0])
	}
	for i, want := range []string{"SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000", p[3]} {
		if b[i+1] != want {
			t.Errorf("line %d: boxed %q, want %q (plain %q)", i+1, b[i+1], want, p[i+1])
		}
	}
	if !strings.HasPrefix(b[4], "open files") || !strings.HasSuffix(b[4], ") 100") ||
		!strings.HasPrefix(b[5], "file size") || !strings.HasSuffix(b[5], ") 1024") {
		t.Errorf("limits: %q", b[4:])
	}
}

// check names every unusable limit with file, line and tool; a call of
// such a tool is refused rather than run without it; `mcp-bashd call`
// shows how each limit is enforced.
func TestSandboxCheckAndCallShowLimits(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh": "tool_bad() { :; }\ntool_good() { echo ran; }\n",
		"tools.json": sbToolsJSON(sbTool{"bad", `{"limits":{"memory":"64MB!","cpus":2}}`},
			sbTool{"good", `{"limits":{"memory":"64MiB","cpu":"2s"},"filesystem":{"write":["$MCP_CALL_TMPDIR"]}}`}),
	})
	script := filepath.Join(dir, "server.sh")
	out, err := exec.Command(harness.Binary, "check", script).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(string(out), filepath.Join(dir, "tools.json")+`:1: tool "bad": x-mcp-bashd.limits: `) {
		t.Fatalf("check: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	sbShare(t, tmp)
	cmd := exec.Command(harness.Binary, "call", script, "bad")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, _ = cmd.Output()
	if !strings.HasPrefix(string(out), "Cannot run bad: its x-mcp-bashd entry is invalid: limits: ") {
		t.Fatalf("call bad: %s", out)
	}
	cmd = exec.Command(harness.Binary, "call", script, "good")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil || string(out) != "ran\n" {
		t.Fatalf("call good: %v %q\n%s", err, out, stderr.String())
	}
	for _, want := range []string{"limits of good:", "memory", "64 MiB", "cpu", "RLIMIT_CPU", "filesystem.write", "containment"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("call's stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// The exec helper runs in an init that comes before the binary's large
// dependencies' (a JSON Schema library spends milliseconds in its own):
// started with a plan, the binary execs before any of them is
// initialised, which is what keeps a sandboxed call cheap.
func TestSandboxHelperExecsBeforeHeavyInits(t *testing.T) {
	cmd := exec.Command(harness.Binary, "marker")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", `__MCPBASHD_SANDBOX={"bash":"/bin/sh","landlock_fd":-1}`)
	cmd.Args[0] = "sh"
	cmd.Args = append(cmd.Args[:1], "-c", "echo helped")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || string(out) != "helped\n" {
		t.Fatalf("helper: %v %q\n%s", err, out, stderr.String())
	}
	// The trace prints a package once its init returned: the helper's
	// never does (it execs), the standard library's before it do.
	if !strings.Contains(stderr.String(), "init encoding/json @") || strings.Contains(stderr.String(), "jsonschema") {
		t.Fatalf("init order:\n%s", stderr.String())
	}
}
