package tests

// Drop-in start-up and lifecycle (issue 11): a script
// that changes directory before run_mcp_server still starts (1);
// run_mcp_server returns when the input ends, while the host's signals
// still reach the daemon and the daemon dies with the server's shell (3);
// a signal during the shutdown that follows the end of input is what the
// server exits by (5); an EXIT handler runs once, from the enclosing
// shell, when run_mcp_server runs in a subshell (6); calls see the
// server's pid in MCP_BASHD_SERVER_PID (11).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// d2Write writes srv/server.sh (executable) and srv/tools.json under a
// fresh directory and returns that directory.
func d2Write(t *testing.T, script string, tools ...string) string {
	t.Helper()
	base := harness.WriteFiles(t, map[string]string{
		"srv/server.sh":  "#!/usr/bin/env bash\n" + rfLib + script,
		"srv/tools.json": harness.ToolsJSON(tools...),
	})
	return base
}

// d2Server runs exe (a drop-in script, or mcp-bashd with one) with args,
// with the shim, the binary, the script's directory ($RF_DIR) and a log
// file in its environment, in the script's directory (a drop-in server's
// tools.json is relative to where it runs, as under the SDK).
func d2Server(dir, exe string, args []string, env ...string) harness.Options {
	return harness.Options{Exe: exe, Args: append([]string{}, args...), Dir: dir, DirEnv: "RF_DIR", WorkDir: dir, Shim: true, CleanEnv: true, TempDir: true, Log: true, Mark: "d2", Env: env}
}

// d2DaemonOf waits for the mcp-bashd a drop-in server's shell started
// (its child) and returns its pid.
func d2DaemonOf(t *testing.T, shell int) int {
	t.Helper()
	pid := 0
	proctest.WaitUntil(t, harness.Deadline(t), "the shell's mcp-bashd child", func() (bool, string) {
		ps, err := proctest.Scan()
		if err != nil {
			return false, err.Error()
		}
		for _, p := range proctest.Alive(ps) {
			if p.PPID == shell && p.Comm == "mcp-bashd" {
				pid = p.PID
				return true, ""
			}
		}
		return false, "none yet"
	})
	return pid
}

// d2Ended waits for the started process to end and returns its exit
// status and the signal that killed it (0: none).
func d2Ended(t *testing.T, r *harness.Daemon) (int, syscall.Signal) {
	t.Helper()
	r.WaitExit(t)
	ws := r.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// d2Events is what the script and its handlers wrote to $RF_DIR/events.
func d2Events(r *harness.Daemon) string {
	b, _ := os.ReadFile(filepath.Join(r.Dir, "events"))
	return string(b)
}

// Item 1: a script that changes directory before run_mcp_server, started
// by a relative path, serves — the script is found as the kernel found it
// when it started, and calls run in the directory the script chose.
func TestStartAfterCd(t *testing.T) {
	const cdToScript = `cd "$(dirname "$0")" || exit 1
source "$SHIM"
tool_where() { printf '%s|%s' "$PWD" "$0"; }
run_mcp_server
`
	const cdElsewhere = `export MCP_TOOLS_LIST_FILE="$(cd "$(dirname "$0")" && pwd)/tools.json"
cd / || exit 1
source "$SHIM"
tool_where() { printf '%s|%s' "$PWD" "$0"; }
run_mcp_server
`
	for _, c := range []struct {
		name, script string
		argv         []string // run in the base directory
		wd           string   // where calls run, relative to the base ("/": the root)
	}{
		{"dir/server.sh", cdToScript, []string{"srv/server.sh"}, "srv"},
		{"bash dir/server.sh", cdToScript, []string{"bash", "srv/server.sh"}, "srv"},
		{"./dir/server.sh, cd /", cdElsewhere, []string{"./srv/server.sh"}, "/"},
		{"through a symlinked directory", cdToScript, []string{"link/server.sh"}, "link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := d2Write(t, c.script, "where")
			if err := os.Symlink("srv", filepath.Join(base, "link")); err != nil {
				t.Fatal(err)
			}
			o := d2Server(filepath.Join(base, "srv"), c.argv[0], c.argv[1:])
			o.WorkDir = base
			r := harness.Start(t, o)
			r.RoundTrip(harness.InitLine)
			txt, isErr := harness.Parse(t, r.RoundTrip(harness.CallLine(1, "where", `{}`))).Text(t)
			wd, zero, _ := strings.Cut(txt, "|")
			want := c.wd
			if want != "/" {
				want = filepath.Join(base, c.wd)
			}
			if isErr || !d2SameFile(wd, want) || !d2SameFile(zero, filepath.Join(base, "srv", "server.sh")) || !filepath.IsAbs(zero) {
				t.Fatalf("the call saw %q (isError %v); want it to run in %s with $0 the script, absolute", txt, isErr, want)
			}
			if code, sig := d2CloseAndWaitStatus(t, r); code != 0 || sig != 0 {
				t.Fatalf("exit status %d signal %v after end of input", code, sig)
			}
		})
	}
}

func d2SameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// d2CloseAndWaitStatus closes stdin and waits for the end.
func d2CloseAndWaitStatus(t *testing.T, r *harness.Daemon) (int, syscall.Signal) {
	t.Helper()
	r.Stdin.Close()
	return d2Ended(t, r)
}

// Item 3: run_mcp_server returns 0 when the input ends, after the EXIT
// handler installed before it ran (once, as the SDK's teardown runs it);
// the statements after it run, with stdin at EOF, and the script's own
// exit status is the process's. Tools do not inherit the ignored SIGINT
// and SIGQUIT a background job gets.
func TestRunMCPServerReturnsAtEndOfInput(t *testing.T) {
	base := d2Write(t, `set -euo pipefail
source "$SHIM"
trap 'echo "EXIT handler" >>"$RF_DIR/events"' EXIT
tool_sigs() { grep '^SigIgn:' /proc/self/status; }
run_mcp_server
echo "after run_mcp_server: status $?" >>"$RF_DIR/events"
if IFS= read -r line; then echo "stdin: $line"; else echo "stdin: EOF"; fi >>"$RF_DIR/events"
exit 7
`, "sigs")
	r := harness.Start(t, d2Server(filepath.Join(base, "srv"), filepath.Join(base, "srv", "server.sh"), nil))
	r.RoundTrip(harness.InitLine)
	txt, _ := harness.Parse(t, r.RoundTrip(harness.CallLine(1, "sigs", `{}`))).Text(t)
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(txt, "SigIgn:")), 16, 64)
	if err != nil {
		t.Fatalf("tool printed %q", txt)
	}
	if quitInt := uint64(1)<<(syscall.SIGINT-1) | uint64(1)<<(syscall.SIGQUIT-1); mask&quitInt != 0 {
		t.Errorf("a tool ignores SIGINT or SIGQUIT: SigIgn %016x", mask)
	}
	code, sig := d2CloseAndWaitStatus(t, r)
	if code != 7 || sig != 0 {
		t.Errorf("exit status %d signal %v, want the script's own exit 7", code, sig)
	}
	if got, want := d2Events(r), "EXIT handler\nafter run_mcp_server: status 0\nstdin: EOF\n"; got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// d2Lifecycle is a drop-in server with a long call, its cancel hook, an
// EXIT handler and a statement after run_mcp_server, each writing what
// happened to $RF_DIR/events.
const d2Lifecycle = `source "$SHIM"
trap 'echo "EXIT handler" >>"$RF_DIR/events"' EXIT
tool_slow() { rf_note slow.pid; sleep 1000; }
tool_slow_cancel() { echo "cancel hook [$1]" >>"$RF_DIR/events"; }
run_mcp_server
echo "after run_mcp_server" >>"$RF_DIR/events"
`

// Item 3: with the daemon beside the shell, SIGTERM, SIGINT and SIGHUP
// sent to the shell's pid alone (what hosts do) or to its whole group
// still stop the server as before: the call is cancelled (its hook runs
// with "") and answered once with -32004 "Server is shutting down", the
// EXIT handler runs once, nothing of the call is left, and
// the shell dies by the signal — statements after run_mcp_server do not
// run. The daemon is in the shell's group even when the script turned job
// control on.
func TestSignalsReachTheDaemon(t *testing.T) {
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		group bool
		head  string
	}{
		{"SIGTERM", syscall.SIGTERM, false, ""},
		{"SIGINT", syscall.SIGINT, false, ""},
		{"SIGHUP", syscall.SIGHUP, false, ""},
		{"SIGTERM to the group", syscall.SIGTERM, true, ""},
		{"SIGTERM to the group, set -m", syscall.SIGTERM, true, "set -m\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := d2Write(t, c.head+d2Lifecycle, "slow")
			o := d2Server(filepath.Join(base, "srv"), filepath.Join(base, "srv", "server.sh"), nil)
			o.SysProcAttr = &syscall.SysProcAttr{Setpgid: c.group}
			r := harness.Start(t, o)
			r.RoundTrip(harness.InitLine)
			shell := r.Cmd.Process.Pid
			daemon := d2DaemonOf(t, shell)
			sh, _ := rfProc(t, shell)
			if p, ok := rfProc(t, daemon); !ok || p.PGID != sh.PGID {
				t.Fatalf("the daemon is not in the shell's process group %d: %v", sh.PGID, p)
			}
			r.Send(rfCall(`"s"`, "slow", `{}`))
			pgid := rfInt(t, r.Dir, "slow.pid")
			target := shell
			if c.group {
				target = -shell
			}
			if err := syscall.Kill(target, c.sig); err != nil {
				t.Fatal(err)
			}
			lines := r.Drain(t)
			if code, sig := d2Ended(t, r); sig != c.sig {
				t.Fatalf("the shell ended with status %d signal %v, want death by %v", code, sig, c.sig)
			}
			// Every accepted request gets exactly one answer (issue 23): the
			// call shutdown ended says so, and nothing else is written.
			if want := `{"jsonrpc":"2.0","id":"s","error":{"code":-32004,"message":"Server is shutting down"}}`; len(lines) != 1 || strings.TrimSpace(string(lines[0])) != want {
				t.Errorf("stdout after the signal: %q, want the one line %s", lines, want)
			}
			if got, want := d2Events(r), "cancel hook []\nEXIT handler\n"; got != want {
				t.Errorf("events:\n%s\nwant:\n%s", got, want)
			}
			harness.WaitGone(t, daemon, "the daemon to be gone")
			harness.WaitGroupGone(t, pgid, harness.Deadline(t))
		})
	}
}

// Item 3: the daemon dies with the server's shell. SIGKILL to the shell
// with a call in flight: the daemon and the call's group are gone, and
// nothing ran (as when the SDK's server is SIGKILLed).
func TestDaemonDiesWithShell(t *testing.T) {
	base := d2Write(t, d2Lifecycle, "slow")
	r := harness.Start(t, d2Server(filepath.Join(base, "srv"), filepath.Join(base, "srv", "server.sh"), nil))
	r.RoundTrip(harness.InitLine)
	daemon := d2DaemonOf(t, r.Cmd.Process.Pid)
	r.Send(rfCall(`"s"`, "slow", `{}`))
	pgid := rfInt(t, r.Dir, "slow.pid")
	if err := r.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, sig := d2Ended(t, r); sig != syscall.SIGKILL {
		t.Fatalf("the shell ended by %v", sig)
	}
	harness.WaitGone(t, daemon, "the daemon to die with its shell")
	harness.WaitGroupGone(t, pgid, harness.Deadline(t))
	if got := d2Events(r); got != "" {
		t.Errorf("events after SIGKILL: %q", got)
	}
}

// Item 5: a signal that arrives during the shutdown after the end of
// input — here while the script's EXIT handler runs — does not cut the
// teardown short, and the server then exits by it (128+N), in both forms.
func TestSignalDuringShutdown(t *testing.T) {
	const script = `source "$SHIM"
trap 'echo ran >>"$RF_DIR/handler"; rf_gate go' EXIT
tool_noop() { :; }
run_mcp_server
echo "after run_mcp_server" >>"$RF_DIR/events"
`
	for _, form := range []string{"./server.sh", "mcp-bashd server.sh"} {
		t.Run(form, func(t *testing.T) {
			base := d2Write(t, script, "noop")
			dir := filepath.Join(base, "srv")
			o := d2Server(dir, filepath.Join(dir, "server.sh"), nil)
			if form != "./server.sh" {
				o = d2Server(dir, harness.Binary, []string{filepath.Join(dir, "server.sh")})
			}
			r := harness.Start(t, o)
			r.RoundTrip(harness.InitLine)
			daemon := r.Cmd.Process.Pid
			if form == "./server.sh" {
				daemon = d2DaemonOf(t, daemon)
			}
			r.Stdin.Close()
			rfLine(t, dir, "handler")
			if err := r.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			// The daemon says it took the signal; a daemon that does not
			// remember it ends (its handler killed at the budget) instead.
			proctest.WaitUntil(t, harness.Deadline(t), "the daemon to note the signal, or to end", func() (bool, string) {
				b, _ := os.ReadFile(r.Log)
				if strings.Contains(string(b), "signal received while shutting down") {
					return true, ""
				}
				select {
				case <-r.Done:
					return true, ""
				default:
					return false, "neither yet"
				}
			})
			rfTouch(t, dir, "go")
			if code, sig := d2Ended(t, r); sig != syscall.SIGTERM {
				t.Fatalf("ended with status %d signal %v, want death by SIGTERM", code, sig)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "handler")); string(b) != "ran\n" {
				t.Errorf("the EXIT handler ran %q, want once", b)
			}
			if got := d2Events(r); got != "" {
				t.Errorf("statements after run_mcp_server ran: %q", got)
			}
			harness.WaitGone(t, daemon, "the daemon to be gone")
		})
	}
}

// Items 6 and 11: `( run_mcp_server )` leaves the EXIT handler to the
// enclosing shell, which runs it once, at its exit, after the statements
// that follow; a call's MCP_BASHD_SERVER_PID is the server's pid — the
// script's $$, what $$ was in a tool under the SDK — whatever the
// environment said, in nested dispatch too, while its own $$ is not.
func TestSubshellAndServerPID(t *testing.T) {
	base := d2Write(t, `source "$SHIM"
trap 'echo "EXIT handler" >>"$RF_DIR/events"' EXIT
tool_pid() { printf '%s %s' "$MCP_BASHD_SERVER_PID" "$$"; }
tool_nested() { process_request '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pid","arguments":{}}}'; }
( run_mcp_server )
echo "after the subshell: $?" >>"$RF_DIR/events"
`, "pid", "nested")
	r := harness.Start(t, d2Server(filepath.Join(base, "srv"), filepath.Join(base, "srv", "server.sh"), nil, "MCP_BASHD_SERVER_PID=1"))
	r.RoundTrip(harness.InitLine)
	shell := strconv.Itoa(r.Cmd.Process.Pid)
	seen := map[string]bool{}
	for id := 1; id <= 2; id++ {
		txt, _ := harness.Parse(t, r.RoundTrip(harness.CallLine(id, "pid", `{}`))).Text(t)
		server, own, _ := strings.Cut(txt, " ")
		if server != shell || own == shell || seen[own] {
			t.Errorf("call %d saw MCP_BASHD_SERVER_PID %q and $$ %q; want the server %s and a shell of its own", id, server, own, shell)
		}
		seen[own] = true
	}
	txt, _ := harness.Parse(t, r.RoundTrip(harness.CallLine(3, "nested", `{}`))).Text(t)
	if !strings.Contains(txt, `"text":"`+shell+` `) {
		t.Errorf("a nested call saw %q, want MCP_BASHD_SERVER_PID %s", txt, shell)
	}
	if code, sig := d2CloseAndWaitStatus(t, r); code != 0 || sig != 0 {
		t.Errorf("exit status %d signal %v", code, sig)
	}
	if got, want := d2Events(r), "after the subshell: 0\nEXIT handler\n"; got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// Item 11, manifest form: the server is the daemon.
func TestServerPIDManifest(t *testing.T) {
	base := d2Write(t, `tool_pid() { printf '%s' "$MCP_BASHD_SERVER_PID"; }
`, "pid")
	dir := filepath.Join(base, "srv")
	r := harness.Start(t, d2Server(dir, harness.Binary, []string{filepath.Join(dir, "server.sh")}))
	r.RoundTrip(harness.InitLine)
	txt, _ := harness.Parse(t, r.RoundTrip(harness.CallLine(1, "pid", `{}`))).Text(t)
	if txt != strconv.Itoa(r.Cmd.Process.Pid) {
		t.Errorf("MCP_BASHD_SERVER_PID %q, want the daemon's pid %d", txt, r.Cmd.Process.Pid)
	}
}
