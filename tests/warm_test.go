package tests

// Warm call processes (issue 13): a call's bash is started before its call,
// handed exactly one call and exits after it. These tests check the
// promises a cold call keeps, on warm processes, through /proc: which
// process ran a call, what its command line showed, which processes are
// left after a cancellation, a reload and the daemon's SIGKILL.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// warmBody's tools write their own pid (the group leader, $$) where the
// test reads it, and report what they see of their call.
const warmBody = `
tool_who() { rf_i "$1"; rf_note "who.$RF_I"; echo "pid=$$ tmp=$MCP_CALL_TMPDIR leaked=${LEAK:-none} seconds=$SECONDS $(tr '\0' '\n' </proc/$$/environ | grep '^__MCPBASHD_MODE=')"; LEAK=yes; }
tool_nap() { rf_note nap.pid; sleep 1000; }
tool_ps() { tr '\0' ' ' </proc/$$/cmdline; }
`

// startedWarm reports whether pid was started as a warm process: its
// environment as exec'd (/proc/PID/environ) says the prelude's mode, which
// for a process started at its call is the call's (a fork server's
// process has its zygote's).
func startedWarm(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("environment of pid %d: %v", pid, err)
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		// A fork server's process has the environment its zygote was
		// exec'd with (supervisor/zygote_linux.go).
		if kv == "__MCPBASHD_MODE=warm" || kv == "__MCPBASHD_MODE=zygote" {
			return true
		}
	}
	return false
}

// ranWarm reports whether a tool_who answer came from a warm process:
// spawned ("warm") or forked by the fork server ("zygote").
func ranWarm(answer string) bool {
	return strings.HasSuffix(answer, " __MCPBASHD_MODE=warm") || strings.HasSuffix(answer, " __MCPBASHD_MODE=zygote")
}

// warmProcs lists the daemon's warm processes (group leaders whose
// command line shows the prelude's warm comment), by pid.
func warmProcs(t *testing.T, d *harness.Daemon) map[int]proctest.Proc {
	t.Helper()
	out := map[int]proctest.Proc{}
	for _, p := range d.AliveAll(t) {
		if p.PID == p.PGID && harness.IsIdleWarm(p) {
			out[p.PID] = p
		}
	}
	return out
}

// waitWarm waits until the daemon keeps at least one warm process and
// returns them.
func waitWarm(t *testing.T, d *harness.Daemon) map[int]proctest.Proc {
	t.Helper()
	var warm map[int]proctest.Proc
	proctest.WaitUntil(t, harness.Deadline(t), "a warm call process", func() (bool, string) {
		warm = warmProcs(t, d)
		return len(warm) > 0, fmt.Sprintf("alive:%s", harness.List(d.AliveAll(t)))
	})
	return warm
}

// A call runs in a process that was warm before it came; it serves that
// one call and is gone after it; a second call gets another process, sees
// nothing the first left in its shell, and shows its tool in ps.
func TestWarmProcessServesOneCall(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, nil))
	seen := map[int]bool{}
	for i := 0; i < 5; i++ {
		waitWarm(t, d)
		d.Send(rfCall(strconv.Itoa(i), "who", fmt.Sprintf(`{"i":"%d"}`, i)))
		r := harness.Parse(t, string(d.Recv()))
		pid := rfInt(t, d.Dir, fmt.Sprintf("who.%d", i))
		if !ranWarm(r.First()) {
			t.Fatalf("call %d did not run in a warm process: %q", i, r.First())
		}
		if seen[pid] {
			t.Fatalf("pid %d served two calls", pid)
		}
		seen[pid] = true
		want := fmt.Sprintf("pid=%d tmp=", pid)
		if !strings.HasPrefix(r.First(), want) || !strings.Contains(r.First(), " leaked=none ") {
			t.Fatalf("call %d: %q, want %q… leaked=none", i, r.First(), want)
		}
		tmp := strings.Fields(strings.TrimPrefix(r.First(), want[:len(want)-4]))[0]
		tmp = strings.TrimPrefix(tmp, "tmp=")
		if !strings.HasPrefix(filepath.Base(filepath.Dir(tmp)), "mcp-call.") || filepath.Dir(filepath.Dir(tmp)) != d.Tmp {
			t.Fatalf("MCP_CALL_TMPDIR %q is not $TMPDIR/mcp-call.N/tmp (TMPDIR %s)", tmp, d.Tmp)
		}
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Fatalf("MCP_CALL_TMPDIR %s still there after the answer (%v)", tmp, err)
		}
		// Gone once answered: the process exits after its one call.
		proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("pid %d to be gone", pid), func() (bool, string) {
			p, ok := rfProc(t, pid)
			return !ok || p.State == 'Z' || p.PGID != pid, p.String()
		})
	}
	// ps shows $0, $@ and the tool's name once the call runs.
	waitWarm(t, d)
	d.Send(rfCall("9", "ps", `{}`))
	r := harness.Parse(t, string(d.Recv()))
	if want := "# call ps"; !strings.Contains(r.First(), want) || !strings.Contains(r.First(), filepath.Join(d.Dir, "server.sh")) {
		t.Fatalf("command line of a warm call's process: %q, want the script and %q", r.First(), want)
	}
}

// A cancellation of a call that got a warm process stops its whole group
// and sends no answer, as for a cold one; the daemon goes on serving.
func TestWarmProcessCancelled(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, nil))
	waitWarm(t, d)
	d.Send(rfCall("1", "nap", `{}`))
	pgid := rfInt(t, d.Dir, "nap.pid")
	if !startedWarm(t, pgid) {
		t.Fatalf("the call's process %d was not a warm one", pgid)
	}
	d.Send(rfCancel("1"))
	harness.WaitGroupGone(t, pgid, harness.Deadline(t))
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("after the cancel: %s", got)
	}
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("lines after the cancel: %q", lines)
	}
}

// A reload retires the warm processes of the old snapshot: they are gone
// (their groups killed and reaped), and the next call runs the new code.
func TestWarmProcessRetiredByReload(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, nil))
	d.Send(rfCall("0", "who", `{"i":"0"}`))
	d.Recv()
	old := waitWarm(t, d)
	script := filepath.Join(d.Dir, "server.sh")
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `echo "pid=`, `echo "v2 pid=`, 1)
	if err := os.WriteFile(script, []byte(edited), 0o755); err != nil {
		t.Fatal(err)
	}
	for pid := range old {
		proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("old warm process %d to be gone after the reload", pid), func() (bool, string) {
			p, ok := rfProc(t, pid)
			return !ok || p.PGID != pid, p.String()
		})
	}
	proctest.WaitUntil(t, harness.Deadline(t), "a call to run the edited script", func() (bool, string) {
		d.Send(rfCall("7", "who", `{"i":"r"}`))
		r := harness.Parse(t, string(d.Recv()))
		return strings.HasPrefix(r.First(), "v2 "), r.First()
	})
}

// The daemon's SIGKILL takes its warm processes with it (the lifeline), as
// it takes every call.
func TestWarmProcessDiesWithDaemon(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, nil))
	warm := waitWarm(t, d)
	if err := d.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var gone time.Time
	proctest.WaitUntil(t, killed.Add(time.Second+rfScanSlack), "every warm process to die within 1 s of the daemon's SIGKILL", func() (bool, string) {
		left := d.AliveAll(t)
		gone = time.Now()
		return len(left) == 0, fmt.Sprintf("%d alive:%s", len(left), harness.List(left))
	})
	t.Logf("%d warm processes; all dead %v after SIGKILL", len(warm), gone.Sub(killed).Round(time.Millisecond))
	d.WaitExit(t)
}

// --warm 0 keeps none: every call starts its own process.
func TestWarmOff(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, []string{"--warm", "0"}))
	for i := 0; i < 3; i++ {
		d.Send(rfCall(strconv.Itoa(i), "who", fmt.Sprintf(`{"i":"%d"}`, i)))
		d.Recv()
		if warm := warmProcs(t, d); len(warm) != 0 {
			t.Fatalf("--warm 0 keeps warm processes: %v", warm)
		}
	}
}

// The hand-off carries the call's root whatever TMPDIR's name holds —
// spaces, a multibyte character in a UTF-8 locale — and a call that gets a
// warm process sees its own MCP_CALL_TMPDIR.
func TestWarmProcessOddTMPDIR(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": rfLib + warmBody, "tools.json": harness.ToolsJSON("who", "nap", "ps")})
	tmp := filepath.Join(t.TempDir(), "tmp dir é\tx")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	d := harness.Start(t, rfIn(dir, tmp, nil, "LC_ALL=C.UTF-8"))
	for i := 0; i < 3; i++ {
		waitWarm(t, d)
		d.Send(rfCall(strconv.Itoa(i), "who", fmt.Sprintf(`{"i":"%d"}`, i)))
		r := harness.Parse(t, string(d.Recv()))
		pid := rfInt(t, d.Dir, fmt.Sprintf("who.%d", i))
		if !ranWarm(r.First()) {
			t.Fatalf("call %d did not run in a warm process: %q", i, r.First())
		}
		prefix := fmt.Sprintf("pid=%d tmp=%s/mcp-call.", pid, tmp)
		if !strings.HasPrefix(r.First(), prefix) {
			t.Fatalf("call %d: %q, want it to start %q", i, r.First(), prefix)
		}
	}
}

// A script that defines a function named exec gets no warm processes (the
// warm prelude closes its hand-off pipe with a plain exec once the
// script's functions are defined); its calls start their own, as before.
func TestWarmNotForAScriptDefiningExec(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody+"\nexec() { builtin exec \"$@\"; }\n", []string{"who", "nap", "ps"}, nil))
	for i := 0; i < 3; i++ {
		d.Send(rfCall(strconv.Itoa(i), "who", fmt.Sprintf(`{"i":"%d"}`, i)))
		if r := harness.Parse(t, string(d.Recv())); !strings.Contains(r.First(), " leaked=none ") {
			t.Fatalf("call %d: %q", i, r.First())
		}
		if warm := warmProcs(t, d); len(warm) != 0 {
			t.Fatalf("warm processes kept for a script defining exec: %v", warm)
		}
	}
}
