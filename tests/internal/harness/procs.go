package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// MarkKey tags a daemon and every process it starts, so /proc scans find a
// call's processes even after they leave its group (RELIABILITY.md): a
// test puts MarkKey+"="+Mark(t, …) in the daemon's environment.
const MarkKey = "MCPBASHD_TEST_MARK"

// Mark is a marker value unique to the test (and to this test process).
func Mark(t testing.TB, prefix string) string {
	return prefix + "-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.Itoa(os.Getpid())
}

// Marked lists the live processes carrying mark, except the one with pid
// skip (the daemon, when it is expected to be still running).
func Marked(mark string, skip int) ([]proctest.Proc, error) {
	ps, err := proctest.WithEnv(MarkKey, mark)
	if err != nil {
		return nil, err
	}
	var out []proctest.Proc
	for _, p := range proctest.Alive(ps) {
		if p.PID != skip {
			out = append(out, p)
		}
	}
	return out, nil
}

// KillMarked SIGKILLs every live process carrying mark (cleanup after a
// failed test, so it leaves nothing running).
func KillMarked(mark string) {
	ps, err := proctest.WithEnv(MarkKey, mark)
	if err != nil {
		return
	}
	for _, p := range proctest.Alive(ps) {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

// WaitNoneLeft waits (up to Deadline) until no live process carries mark
// other than skip (-1: none spared), failing the test with the survivors.
// A daemon spared (skip, alive) keeps its keeper, which runs no call's
// code and lives as long as it does (supervisor/keeper_linux.go).
func WaitNoneLeft(t *testing.T, mark string, skip int, what string) {
	t.Helper()
	proctest.WaitUntil(t, Deadline(t), what, func() (bool, string) {
		marked, err := Marked(mark, skip)
		if err != nil {
			return false, err.Error()
		}
		left := marked[:0]
		for _, p := range marked {
			if skip <= 0 || p.PPID != skip || !IsKeeper(p) {
				left = append(left, p)
			}
		}
		return len(left) == 0, describe(left)
	})
}

// WaitGone waits (up to Deadline) until pid has exited (or is a zombie
// nobody reaped yet), failing the test if it is still running.
func WaitGone(t *testing.T, pid int, what string) {
	t.Helper()
	proctest.WaitUntil(t, Deadline(t), what, func() (bool, string) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true, ""
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return len(f) > 0 && (f[0] == "Z" || f[0] == "X"), string(b)
	})
}

func describe(ps []proctest.Proc) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, "; ")
}

// AliveAll lists the live (non-zombie) processes carrying the daemon's
// marker (Options.Mark), the daemon itself excluded.
func (d *Daemon) AliveAll(t *testing.T) []proctest.Proc {
	t.Helper()
	if d.Mark == "" {
		t.Fatal("AliveAll: the daemon was started without Options.Mark")
	}
	ps, err := Marked(d.Mark, d.PID())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// Alive is AliveAll without the idle warm call processes, the keeper and the fork
// server: a warm process (and its sentinel) shows "# warm" in its command
// line until it is handed a call, the fork server "# fork", so no process
// showing either ever ran a call's code, and the daemon keeps them between
// calls (warm_test.go checks them).
func (d *Daemon) Alive(t *testing.T) []proctest.Proc {
	t.Helper()
	var out []proctest.Proc
	for _, p := range d.AliveAll(t) {
		if !IsIdleWarm(p) && !IsForkServer(p) && !IsKeeper(p) {
			out = append(out, p)
		}
	}
	return out
}

// IsIdleWarm reports whether p is a warm call process, or its sentinel,
// not handed a call yet.
func IsIdleWarm(p proctest.Proc) bool {
	return len(p.Cmdline) > 4 && strings.HasPrefix(p.Cmdline[4], `. "$__MCPBASHD_WORKER" # warm`)
}

// IsForkServer reports whether p is the daemon's fork server (the zygote
// warm processes are forked from, supervisor/zygote_linux.go), its
// sentinel, or a fork of it not yet named: no call's code runs there.
func IsForkServer(p proctest.Proc) bool {
	return len(p.Cmdline) > 4 && strings.HasPrefix(p.Cmdline[4], `. "$__MCPBASHD_WORKER" # fork`)
}

// IsKeeper reports whether p is the daemon's keeper, which kills forked
// calls' groups when the daemon dies (supervisor/keeper_linux.go): it runs
// no call's code, and lives as long as the daemon.
func IsKeeper(p proctest.Proc) bool {
	return len(p.Cmdline) > 4 && strings.HasPrefix(p.Cmdline[4], `. "$__MCPBASHD_WORKER" # keeper`)
}

// List formats processes for a failure message, one per line.
func List(ps []proctest.Proc) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %v", p)
	}
	return b.String()
}

// WaitNoneAlive waits until no process of the daemon's calls is alive
// (Alive is empty) and returns when it saw that.
func (d *Daemon) WaitNoneAlive(t *testing.T, until time.Time, what string) time.Time {
	t.Helper()
	var at time.Time
	proctest.WaitUntil(t, until, what, func() (bool, string) {
		left := d.Alive(t)
		at = time.Now()
		return len(left) == 0, fmt.Sprintf("%d alive:%s", len(left), List(left))
	})
	return at
}

// WaitGroupGone waits until no live process is in group pgid and returns
// when it saw that.
func WaitGroupGone(t *testing.T, pgid int, until time.Time) time.Time {
	t.Helper()
	var at time.Time
	proctest.WaitUntil(t, until, fmt.Sprintf("process group %d to be gone", pgid), func() (bool, string) {
		ps, err := proctest.InGroup(pgid)
		if err != nil {
			return false, err.Error()
		}
		at = time.Now()
		left := proctest.Alive(ps)
		return len(left) == 0, List(left)
	})
	return at
}

// Drain reads the daemon's stdout to EOF (after stdin was closed or the
// daemon died), checking each line as Recv does, and returns the lines.
func (d *Daemon) Drain(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	timeout := time.After(time.Until(Deadline(t)))
	for {
		select {
		case line, ok := <-d.Lines:
			if !ok {
				return out
			}
			d.Check(line)
			out = append(out, bytes.TrimSuffix(line, []byte("\n")))
		case <-timeout:
			t.Fatalf("stdout not closed before the deadline; stderr:\n%s", d.Stderr)
		}
	}
}

// WaitExit waits for the daemon to exit (failing the test at the deadline).
func (d *Daemon) WaitExit(t *testing.T) {
	t.Helper()
	select {
	case <-d.Done:
	case <-time.After(time.Until(Deadline(t))):
		t.Fatalf("daemon did not exit; stderr:\n%s", d.Stderr)
	}
}

// Signalled is the signal that ended the daemon (0: it exited).
func (d *Daemon) Signalled() syscall.Signal {
	ws := d.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// Expect reads the next line and fails the test unless it answers id (a
// JSON literal) with a result whose first text is text, with isError.
func (d *Daemon) Expect(t *testing.T, id, text string, isError bool) {
	t.Helper()
	line := d.Recv()
	r := Parse(t, string(line))
	got := ""
	if r.Result != nil && len(r.Result.Content) > 0 {
		got = r.Result.Content[0].Text
	}
	if string(r.ID) != id || r.Result == nil || got != text || r.Result.IsError != isError {
		t.Fatalf("want id %s text %q isError %v; got %s", id, text, isError, line)
	}
}
