// RELIABILITY.md scenarios 6-11 and the sweep: cancellation (TERM-ignoring,
// compliant, races, stopped groups), sentinel sabotage, clean tool processes.

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// Scenario 6: notifications/cancelled for a tool that ignores TERM (it
// traps it and keeps running): TERM+CONT at once, KILL at grace ± 100 ms,
// no message for that id afterwards, other calls unaffected.
func TestCancelKillsATERMIgnoringTool(t *testing.T) {
	const grace = 500 * time.Millisecond
	body := `
tool_stubborn() {
	trap 'rf_note term "$EPOCHREALTIME"' TERM
	trap 'rf_note cont "$EPOCHREALTIME"' CONT
	rf_note stubborn.pid
	while :; do sleep 0.05; done
}
tool_other() { rf_note other.ready; rf_gate other.go; echo "other done"; }
tool_quick() { echo "quick $1"; }
`
	d := harness.Start(t, rfServer(body, []string{"stubborn", "other", "quick"}, []string{"--grace", grace.String()}))
	d.Send(rfCall(`"other"`, "other", `{}`))
	d.Send(rfCall(`"stub"`, "stubborn", `{}`))
	pgid := rfInt(t, d.Dir, "stubborn.pid")
	rfLine(t, d.Dir, "other.ready")

	cancelled := time.Now()
	d.Send(rfCancel(`"stub"`))
	d.Send(rfCall(`"quick"`, "quick", `{"n":1}`))
	gone := harness.WaitGroupGone(t, pgid, cancelled.Add(grace+time.Second+rfScanSlack))
	took := gone.Sub(cancelled)
	if took < grace-100*time.Millisecond || took > grace+time.Second {
		t.Fatalf("group gone %v after the cancel, want SIGKILL at the %v grace (lower bound %v, generous upper %v)", took, grace, grace-100*time.Millisecond, grace+time.Second)
	}
	termAt := rfEpoch(t, rfLine(t, d.Dir, "term")).Sub(cancelled)
	contAt := rfEpoch(t, rfLine(t, d.Dir, "cont")).Sub(cancelled)
	// The tool saw TERM and CONT at all, so both came before the KILL;
	// "at once" means well inside the grace.
	if termAt > grace-100*time.Millisecond || contAt > grace-100*time.Millisecond {
		t.Fatalf("TERM after %v, CONT after %v: not at once (grace %v)", termAt, contAt, grace)
	}
	t.Logf("TERM %v, CONT %v, group gone %v after the cancel (grace %v)", termAt.Round(time.Millisecond), contAt.Round(time.Millisecond), took.Round(time.Millisecond), grace)

	// Other calls unaffected; nothing ever comes for "stub".
	d.Expect(t, `"quick"`, `quick {"n":1}`, false)
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
		t.Fatalf("the line after the cancelled call's teardown: %s", got)
	}
	rfTouch(t, d.Dir, "other.go")
	d.Expect(t, `"other"`, "other done", false)
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("lines after the cancel: %q", lines)
	}
	d.WaitExit(t)
	if d.WaitErr != nil {
		t.Fatalf("exit: %v", d.WaitErr)
	}
}

func rfEpoch(t *testing.T, s string) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("not an EPOCHREALTIME: %q", s)
	}
	return time.Unix(a, b*1000)
}

// Scenario 6, the other half: a TERM-compliant tool's group is gone at
// once, not after the (default, 2 s) grace.
func TestCancelStopsATERMCompliantTool(t *testing.T) {
	d := harness.Start(t, rfServer(`tool_nap() { rf_note nap.pid; sleep 1000; }`, []string{"nap"}, nil))
	d.Send(rfCall("1", "nap", `{}`))
	pgid := rfInt(t, d.Dir, "nap.pid")
	cancelled := time.Now()
	d.Send(rfCancel("1"))
	took := harness.WaitGroupGone(t, pgid, harness.Deadline(t)).Sub(cancelled)
	if took > 1500*time.Millisecond {
		t.Fatalf("TERM-compliant group gone %v after the cancel, want well before the 2 s grace (< 1.5 s)", took)
	}
	t.Logf("group gone %v after the cancel", took.Round(time.Millisecond))
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("after the cancel: %s", got)
	}
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("lines after the cancel: %q", lines)
	}
}

// Scenario 7: cancel races over 1,000 calls of a fast tool — cancels sent
// before the response, racing it, after it, for unknown ids and with the
// id's type wrong ("7" for 7): at most one response per id, exactly one for
// every call whose cancel could not apply.
func TestCancelRaces(t *testing.T) {
	d := harness.Start(t, rfServer(`tool_fast() { echo "ok $1"; }`, []string{"fast"}, nil))
	const n = 1000
	type call struct {
		id    string
		class int // 0 before, 1 racing, 2 after, 3 wrong type, 4 none
	}
	// Cancels: class 0 on the line after its call; class 1 when the
	// response of a nearby class 4 call arrives; class 2 after its own
	// response; class 3 with the id's type wrong; class 4 never (but
	// cancels for unknown ids follow it).
	calls := make([]call, n)
	byID := map[string]int{}
	for i := 0; i < n; i++ {
		c := call{class: i % 5}
		switch c.class {
		case 1:
			c.id = fmt.Sprintf(`"r%d"`, i)
		case 3:
			if i%2 == 0 {
				c.id = strconv.Itoa(i)
			} else {
				c.id = fmt.Sprintf(`"%d"`, i)
			}
		default:
			c.id = strconv.Itoa(i)
		}
		calls[i] = c
		byID[c.id] = i
		d.Send(rfCall(c.id, "fast", fmt.Sprintf(`{"i":%d}`, i)))
		switch c.class {
		case 0:
			d.Send(rfCancel(c.id))
		case 3:
			if i%2 == 0 {
				d.Send(rfCancel(fmt.Sprintf(`"%d"`, i)))
			} else {
				d.Send(rfCancel(strconv.Itoa(i)))
			}
		case 4:
			d.Send(rfCancel(strconv.Itoa(100000 + i)))
			d.Send(rfCancel(fmt.Sprintf(`"u%d"`, i)))
		}
	}
	got := map[string]int{}
	record := func(line []byte) {
		r := harness.Parse(t, string(line))
		i, ok := byID[string(r.ID)]
		if !ok || r.Result == nil || r.Result.IsError || r.First() != fmt.Sprintf(`ok {"i":%d}`, i) {
			t.Fatalf("unexpected response: %s", line)
		}
		got[string(r.ID)]++
		switch calls[i].class {
		case 2:
			d.Send(rfCancel(string(r.ID))) // after its response: dropped
		case 4:
			// Racing: the calls sent just before and just after this one
			// are finishing or running now.
			for _, j := range []int{i - 3, i + 2} {
				if j >= 0 && j < n {
					d.Send(rfCancel(calls[j].id))
				}
			}
		}
	}
	// Every class 2, 3 and 4 call must be answered; read until they are,
	// then close stdin and collect whatever else comes until exit.
	for want := 3 * n / 5; ; {
		have := 0
		for id, k := range got {
			if c := calls[byID[id]].class; c >= 2 && k > 0 {
				have++
			}
		}
		if have == want {
			break
		}
		record(d.Recv())
	}
	d.Stdin.Close()
	for _, line := range d.Drain(t) {
		record(line)
	}
	d.WaitExit(t)
	if d.WaitErr != nil {
		t.Fatalf("exit: %v", d.WaitErr)
	}
	answered := [5]int{}
	for i, c := range calls {
		k := got[c.id]
		if k > 1 {
			t.Errorf("call %d (id %s) answered %d times", i, c.id, k)
		}
		if c.class >= 2 && k != 1 {
			t.Errorf("call %d (id %s, class %d) answered %d times, want exactly once", i, c.id, c.class, k)
		}
		answered[c.class] += k
	}
	t.Logf("answered of 200 each: cancel before %d, racing %d, after %d, wrong-type %d, none %d", answered[0], answered[1], answered[2], answered[3], answered[4])
	if answered[0] == n/5 {
		t.Fatalf("no cancel sent right after its call took effect: cancellation does nothing")
	}
	d.WaitNoneAlive(t, harness.Deadline(t), "nothing of the calls left running")
}

// Scenario 8: a tool kills its own sentinel, another runs `kill 0`. Each
// call is torn down (answered, nothing left running), the daemon survives,
// and scenario 1 still passes on the same daemon.
func TestSentinelSabotage(t *testing.T) {
	body := rfHold + `
# A spawned call's sentinel is the tool shell's child in its group
# (whether or not it is one of the shell's jobs); a forked call's lifeline
# is the daemon's keeper, the daemon's child with "# keeper" in its
# command line. Both found through /proc; a cold call may kill both.
tool_killsentinel() {
	local f line n=0 p cl
	local -a st
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		st=(${line##*) })
		p=${f#/proc/}
		p=${p%/stat}
		[ "${st[0]}" != Z ] || continue
		if [ "${st[1]}" = $$ ] && [ "${st[2]}" = $$ ]; then
			kill -KILL "$p" && n=$((n+1))
		elif [ "${st[1]}" = "$PPID" ]; then
			cl=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)
			case $cl in *'# keeper'*) kill -KILL "$p" && n=$((n+1)) ;; esac
		fi
	done
	sleep 1000 &
	echo "killed $n"
}
tool_killgroup() { sleep 1000 & echo before; kill 0; echo after; }
`
	d := harness.Start(t, rfServer(body, []string{"hold", "killsentinel", "killgroup"}, []string{"--max-concurrency", "64"}))
	d.Send(rfCall("1", "killsentinel", `{}`))
	// bash may report the killed job on the tool's output first; the
	// tool's own line comes last.
	if r := harness.Parse(t, string(d.Recv())); string(r.ID) != "1" || r.Result == nil || r.Result.IsError || !regexp.MustCompile(`(^|\n)killed [12]$`).MatchString(r.First()) {
		t.Fatalf("killsentinel: %+v %q", r, r.First())
	}
	d.Send(rfCall("2", "killgroup", `{}`))
	d.Expect(t, "2", "Error executing killgroup: before", true)
	d.WaitNoneAlive(t, harness.Deadline(t), "both calls torn down")
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("daemon after sabotage: %s", got)
	}
	rfKillWithCallsInFlight(t, d, 50)
}

// Scenario 9: a stopped group is still cancelled within grace + 1 s, both
// when the whole group is stopped and when a TERM-ignoring tool stops
// itself.
func TestStoppedGroupIsCancelled(t *testing.T) {
	const grace = 500 * time.Millisecond
	body := `
tool_stopgroup() { sleep 1000 & rf_note stopgroup.pid; kill -STOP 0; sleep 1000; }
tool_stopself() { trap '' TERM; rf_note stopself.pid; kill -STOP $$; sleep 1000; }
`
	d := harness.Start(t, rfServer(body, []string{"stopgroup", "stopself"}, []string{"--grace", grace.String()}))
	for i, name := range []string{"stopgroup", "stopself"} {
		func() {
			id := strconv.Itoa(i + 1)
			d.Send(rfCall(id, name, `{}`))
			pgid := rfInt(t, d.Dir, name+".pid")
			proctest.WaitUntil(t, harness.Deadline(t), name+": the tool to be stopped", func() (bool, string) {
				ps, err := proctest.InGroup(pgid)
				if err != nil {
					return false, err.Error()
				}
				stopped := 0
				for _, p := range ps {
					if p.State == 'T' {
						stopped++
					}
				}
				if name == "stopgroup" {
					// The tool, its sleep and a spawned call's sentinel.
					return stopped == len(ps) && len(ps) >= 2, harness.List(ps)
				}
				return stopped == 1, harness.List(ps)
			})
			cancelled := time.Now()
			d.Send(rfCancel(id))
			took := harness.WaitGroupGone(t, pgid, cancelled.Add(grace+time.Second+rfScanSlack)).Sub(cancelled)
			if took > grace+time.Second {
				t.Fatalf("%s: stopped group gone %v after the cancel, want within grace + 1 s", name, took)
			}
			t.Logf("%s: stopped group gone %v after the cancel", name, took.Round(time.Millisecond))
		}()
	}
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Fatalf("after the cancels: %s", got)
	}
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("cancelled calls answered: %q", lines)
	}
}

// Scenario 11: inside a tool no signal is blocked or ignored and no
// descriptor is open beyond 0, 1, 2 — except what the test process itself
// passes to every child (the baseline), and never the lifeline.
func TestToolProcessIsClean(t *testing.T) {
	const readMasks = `while read -r k v; do case $k in SigBlk:|SigIgn:) echo "$k $v";; esac; done </proc/self/status`
	body := `
tool_masks() { echo "== external"; grep -E '^Sig(Blk|Ign):' /proc/self/status | tr -d '\t' | sed 's/:/: /'; echo "== bash"; ` + readMasks + `; }
tool_fds() { sleep 1000 & rf_note fds.pid "$$ $!"; wait; }
`
	d := harness.Start(t, rfServer(body, []string{"masks", "fds"}, nil))

	// Baselines: the same commands started directly by the test.
	ext, err := exec.Command("bash", "-c", `grep -E '^Sig(Blk|Ign):' /proc/self/status | tr -d '\t' | sed 's/:/: /'`).Output()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := exec.Command("bash", "--noprofile", "--norc", "-c", readMasks).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "== external\n" + string(ext) + "== bash\n" + strings.TrimRight(string(sh), "\n")
	// A tool's shell forked by the fork server (supervisor/zygote_linux.go),
	// like the bash SDK's subshell, does not have the SIGQUIT a bash that
	// starts ignores for itself: nothing ignored at all there.
	forked := "== external\n" + string(ext) + "== bash\nSigBlk: 0000000000000000\nSigIgn: 0000000000000000"
	d.Send(rfCall("1", "masks", `{}`))
	r := harness.Parse(t, string(d.Recv()))
	if r.First() != want && r.First() != forked {
		t.Fatalf("signal masks inside a tool:\n%s\nwant (as for processes the test starts itself):\n%s", r.First(), want)
	}
	if !strings.Contains(string(ext), "SigBlk: 0000000000000000\nSigIgn: 0000000000000000") {
		t.Logf("note: the test process passes on non-default signal masks: %q", ext)
	}

	// Descriptors of the tool's shell and of a child it started.
	base := map[int]string{}
	fds, err := proctest.InheritableFDs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		base[fd], _ = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	}
	d.Send(rfCall("2", "fds", `{}`))
	var shell, child int
	fmt.Sscanf(rfLine(t, d.Dir, "fds.pid"), "%d %d", &shell, &child)
	for _, pid := range []int{shell, child} {
		open, err := proctest.OpenFDs(pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range open {
			if fd <= 2 {
				continue
			}
			target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
			if want, ok := base[fd]; !ok || want != target {
				t.Errorf("pid %d (%s) has fd %d -> %s open, which the test process does not pass on (its inheritable fds: %v)", pid, map[bool]string{true: "tool shell", false: "tool child"}[pid == shell], fd, target, base)
			}
		}
	}
	d.Send(rfCancel("2"))
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("unexpected lines: %q", lines)
	}
}

// Per-call roots left by a daemon that died by SIGKILL are removed when
// the next daemon starts on the same TMPDIR, but only when their owner is
// provably gone: a live daemon's root (with a call in flight) and a
// directory without an owner record are left alone.
func TestSweepRemovesOnlyDeadOwnersRoots(t *testing.T) {
	tmp := t.TempDir()
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  rfLib + `tool_hold() { rf_i "$1"; rf_note "root.$RF_I" "$MCP_CALL_TMPDIR"; rf_gate "go.$RF_I"; [ -d "$MCP_CALL_TMPDIR" ] && echo "root intact"; }`,
		"tools.json": harness.ToolsJSON("hold"),
	})
	live := harness.Start(t, rfIn(dir, tmp, nil))
	live.Send(rfCall("1", "hold", `{"i":"live"}`))
	liveRoot := filepath.Dir(rfLine(t, dir, "root.live"))

	dead := harness.Start(t, rfIn(dir, tmp, nil))
	dead.Send(rfCall("1", "hold", `{"i":"dead"}`))
	deadRoot := filepath.Dir(rfLine(t, dir, "root.dead"))
	deadRuntime := rfOwnedDirs(t, tmp, dead.Cmd.Process.Pid)
	liveDirs := rfOwnedDirs(t, tmp, live.Cmd.Process.Pid)
	if err := dead.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	dead.WaitExit(t)
	dead.WaitNoneAlive(t, harness.Deadline(t), "the killed daemon's call to die by its lifeline")
	if _, err := os.Stat(deadRoot); err != nil {
		t.Fatalf("precondition: the SIGKILLed daemon's call root should still exist: %v", err)
	}
	// Not ours to touch: no owner record.
	foreign := filepath.Join(tmp, "mcp-call.foreign")
	if err := os.Mkdir(foreign, 0o700); err != nil {
		t.Fatal(err)
	}

	next := harness.Start(t, rfIn(dir, tmp, nil)) // the sweep runs before it serves
	for _, p := range deadRuntime {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("dead daemon's %s not swept: %v", p, err)
		}
	}
	if len(deadRuntime) < 2 {
		t.Errorf("expected the dead daemon's runtime dir and call root, found %v", deadRuntime)
	}
	for _, p := range append(liveDirs, foreign) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	rfTouch(t, dir, "go.live")
	live.Expect(t, "1", "root intact", false)
	if _, err := os.Stat(liveRoot); !os.IsNotExist(err) {
		t.Errorf("live call root %s not removed when its call ended: %v", liveRoot, err)
	}
	if got := next.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("new daemon: %s", got)
	}
}

// rfOwnedDirs lists the mcp-bashd directories under tmp that belong to the
// daemon pid: its runtime directory (the one whose owner record the daemon
// holds open, locked) and the call roots whose owner record names it.
func rfOwnedDirs(t *testing.T, tmp string, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	runtime := ""
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && filepath.Base(target) == ".mcp-bashd-owner" && filepath.Dir(filepath.Dir(target)) == tmp {
			runtime = filepath.Dir(target)
		}
	}
	if runtime == "" {
		t.Fatalf("daemon %d holds no owner record under %s", pid, tmp)
	}
	out := []string{runtime}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		// A call root's record is a symlink to the runtime; the runtime's
		// own, a file holding its path.
		rec := filepath.Join(tmp, e.Name(), ".mcp-bashd-owner")
		owner, err := os.Readlink(rec)
		if err != nil {
			b, ferr := os.ReadFile(rec)
			owner, err = strings.TrimSpace(string(b)), ferr
		}
		if err == nil && owner == runtime && filepath.Join(tmp, e.Name()) != runtime {
			out = append(out, filepath.Join(tmp, e.Name()))
		}
	}
	return out
}
