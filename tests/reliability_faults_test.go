package tests

// Faults and lifecycle: scenarios 1–9 and 11 of RELIABILITY.md, and the
// sweep of per-call roots left by a daemon that died by SIGKILL. Scenario
// 10 (mcp-bashd as PID 1) is in reliability_pid1_test.go.
//
// Every daemon gets a unique MCPBASHD_TEST_MARK in its environment; each
// call process inherits it, which is how the tests find them in /proc, also
// after a setsid. Tools announce readiness by writing a file (one write of
// a line ending in a newline); the test waits for it. Time bounds are
// asserted only where the scenario's pass criterion states one, with a
// lower and a generous upper bound.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// rfScanSlack is what a /proc poll adds to a measured bound: one poll
// interval plus one scan of every process on the machine.
const rfScanSlack = 250 * time.Millisecond

// rfLib is sourced by every test server: small helpers the tools share.
//   - rf_i ARGS: RF_I = the value of "i" in the arguments JSON.
//   - rf_note NAME [TEXT]: write one line (default: $$) to $RF_DIR/NAME.
//   - rf_gate NAME: wait until $RF_DIR/NAME exists.
const rfLib = `
rf_i() { RF_I=; [[ $1 =~ \"i\":\"?([A-Za-z0-9_-]+) ]] && RF_I=${BASH_REMATCH[1]}; }
rf_note() { echo "${2:-$$}" >"$RF_DIR/$1"; }
rf_gate() { while [ ! -e "$RF_DIR/$1" ]; do sleep 0.01; done; }
`

// rfServer is a daemon serving SERVER.sh (rfLib + body) and tools.json
// declaring tools, with flags, marked, initialized.
func rfServer(body string, tools []string, flags []string, env ...string) harness.Options {
	o := rfIn("", "", flags, env...)
	o.Files = map[string]string{"server.sh": rfLib + body, "tools.json": harness.ToolsJSON(tools...)}
	return o
}

// rfIn is a daemon serving dir/server.sh ("": the Files' directory) with
// TMPDIR tmp ("": a fresh one), marked, initialized; tools find dir as
// $RF_DIR.
func rfIn(dir, tmp string, flags []string, env ...string) harness.Options {
	return harness.Options{Dir: dir, Tmp: tmp, TempDir: true, Flags: flags, Env: env, DirEnv: "RF_DIR", Mark: "rf", Log: true, Init: true}
}

func rfCall(id, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func rfCancel(id string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"test"}}`, id)
}

// rfLine waits for $dir/name to hold a complete line and returns it.
func rfLine(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var got string
	proctest.WaitUntil(t, harness.Deadline(t), "a tool to write "+name, func() (bool, string) {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false, fmt.Sprintf("%q %v", b, err)
		}
		got = strings.TrimSuffix(string(b), "\n")
		return true, ""
	})
	return got
}

func rfInt(t *testing.T, dir, name string) int {
	t.Helper()
	s := rfLine(t, dir, name)
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s holds %q, not a number", name, s)
	}
	return n
}

func rfTouch(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rfHold: tools that ignore SIGTERM and hold three children each (which
// inherit the ignored SIGTERM).
const rfHold = `
tool_hold() {
	trap '' TERM
	rf_i "$1"
	sleep 1000 & sleep 1000 & sleep 1000 &
	rf_note "hold.$RF_I"
	wait
}
`

// rfKillWithCallsInFlight is scenario 1 on a running daemon (which must
// serve rfHold with --max-concurrency >= n): n calls in flight, each a
// TERM-ignoring shell with three children, then SIGKILL to the daemon. No
// call process may be alive 1 s later.
func rfKillWithCallsInFlight(t *testing.T, d *harness.Daemon, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		d.Send(rfCall(fmt.Sprintf(`"k%d"`, i), "hold", fmt.Sprintf(`{"i":%d}`, i)))
	}
	pgids := map[int]bool{}
	for i := 0; i < n; i++ {
		pgids[rfInt(t, d.Dir, fmt.Sprintf("hold.%d", i))] = true
	}
	// Every group complete: leader, three sleeps that exec'd and, in a
	// spawned call's group, its sentinel (a forked call's lifeline is the
	// daemon's keeper: supervisor/keeper_linux.go).
	var pids []int
	proctest.WaitUntil(t, harness.Deadline(t), "every call's group to be complete", func() (bool, string) {
		ps := d.Alive(t)
		members, sleeps := map[int]int{}, map[int]int{}
		pids = pids[:0]
		for _, p := range ps {
			if pgids[p.PGID] {
				members[p.PGID]++
				if p.Comm == "sleep" {
					sleeps[p.PGID]++
				}
				pids = append(pids, p.PID)
			}
		}
		for g := range pgids {
			if members[g] != 4 && members[g] != 5 || sleeps[g] != 3 {
				return false, fmt.Sprintf("group %d: %d members, %d sleeps", g, members[g], sleeps[g])
			}
		}
		return true, ""
	})
	if err := d.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	gone := d.WaitNoneAlive(t, killed.Add(time.Second+rfScanSlack), "every call process to die within 1 s of the daemon's SIGKILL")
	t.Logf("%d call processes in %d groups; all dead %v after SIGKILL", len(pids), n, gone.Sub(killed).Round(time.Millisecond))
	d.WaitExit(t)
	if sig := d.Signalled(); sig != syscall.SIGKILL {
		t.Fatalf("daemon ended by %v, want SIGKILL", sig)
	}
	// Zombies are a separate criterion, and not the dead daemon's: its
	// orphans are reparented to the machine's init (or a subreaper above
	// the test), which reaps them on its own schedule.
	zombies := 0
	for _, pid := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && bytes.Contains(b, []byte(") Z ")) {
			zombies++
		}
	}
	t.Logf("%d of those %d processes are zombies awaiting their new reaper (not asserted)", zombies, len(pids))
}

// Scenario 1: daemon SIGKILLed with 50 calls in flight (tools ignore TERM,
// each with 3 children): no call process alive 1 s later.
func TestSIGKILLWith50CallsInFlight(t *testing.T) {
	d := harness.Start(t, rfServer(rfHold, []string{"hold"}, []string{"--max-concurrency", "64"}))
	rfKillWithCallsInFlight(t, d, 50)
}

// Scenario 2: a tool that detaches with setsid, with a double fork or with
// set -m. Documented outcome (README "What a call sees"): a process that
// left the call's process group outlives the call; whatever is still in
// the group when the tool returns is killed. A double fork alone does not
// leave the group, so it is contained. Either way the daemon, child
// subreaper, reaps the process: no zombie 2 s after it exits.
func TestDetachedToolsAreReaped(t *testing.T) {
	body := `
rf_linger() { rf_note "$1.pid" "$BASHPID"; rf_gate "$1.gate"; }
rf_started() { while [ ! -s "$RF_DIR/$1.pid" ]; do sleep 0.01; done; echo "started $$"; }
tool_setsid() { setsid bash -c 'echo "$$" >"$1.pid"; while [ ! -e "$1.gate" ]; do sleep 0.01; done' _ "$RF_DIR/setsid" & rf_started setsid; }
tool_setm() { set -m; rf_linger setm & set +m; rf_started setm; }
tool_doublefork() { ( ( rf_linger doublefork ) & ); rf_started doublefork; }
`
	d := harness.Start(t, rfServer(body, []string{"setsid", "setm", "doublefork"}, nil))
	daemon := d.Cmd.Process.Pid
	for i, name := range []string{"setsid", "setm", "doublefork"} {
		func() {
			line := d.RoundTrip(rfCall(strconv.Itoa(i+1), name, `{}`))
			r := harness.Parse(t, line)
			var pgid int
			if r.Result == nil || r.Result.IsError || func() bool { _, err := fmt.Sscanf(r.First(), "started %d", &pgid); return err != nil }() {
				t.Fatalf("%s call: %s", name, line)
			}
			pid := rfInt(t, d.Dir, name+".pid")
			if name == "doublefork" {
				// Still in the call's group when the tool returned: killed
				// by containment and reaped.
				proctest.WaitUntil(t, time.Now().Add(2*time.Second+rfScanSlack), "the double-forked process to be killed and reaped", func() (bool, string) {
					b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
					return err != nil, string(b)
				})
				return
			}
			// Answered while the detached process runs on, reparented to
			// the daemon (the subreaper), outside the call's group.
			p, ok := rfProc(t, pid)
			if !ok || p.State == 'Z' {
				t.Fatalf("detached process %d did not outlive its call: %v", pid, p)
			}
			if p.PGID == pgid || p.PPID != daemon {
				t.Fatalf("detached process %d: want parent %d (the daemon) and a group other than %d; got %v", pid, daemon, pgid, p)
			}
			if name == "setsid" && p.SID != pid {
				t.Fatalf("setsid process is not a session leader: %v", p)
			}
			rfTouch(t, d.Dir, name+".gate")
			proctest.WaitUntil(t, time.Now().Add(2*time.Second+rfScanSlack), name+": the detached process to exit and be reaped (no zombie)", func() (bool, string) {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				return err != nil, string(b)
			})
		}()
	}
	if z := rfZombieChildren(t, daemon); len(z) != 0 {
		t.Fatalf("zombie children of the daemon:%s", harness.List(z))
	}
	if ee := d.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v", ee)
	}
}

func rfProc(t *testing.T, pid int) (proctest.Proc, bool) {
	t.Helper()
	ps, err := proctest.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.PID == pid {
			return p, true
		}
	}
	return proctest.Proc{}, false
}

func rfZombieChildren(t *testing.T, parent int) []proctest.Proc {
	t.Helper()
	ps, err := proctest.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var out []proctest.Proc
	for _, p := range proctest.Zombies(ps) {
		if p.PPID == parent {
			out = append(out, p)
		}
	}
	return out
}

// Scenario 3: stdin EOF with 20 calls in flight: every call answered, exit
// 0 within grace + 1 s, every stdout line valid JSON, nothing left running.
func TestStdinEOFWith20CallsInFlight(t *testing.T) {
	body := `tool_gated() { rf_i "$1"; sleep 1000 & rf_note "ready.$RF_I"; rf_gate go; echo "done $RF_I"; }`
	d := harness.Start(t, rfServer(body, []string{"gated"}, []string{"--max-concurrency", "32"}))
	for i := 0; i < 20; i++ {
		d.Send(rfCall(strconv.Itoa(i), "gated", fmt.Sprintf(`{"i":%d}`, i)))
	}
	for i := 0; i < 20; i++ {
		rfLine(t, d.Dir, fmt.Sprintf("ready.%d", i))
	}
	d.Stdin.Close()
	// EOF is not a cancellation: the calls are still running.
	// Each has its shell and a sleep (and a spawned call its sentinel).
	if left := d.Alive(t); len(left) < 20*2 {
		t.Fatalf("calls stopped at EOF: only %d processes left:%s", len(left), harness.List(left))
	}
	rfTouch(t, d.Dir, "go")
	released := time.Now()
	seen := map[string]bool{}
	for _, line := range d.Drain(t) {
		r := harness.Parse(t, string(line))
		var i int
		if err := json.Unmarshal(r.ID, &i); err != nil || r.Result == nil || r.Result.IsError || r.First() != fmt.Sprintf("done %d", i) || seen[string(r.ID)] {
			t.Fatalf("unexpected line: %s", line)
		}
		seen[string(r.ID)] = true
	}
	d.WaitExit(t)
	exited := time.Since(released)
	if len(seen) != 20 {
		t.Fatalf("answered %d of 20 calls", len(seen))
	}
	if d.WaitErr != nil {
		t.Fatalf("exit after EOF: %v", d.WaitErr)
	}
	if limit := 2*time.Second + time.Second; exited > limit {
		t.Fatalf("exited %v after the last call was released, want within grace + 1 s (%v)", exited, limit)
	}
	t.Logf("exit 0 %v after the calls were released", exited.Round(time.Millisecond))
	d.WaitNoneAlive(t, harness.Deadline(t), "nothing of the calls left running")
}

// Scenario 4: the client closes the daemon's stdout with calls in flight.
// The daemon meets EPIPE on its next write, exits within grace + 1 s, uses
// < 0.2 s CPU after the EPIPE, and leaves nothing running.
func TestClientClosesStdout(t *testing.T) {
	const grace = 500 * time.Millisecond
	// The test reads the daemon's stdout itself (to close it).
	var stdin io.WriteCloser
	var outR, outW *os.File
	o := rfServer(rfHold, []string{"hold"}, []string{"--grace", grace.String()})
	o.Init = false
	p, l := harness.RunCmd(t, o, func(cmd *exec.Cmd) {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if outR, outW, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = outW
	})
	outW.Close()
	t.Cleanup(func() { stdin.Close() })
	cmd, stderr, done, dir := p.Cmd, p.Stderr, p.Done, l.Dir
	d := &harness.Daemon{T: t, Cmd: cmd, Layout: l}
	write := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(harness.InitLine)
	if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || !strings.Contains(line, `"protocolVersion"`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	for i := 0; i < 5; i++ {
		write(rfCall(strconv.Itoa(i), "hold", fmt.Sprintf(`{"i":%d}`, i)))
	}
	for i := 0; i < 5; i++ {
		rfLine(t, dir, fmt.Sprintf("hold.%d", i))
	}
	outR.Close()
	before, err := rfCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// The next write the daemon makes fails with EPIPE.
	write(`{"jsonrpc":"2.0","id":"epipe","method":"ping"}`)
	epipe := time.Now()
	select {
	case <-done:
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("daemon still running after EPIPE; stderr:\n%s", stderr.String())
	}
	exited := time.Since(epipe)
	if limit := grace + time.Second; exited > limit {
		t.Fatalf("exited %v after EPIPE, want within grace + 1 s (%v)", exited, limit)
	}
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() - before
	if used >= 200*time.Millisecond {
		t.Fatalf("daemon (and the children it reaped) used %v CPU after EPIPE, want < 0.2 s", used)
	}
	t.Logf("exited (%v) %v after EPIPE, %v CPU after it", cmd.ProcessState, exited.Round(time.Millisecond), used)
	d.WaitNoneAlive(t, harness.Deadline(t), "nothing of the calls left running")
}

// rfCPU is the CPU time pid and the children it has reaped have used so
// far (utime+stime+cutime+cstime), comparable with the rusage wait4 gives.
func rfCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // fields 14–17
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// rfTeardown is the server for scenario 5: an EXIT trap that writes to
// stdout (must land on stderr) and to a file, a long tool and its cancel
// hook, which records its argument and whether MCP_CALL_TMPDIR still
// exists and, when RF_HOOK_GATE is set, waits for the test.
const rfTeardown = `
trap 'echo "exit trap on stdout"; echo ran >>"$RF_DIR/exit-trap"' EXIT
tool_slow() { rf_note slow.pid; sleep 1000; }
tool_slow_cancel() {
	local tmp=no; [ -d "$MCP_CALL_TMPDIR" ] && tmp=yes
	rf_note hook "arg=[$1] tmpdir=$tmp"
	if [ -n "${RF_HOOK_GATE:-}" ]; then rf_note hook-ready; rf_gate "$RF_HOOK_GATE"; fi
	echo finished >>"$RF_DIR/hook-end"
}
`

// Scenario 5: SIGTERM (and SIGINT, SIGHUP) to the daemon with a call in
// flight: the call is cancelled (its hook runs with "") and answered
// "Server is shutting down", the script's EXIT
// trap runs with stdout on stderr, the daemon dies by the signal; a second
// SIGTERM while the cancel hook runs does not cut the teardown short.
func TestSignalTeardown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		second bool
	}{
		{"SIGTERM", syscall.SIGTERM, false},
		{"SIGTERM twice", syscall.SIGTERM, true},
		{"SIGINT", syscall.SIGINT, false},
		{"SIGHUP", syscall.SIGHUP, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var env []string
			if tc.second {
				env = append(env, "RF_HOOK_GATE=hook-go")
			}
			d := harness.Start(t, rfServer(rfTeardown, []string{"slow"}, nil, env...))
			d.Send(rfCall(`"slow"`, "slow", `{"x":1}`))
			pgid := rfInt(t, d.Dir, "slow.pid")
			pid := d.Cmd.Process.Pid
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			if tc.second {
				rfLine(t, d.Dir, "hook-ready")
				if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				rfWaitDelivered(t, pid, syscall.SIGTERM)
				rfTouch(t, d.Dir, "hook-go")
			}
			lines := d.Drain(t)
			d.WaitExit(t)
			if sig := d.Signalled(); sig != tc.sig {
				t.Fatalf("daemon ended with %v (signal %v), want death by %v", d.WaitErr, sig, tc.sig)
			}
			// The call was accepted: shutdown ends it with exactly one
			// answer (issue 23), and nothing else (the EXIT trap's stdout)
			// reaches stdout.
			if want := `{"jsonrpc":"2.0","id":"slow","error":{"code":-32004,"message":"Server is shutting down"}}`; len(lines) != 1 || string(lines[0]) != want {
				t.Fatalf("stdout after the signal: %q, want only %s", lines, want)
			}
			if got := rfLine(t, d.Dir, "hook"); got != "arg=[] tmpdir=yes" {
				t.Fatalf("cancel hook saw %q, want arg=[] (shutdown) and MCP_CALL_TMPDIR present", got)
			}
			if b, _ := os.ReadFile(filepath.Join(d.Dir, "hook-end")); string(b) != "finished\n" {
				t.Fatalf("cancel hook did not run to its end once: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(d.Dir, "exit-trap")); string(b) != "ran\n" {
				t.Fatalf("EXIT trap ran %q, want once", b)
			}
			if !strings.Contains(d.Stderr.String(), "exit trap on stdout") {
				t.Fatalf("the EXIT trap's stdout did not reach stderr:\n%s", d.Stderr)
			}
			if ps, _ := proctest.InGroup(pgid); len(proctest.Alive(ps)) != 0 {
				t.Fatalf("the call's group outlived the daemon:%s", harness.List(ps))
			}
			d.WaitNoneAlive(t, harness.Deadline(t), "nothing of the call left running")
		})
	}
}

// rfWaitDelivered waits until sig is no longer pending for pid (its
// handler has taken it), so a test knows the daemon has seen it.
func rfWaitDelivered(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (uint(sig) - 1)
	proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("%v to be delivered to %d", sig, pid), func() (bool, string) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return true, "" // gone: delivered (and fatal) — checked later
		}
		for _, task := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(b), "\n") {
				k, v, _ := strings.Cut(l, ":")
				if k != "SigPnd" && k != "ShdPnd" {
					continue
				}
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && n&bit != 0 {
					return false, "pending: " + l
				}
			}
		}
		return true, ""
	})
}
