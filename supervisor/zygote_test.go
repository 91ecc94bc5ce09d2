//go:build linux && !portable

package supervisor

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// whoTool reports what a call's shell is: $$, its pid from /proc (bash
// 3.2 has no BASHPID), RANDOM, BASH_SUBSHELL, PPID and the mode of the
// process as it was exec'd.
const whoTool = `tool_who() {
	IFS= read -r -d '' st </proc/self/stat
	m=$(tr '\0' '\n' </proc/$$/environ | grep '^__MCPBASHD_MODE=')
	echo "$$ ${st%% *} $RANDOM $BASH_SUBSHELL $PPID ${m#*=}"
}
`

// forkServer returns the pool's zygote once it is there.
func forkServer(t *testing.T, s *Supervisor) *zygote {
	t.Helper()
	var z *zygote
	waitFor(t, "the fork server", func() bool {
		s.warm.mu.Lock()
		defer s.warm.mu.Unlock()
		z = s.warm.zy
		return z != nil && len(s.warm.idle) > 0
	})
	return z
}

// A forked call's shell is the call's own, as a spawned one's: $$ is its
// pid (not the zygote's), RANDOM is seeded per call, BASH_SUBSHELL is 0,
// PPID is the daemon; and it was forked, not exec'd (its environment is
// the zygote's).
func TestForkedCallIsItsOwnShell(t *testing.T) {
	s, sn := newTestSupervisor(t, whoTool)
	s.Use(sn)
	z := forkServer(t, s)
	pids, randoms := map[string]bool{}, map[string]bool{}
	for i := 0; i < 4; i++ {
		waitFor(t, "an idle warm process", func() bool { return len(idleWarm(s)) > 0 })
		o := s.Call(context.Background(), Request{ID: strconv.Itoa(i), Tool: "who", Args: []byte(`{}`)})
		f := strings.Fields(string(o.Output))
		if len(f) != 6 {
			t.Fatalf("call %d: %q", i, o.Output)
		}
		if f[0] != f[1] {
			t.Errorf("call %d: $$ is %s, its pid %s", i, f[0], f[1])
		}
		if f[0] == strconv.Itoa(z.pid) {
			t.Errorf("call %d: $$ is the zygote's pid", i)
		}
		if f[3] != "0" || f[4] != strconv.Itoa(os.Getpid()) {
			t.Errorf("call %d: BASH_SUBSHELL %s, PPID %s, want 0 and %d", i, f[3], f[4], os.Getpid())
		}
		if f[5] != "zygote" {
			t.Errorf("call %d ran in a process exec'd in mode %q, not a fork", i, f[5])
		}
		pids[f[0]], randoms[f[2]] = true, true
	}
	if len(pids) != 4 {
		t.Errorf("4 calls ran in %d processes", len(pids))
	}
	if len(randoms) == 1 {
		t.Errorf("4 calls' first $RANDOM were all the same")
	}
}

// A zygote killed from outside is replaced: calls go on being answered,
// and forked again by the next one.
func TestForkServerKilledIsReplaced(t *testing.T) {
	s, sn := newTestSupervisor(t, whoTool)
	s.Use(sn)
	z := forkServer(t, s)
	if err := unix.Kill(-z.pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed zygote to be reaped", func() bool { return z.over() })
	for i := 0; i < 3; i++ {
		o := s.Call(context.Background(), Request{ID: strconv.Itoa(i), Tool: "who", Args: []byte(`{}`)})
		if f := strings.Fields(string(o.Output)); len(f) != 6 || f[0] != f[1] {
			t.Fatalf("call %d after the zygote was killed: %+v", i, o)
		}
	}
	z2 := forkServer(t, s)
	if z2 == z || z2.pid == z.pid {
		t.Fatalf("the killed zygote was not replaced")
	}
	if alive(z.pid) {
		t.Errorf("the killed zygote %d is still alive", z.pid)
	}
}

// NoFork: warm processes are spawned, each an exec.
func TestNoForkSpawnsWarmProcesses(t *testing.T) {
	s, sn := newTestSupervisor(t, whoTool)
	s.cfg.NoFork = true
	s.Use(sn)
	waitFor(t, "an idle warm process", func() bool { return len(idleWarm(s)) > 0 })
	o := s.Call(context.Background(), Request{ID: "1", Tool: "who", Args: []byte(`{}`)})
	if f := strings.Fields(string(o.Output)); len(f) != 6 || f[5] != "warm" {
		t.Fatalf("with NoFork the call ran in %q", o.Output)
	}
	s.warm.mu.Lock()
	defer s.warm.mu.Unlock()
	if s.warm.zy != nil {
		t.Errorf("a zygote was started with NoFork")
	}
}

// The address found for $$ holds the zygote's pid in the zygote (the
// calls' $$ written there: TestForkedCallIsItsOwnShell).
func TestDollarAddressIsBashs(t *testing.T) {
	s, sn := newTestSupervisor(t, whoTool)
	s.Use(sn)
	z := forkServer(t, s)
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/mem", z.pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if got, err := readPid(fd, z.dollar); err != nil || got != z.pid {
		t.Fatalf("$$ at the address found: %d, %v; want %d", got, err, z.pid)
	}
}

// A forked call keeps its args and values in a control directory on a
// tmpfs; its cancel hook, spawned in the call's root, still gets them.
func TestForkedCallCancelHookGetsArgs(t *testing.T) {
	marks := t.TempDir()
	s, sn := newTestSupervisor(t, `tool_nap() { : >"`+marks+`/started"; sleep 100; }
tool_nap_cancel() { printf '%s' "$1" >"`+marks+`/hook"; }
`)
	s.Use(sn)
	forkServer(t, s)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan Outcome, 1)
	go func() { done <- s.Call(ctx, Request{ID: "1", Tool: "nap", Args: []byte(`{"x":"forked"}`)}) }()
	waitFor(t, "the tool to start", func() bool { _, err := os.Stat(marks + "/started"); return err == nil })
	cancel(ErrCancelled)
	if o := <-done; o.End != Cancelled {
		t.Fatalf("outcome %+v, want cancelled", o)
	}
	if b, err := os.ReadFile(marks + "/hook"); err != nil || string(b) != `{"x":"forked"}` {
		t.Fatalf("cancel hook's $1: %q %v", b, err)
	}
}
