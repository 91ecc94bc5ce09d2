package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const markerKey = "PROCTEST_MARKER"

// marker returns a value unique to this test run, so parallel tests (and
// other test binaries running at the same time) never see each other's
// children.
func marker(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"), os.Getpid(), time.Now().UnixNano())
}

// child is a started process that the test must reap exactly once.
type child struct {
	cmd  *exec.Cmd
	once sync.Once
	err  error
}

// wait reaps the child (idempotent), so a test can reap explicitly and the
// cleanup does not reap twice.
func (c *child) wait() error {
	c.once.Do(func() { c.err = c.cmd.Wait() })
	return c.err
}

// spawn starts `sleep 60` (or args) with the marker in its environment and
// the given process attributes. Cleanup kills and reaps it, so a failing
// test leaves nothing behind either.
func spawn(t *testing.T, mark string, attr *syscall.SysProcAttr, extra []*os.File, args ...string) *child {
	t.Helper()
	if len(args) == 0 {
		args = []string{"sleep", "60"}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), markerKey+"="+mark)
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = extra
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", args, err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = c.wait()
	})
	return c
}

func pidsOf(ps []Proc) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.PID)
	}
	slices.Sort(out)
	return out
}

func findPID(ps []Proc, pid int) (Proc, bool) {
	for _, p := range ps {
		if p.PID == pid {
			return p, true
		}
	}
	return Proc{}, false
}

// waitExec waits until pid shows the comm of the program it exec'd; the
// fork→exec window is short but real.
func waitExec(t *testing.T, pid int, comm string) Proc {
	t.Helper()
	var got Proc
	WaitUntil(t, time.Now().Add(5*time.Second), fmt.Sprintf("pid %d to exec %s", pid, comm), func() (bool, string) {
		ps, err := Scan()
		if err != nil {
			return false, err.Error()
		}
		p, ok := findPID(ps, pid)
		if !ok {
			return false, "not in /proc"
		}
		got = p
		return p.Comm == comm && len(p.Cmdline) > 0, p.String()
	})
	return got
}

func TestScanFindsChild(t *testing.T) {
	t.Parallel()
	c := spawn(t, marker(t), &syscall.SysProcAttr{Setpgid: true}, nil)
	pid := c.cmd.Process.Pid
	p := waitExec(t, pid, "sleep")
	// The syscall package has no Getsid wrapper; ask the kernel directly.
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if p.PPID != os.Getpid() || p.PGID != pid || p.SID != int(sid) {
		t.Errorf("ids: got %v, want ppid=%d pgid=%d sid=%d", p, os.Getpid(), pid, sid)
	}
	if !slices.Equal(p.Cmdline, []string{"sleep", "60"}) {
		t.Errorf("cmdline = %q", p.Cmdline)
	}
	if p.State != 'S' && p.State != 'R' {
		t.Errorf("state = %c, want S or R", p.State)
	}
	// Our own process must be in the list too, with our own comm.
	ps, err := Scan()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := findPID(ps, os.Getpid()); !ok {
		t.Errorf("Scan misses the test process itself")
	}
}

func TestWithEnvAndInGroup(t *testing.T) {
	t.Parallel()
	mark := marker(t)
	leader := spawn(t, mark, &syscall.SysProcAttr{Setpgid: true}, nil)
	lpid := leader.cmd.Process.Pid
	// A second member joins the leader's group, like a pipeline in bash.
	member := spawn(t, mark, &syscall.SysProcAttr{Setpgid: true, Pgid: lpid}, nil)
	// An escapee: setsid leaves the group and session, but keeps the env.
	escapee := spawn(t, mark, &syscall.SysProcAttr{Setsid: true}, nil)
	// Same program, no marker: must not match.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	for _, c := range []*child{leader, member, escapee} {
		waitExec(t, c.cmd.Process.Pid, "sleep")
	}

	got, err := WithEnv(markerKey, mark)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{lpid, member.cmd.Process.Pid, escapee.cmd.Process.Pid}
	slices.Sort(want)
	if !slices.Equal(pidsOf(got), want) {
		t.Errorf("WithEnv = %v, want pids %v", got, want)
	}
	// A prefix of the value is not a match: "exactly KEY=VALUE".
	if got, _ := WithEnv(markerKey, mark[:len(mark)-1]); len(got) != 0 {
		t.Errorf("WithEnv matched a prefix: %v", got)
	}

	grp, err := InGroup(lpid)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{lpid, member.cmd.Process.Pid}; !slices.Equal(pidsOf(grp), want) {
		t.Errorf("InGroup(%d) = %v, want %v", lpid, grp, want)
	}
	epid := escapee.cmd.Process.Pid
	if p, _ := findPID(got, epid); p.SID != epid || p.PGID != epid {
		t.Errorf("escapee not in its own session: %v", p)
	}
}

// TestRightAfterStart scans immediately after cmd.Start, with no waiting:
// the child may still be inside execve with empty cmdline/environ, and a
// leak scan must find it anyway.
func TestRightAfterStart(t *testing.T) {
	t.Parallel()
	for i := 0; i < 20; i++ {
		mark := fmt.Sprintf("%s-%d", marker(t), i)
		c := spawn(t, mark, &syscall.SysProcAttr{Setpgid: true}, nil)
		var got []Proc
		var err error
		if i%2 == 0 {
			// read is what Scan does per process; calling it directly keeps
			// the gap after Start as short as possible.
			var p Proc
			p, _, err = read(c.cmd.Process.Pid)
			got = []Proc{p}
		} else {
			got, err = WithEnv(markerKey, mark)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].PID != c.cmd.Process.Pid || len(got[0].Cmdline) == 0 {
			t.Fatalf("iteration %d: read/WithEnv right after Start = %v", i, got)
		}
		_ = c.cmd.Process.Kill()
		_ = c.wait()
	}
}

func TestZombieThenReaped(t *testing.T) {
	t.Parallel()
	mark := marker(t)
	c := spawn(t, mark, &syscall.SysProcAttr{Setpgid: true}, nil)
	pid := c.cmd.Process.Pid
	waitExec(t, pid, "sleep")

	// Look by group, not by marker: a zombie's environ is empty.
	find := func() ([]Proc, string) {
		ps, err := InGroup(pid)
		if err != nil {
			return nil, err.Error()
		}
		return ps, fmt.Sprint(ps)
	}
	if ps, desc := find(); len(Alive(ps)) != 1 || len(Zombies(ps)) != 0 {
		t.Fatalf("before kill: %s", desc)
	}

	// Kill without reaping: the child must become a zombie.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	WaitUntil(t, time.Now().Add(5*time.Second), "child to become a zombie", func() (bool, string) {
		ps, desc := find()
		return len(Zombies(ps)) == 1 && len(Alive(ps)) == 0, desc
	})
	ps, _ := find()
	if z := Zombies(ps)[0]; z.PID != pid || z.State != 'Z' || len(z.Cmdline) != 0 {
		t.Errorf("zombie = %v", z)
	}
	if _, err := RSSKiB(pid); err == nil {
		t.Errorf("RSSKiB of a zombie should fail")
	}
	// A zombie keeps no environment, which is why leak tests must also
	// scan by group or parent.
	if got, _ := WithEnv(markerKey, mark); len(got) != 0 {
		t.Errorf("WithEnv found the zombie: %v", got)
	}

	_ = c.wait()
	WaitUntil(t, time.Now().Add(5*time.Second), "reaped child to leave /proc", func() (bool, string) {
		ps, desc := find()
		return len(ps) == 0, desc
	})
}

func TestSignalMasks(t *testing.T) {
	t.Parallel()
	// SIG_IGN survives execve, so sleep inherits the ignored SIGUSR1 from
	// the shell that exec'd it. That is exactly the inheritance the daemon
	// has to undo before running tools.
	c := spawn(t, marker(t), &syscall.SysProcAttr{Setpgid: true}, nil,
		"sh", "-c", `trap "" USR1; exec sleep 60`)
	pid := c.cmd.Process.Pid
	waitExec(t, pid, "sleep")
	_, ignored, err := SignalMasks(pid)
	if err != nil {
		t.Fatal(err)
	}
	usr1 := uint64(1) << (uint(syscall.SIGUSR1) - 1)
	if ignored&usr1 == 0 {
		t.Errorf("SigIgn = %#x, want SIGUSR1 bit %#x", ignored, usr1)
	}
	if _, _, err := SignalMasks(os.Getpid()); err != nil {
		t.Errorf("own masks: %v", err)
	}
}

func TestParseStatusMasks(t *testing.T) {
	m := parseStatus([]byte("Name:\tbash\nSigQ:\t0/63430\nSigBlk:\t0000000000010000\nSigIgn:\t0000000000384004\nVmRSS:\t    3456 kB\n"))
	b, err := hexField(m, "SigBlk")
	if err != nil || b != 1<<(uint(syscall.SIGCHLD)-1) {
		t.Errorf("SigBlk = %#x, %v", b, err)
	}
	i, err := hexField(m, "SigIgn")
	if err != nil || i != 0x384004 {
		t.Errorf("SigIgn = %#x, %v", i, err)
	}
	if m["VmRSS"] != "3456 kB" {
		t.Errorf("VmRSS = %q", m["VmRSS"])
	}
	if _, err := hexField(m, "ShdPnd"); err == nil {
		t.Errorf("missing field should fail")
	}
}

func TestParseStatOddComm(t *testing.T) {
	// comm may contain spaces and parentheses.
	p, flags, err := parseStat([]byte("4242 (a) b (c) S 1 4242 4000 0 -1 4194560 ...\n"))
	if err != nil {
		t.Fatal(err)
	}
	if flags != 4194560 {
		t.Errorf("flags = %d", flags)
	}
	// kthreadd-style flags carry PF_KTHREAD.
	if _, kf, err := parseStat([]byte("2 (kthreadd) S 0 0 0 0 -1 2129984 0")); err != nil || kf&pfKthread == 0 {
		t.Errorf("kthread flags = %#x, %v", kf, err)
	}
	want := Proc{PID: 4242, PPID: 1, PGID: 4242, SID: 4000, State: 'S', Comm: "a) b (c"}
	if p.PID != want.PID || p.PPID != want.PPID || p.PGID != want.PGID || p.SID != want.SID ||
		p.State != want.State || p.Comm != want.Comm {
		t.Errorf("got %v, want %v", p, want)
	}
	for _, bad := range []string{"", "12 sleep S 1 2 3 0 -1 0", "12 (x) S 1", "12 (x) SS 1 2 3 0 -1 0", "12 (x) S 1 2 3 0 -1 zz"} {
		if _, _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func TestOpenFDsAndRSS(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// ExtraFiles[0] becomes fd 3. Everything else the child has must be
	// something this test binary itself inherited without close-on-exec
	// (the harness that started `go test` may leak fds into us).
	base, err := InheritableFDs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 1, 2, 3}
	for _, fd := range base {
		if fd > 3 {
			want = append(want, fd)
		}
	}
	c := spawn(t, marker(t), &syscall.SysProcAttr{Setpgid: true}, []*os.File{w})
	pid := c.cmd.Process.Pid
	waitExec(t, pid, "sleep")
	fds, err := OpenFDs(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fds, want) {
		t.Errorf("OpenFDs = %v, want %v (inheritable in test binary: %v)", fds, want, base)
	}
	// In the child nothing is close-on-exec: sleep never sets the flag.
	if inh, err := InheritableFDs(pid); err != nil || !slices.Equal(inh, fds) {
		t.Errorf("InheritableFDs(child) = %v, %v; want %v", inh, err, fds)
	}
	rss, err := RSSKiB(pid)
	if err != nil || rss <= 0 {
		t.Errorf("RSSKiB = %d, %v", rss, err)
	}
	if _, err := OpenFDs(1 << 30); err == nil {
		t.Errorf("OpenFDs of a missing pid should fail")
	}
}

// fakeTB records Fatalf instead of stopping the goroutine, to test the
// timeout path of WaitUntil.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

func TestWaitUntil(t *testing.T) {
	t.Parallel()
	calls := 0
	WaitUntil(t, time.Now().Add(5*time.Second), "third call", func() (bool, string) {
		calls++
		return calls == 3, fmt.Sprint(calls)
	})
	if calls != 3 {
		t.Errorf("calls = %d", calls)
	}

	f := &fakeTB{TB: t}
	calls = 0
	WaitUntil(f, time.Now().Add(-time.Second), "the impossible", func() (bool, string) {
		calls++
		return false, "still stuck"
	})
	if calls != 1 {
		t.Errorf("past deadline: fn called %d times, want exactly 1", calls)
	}
	if !strings.Contains(f.msg, "the impossible") || !strings.Contains(f.msg, "still stuck") {
		t.Errorf("failure message %q lacks what/last description", f.msg)
	}

	f = &fakeTB{TB: t}
	start := time.Now()
	WaitUntil(f, start.Add(50*time.Millisecond), "never", func() (bool, string) { return false, "no" })
	if el := time.Since(start); f.msg == "" || el < 50*time.Millisecond || el > 2*time.Second {
		t.Errorf("timeout after %v, msg %q", el, f.msg)
	}
}
