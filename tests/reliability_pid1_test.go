package tests

// Scenario 10 of RELIABILITY.md: mcp-bashd as PID 1 of a new pid
// namespace (the container entrypoint case), run through
// `unshare -fp --mount-proc` where the kernel allows it.

import (
	"encoding/json"
	"fmt"
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

// rpUnshare returns the unshare command, or skips with the reason the
// machine cannot make a pid namespace.
func rpUnshare(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) not installed: cannot run mcp-bashd as PID 1 of a new pid namespace")
	}
	out, err := exec.Command(path, "-fp", "--mount-proc", "bash", "--noprofile", "--norc", "-c", `echo $$`).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("unshare -fp --mount-proc not permitted here (%v): %s", err, out)
	}
	return path
}

// rpNSPid1 finds the daemon's host pid (the child unshare forked) and
// checks it is PID 1 in its namespace.
func rpNSPid1(t *testing.T, unsharePID int) int {
	t.Helper()
	var pid int
	proctest.WaitUntil(t, harness.Deadline(t), "mcp-bashd to run as unshare's child", func() (bool, string) {
		ps, err := proctest.Scan()
		if err != nil {
			return false, err.Error()
		}
		for _, p := range ps {
			if p.PPID == unsharePID && p.Comm == "mcp-bashd" {
				pid = p.PID
				return true, ""
			}
		}
		return false, "no child named mcp-bashd"
	})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "NSpid:"); ok {
			if f := strings.Fields(v); len(f) < 2 || f[len(f)-1] != "1" {
				t.Fatalf("mcp-bashd is not PID 1 of a new namespace: NSpid %q", v)
			}
			return pid
		}
	}
	t.Fatal("no NSpid in /proc status")
	return 0
}

// Scenario 10: as PID 1, 1,000 calls each leave 10 orphans (five killed by
// the call's containment, five escaped with setsid that exit by
// themselves): zero zombies in the namespace 3 s later, and every call's
// result carries the tool's own exit status. Then SIGTERM to PID 1 tears
// down (in-flight call cancelled, EXIT trap run) and exits 143: PID 1
// cannot die by its own signal.
func TestPID1ReapsOrphansAndExits143(t *testing.T) {
	unshare := rpUnshare(t)
	body := `
trap 'echo ran >>"$RF_DIR/exit-trap"' EXIT
tool_orphans() {
	rf_i "$1"
	local j
	for j in 1 2 3 4 5; do (sleep 0.05 &); done
	for j in 1 2 3 4 5; do (setsid sleep 0.05 &); done
	echo "i=$RF_I"
	return $((RF_I % 3))
}
tool_zombies() {
	local n=0 f line st
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		st=${line##*) }
		[ "${st%% *}" = Z ] && n=$((n+1))
	done
	echo "$n"
}
# The counter's self-check: a child that exec's a program which never
# reaps leaves a zombie the count must see.
tool_zcheck() {
	(sleep 0 & exec sleep 0.3) &
	local k n
	for k in $(seq 100); do n=$(tool_zombies); [ "$n" -gt 0 ] && break; sleep 0.01; done
	echo "$n"
}
tool_slow() { rf_note slow.pid; sleep 1000; }
`
	dir := harness.WriteFiles(t, map[string]string{"server.sh": rfLib + body, "tools.json": harness.ToolsJSON("orphans", "zombies", "zcheck", "slow")})
	o := rfIn(dir, "", nil)
	o.Exe, o.Args, o.Init = unshare, []string{"-fp", "--mount-proc", harness.Binary, filepath.Join(dir, "server.sh")}, false
	d := harness.Start(t, o)
	cmd := d.Cmd
	daemon := rpNSPid1(t, cmd.Process.Pid)
	d.RoundTrip(harness.InitLine)

	if r := harness.Parse(t, d.RoundTrip(rfCall(`"zcheck"`, "zcheck", `{}`))); r.First() == "0" || r.First() == "" {
		t.Fatalf("the zombie counter does not see a zombie: %q", r.First())
	}

	const n = 1000
	start := time.Now()
	for i := 0; i < n; i++ {
		d.Send(rfCall(strconv.Itoa(i), "orphans", fmt.Sprintf(`{"i":%d}`, i)))
	}
	seen := map[int]bool{}
	for k := 0; k < n; k++ {
		line := d.Recv()
		r := harness.Parse(t, string(line))
		var i int
		if err := json.Unmarshal(r.ID, &i); err != nil || r.Result == nil || seen[i] {
			t.Fatalf("unexpected line: %s", line)
		}
		seen[i] = true
		want := fmt.Sprintf("i=%d", i)
		if i%3 != 0 {
			want = "Error executing orphans: " + want
		}
		if r.First() != want || r.Result.IsError != (i%3 != 0) {
			t.Fatalf("call %d returned %d: got %s", i, i%3, line)
		}
	}
	last := time.Now()
	t.Logf("%d calls, %d orphans, in %v", n, 10*n, last.Sub(start).Round(time.Millisecond))

	// Zero zombies in the namespace, counted from inside it and, at the
	// same moment, as children of PID 1 seen from the host. Escaped orphans
	// (setsid sleeps) are still exiting after the last call; each is a
	// zombie for the instant before the reaper gets to it, so the criterion
	// is "zero by 3 s after the last call", checked until then.
	var zombies string
	id := 0
	proctest.WaitUntil(t, last.Add(3*time.Second), "zero zombies in the namespace 3 s after the last call", func() (bool, string) {
		id++
		r := harness.Parse(t, d.RoundTrip(rfCall(fmt.Sprintf(`"z%d"`, id), "zombies", `{}`)))
		zombies = r.First()
		if zombies != "0" {
			return false, "zombies counted inside: " + zombies
		}
		if z := rfZombieChildren(t, daemon); len(z) != 0 {
			return false, "zombie children of PID 1 seen from the host:" + harness.List(z)
		}
		return true, ""
	})
	t.Logf("zero zombies %v after the last call", time.Since(last).Round(time.Millisecond))

	// SIGTERM with a call in flight.
	d.Send(rfCall(`"slow"`, "slow", `{}`))
	rfLine(t, dir, "slow.pid")
	if err := syscall.Kill(daemon, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The call shutdown ended is answered once, saying so (issue 23).
	if lines, want := d.Drain(t), `{"jsonrpc":"2.0","id":"slow","error":{"code":-32004,"message":"Server is shutting down"}}`; len(lines) != 1 || strings.TrimSpace(string(lines[0])) != want {
		t.Fatalf("stdout after SIGTERM: %q, want the one line %s", lines, want)
	}
	d.WaitExit(t)
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("PID 1 ended with %v, want exit status 143", cmd.ProcessState)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "exit-trap")); string(b) != "ran\n" {
		t.Fatalf("EXIT trap ran %q, want once", b)
	}
	d.WaitNoneAlive(t, harness.Deadline(t), "nothing of the namespace left running")
}

// The sweep of dead daemons' roots must spare a live daemon in another pid
// namespace sharing TMPDIR (a container with a bind-mounted /tmp): its
// owner record names a pid of its own namespace, so from here its owner is
// not provably gone.
func TestPID1SweepSparesRootsOfAnotherNamespace(t *testing.T) {
	unshare := rpUnshare(t)
	tmp := t.TempDir()
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  rfLib + `tool_hold() { rf_i "$1"; rf_note "root.$RF_I" "$MCP_CALL_TMPDIR"; rf_gate "go.$RF_I"; [ -d "$MCP_CALL_TMPDIR" ] && echo "root intact"; }`,
		"tools.json": harness.ToolsJSON("hold"),
	})
	o := rfIn(dir, tmp, nil)
	o.Exe, o.Args, o.Init, o.Log = unshare, []string{"-fp", "--mount-proc", harness.Binary, filepath.Join(dir, "server.sh")}, false, false
	inner := harness.Start(t, o)
	rpNSPid1(t, inner.PID())
	inner.RoundTrip(harness.InitLine)
	inner.Send(rfCall("1", "hold", `{"i":"inner"}`))
	root := filepath.Dir(rfLine(t, dir, "root.inner"))

	outer := harness.Start(t, rfIn(dir, tmp, nil)) // sweeps tmp before serving
	_, err := os.Stat(root)
	rfTouch(t, dir, "go.inner")
	got := inner.Recv()
	if err != nil {
		t.Fatalf("a daemon outside the namespace swept the live PID 1 daemon's call root %s: %v (answer: %s)", root, err, got)
	}
	if r := harness.Parse(t, string(got)); r.First() != "root intact" {
		t.Fatalf("the in-flight call lost its root: %s", got)
	}
	outer.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
}
