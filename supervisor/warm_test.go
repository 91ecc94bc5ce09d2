//go:build linux && !portable

package supervisor

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// The address of the ps comment in a warm process's argv: found from
// AT_EXECFN, it is where /proc/PID/stat's arg_start says argv starts plus
// the comment's offset, and writing there changes what /proc/PID/cmdline
// (ps) shows.
func TestOpenArgvFindsTheComment(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	field := "warm     "
	argv := []string{bash, "--noprofile", "--norc", "-c", "echo ready; read -r x # " + field, "ZERO", "arg one"}
	env := []string{"A=1", "LONGER_VARIABLE=" + strings.Repeat("v", 300)}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	pid, err := syscall.ForkExec(bash, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{r.Fd(), in.Fd(), 2}})
	r.Close()
	in.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		w.Close()
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	}()
	// Its exec is complete once it runs a command (openArgv's condition).
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	off := len(bash) + 1 + len("--noprofile") + 1 + len("--norc") + 1 + len("-c") + 1 + len(argv[4]) - len(field)
	fd, at := openArgv(pid, off, []byte(field), bash, argv, env)
	if fd < 0 {
		t.Fatal("openArgv found no argv")
	}
	defer unix.Close(fd)
	proc := "/proc/" + strconv.Itoa(pid)
	if start := argStart(proc); start+int64(off) != at {
		t.Fatalf("AT_EXECFN says %#x, arg_start %#x + %d = %#x", at, start, off, start+int64(off))
	}
	if _, err := unix.Pwrite(fd, []byte("call echo"), at); err != nil {
		t.Fatal(err)
	}
	cl, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# call echo\x00ZERO\x00arg one\x00"; !strings.HasSuffix(string(cl), want) {
		t.Fatalf("cmdline %q, want it to end %q", cl, want)
	}
	// Nothing is written where the bytes are not the ones expected.
	if fd2, _ := openArgv(pid, off, []byte("other    "), bash, argv, env); fd2 >= 0 {
		unix.Close(fd2)
		t.Fatal("openArgv accepted an address holding other bytes")
	}
}

// idleWarm returns the pids of the pool's idle warm processes.
func idleWarm(s *Supervisor) []int {
	s.warm.mu.Lock()
	defer s.warm.mu.Unlock()
	var pids []int
	for _, w := range s.warm.idle {
		pids = append(pids, w.pid)
	}
	return pids
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z'
}

// Warm processes are started when a snapshot is put in use, retired after
// WarmIdle without a call (their processes gone), started again by the
// next call, and killed by Close.
func TestWarmIdleRetiresAndCloseKills(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(path, []byte("tool_echo() { echo \"$1\"; }\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	t.Setenv("TMPDIR", dir)
	s, err := New(Config{Bash: bash, Script: path, Log: zaptest.NewLogger(t), WarmIdle: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sn, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Use(sn)
	waitFor(t, "a warm process after Use", func() bool { return len(idleWarm(s)) > 0 })
	first := idleWarm(s)
	waitFor(t, "the warm processes to be retired after WarmIdle", func() bool {
		for _, pid := range first {
			if alive(pid) {
				return false
			}
		}
		return len(idleWarm(s)) == 0
	})
	o := s.Call(context.Background(), Request{ID: "1", Tool: "echo", Args: []byte(`{"a":1}`)})
	if string(o.Output) != "{\"a\":1}\n" {
		t.Fatalf("call: %+v", o)
	}
	waitFor(t, "warm processes after a call", func() bool { return len(idleWarm(s)) > 0 })
	again := idleWarm(s)
	s.Close()
	for _, pid := range again {
		if alive(pid) {
			t.Errorf("warm process %d alive after Close", pid)
		}
	}
}

// A call cancelled while the warm process it took is not ready to be
// handed it yet (here held in $BASH_ENV, which bash runs before the
// prelude) ends as a cancelled call, the warm process killed.
func TestWarmCancelledBeforeHandOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(path, []byte("tool_nap() { sleep 100; }\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	benv := filepath.Join(dir, "benv.sh")
	gate := filepath.Join(dir, "gate")
	if err := os.WriteFile(benv, []byte(`if [ "${__MCPBASHD_MODE:-}" = warm ]; then echo $$ >"`+dir+`/held"; while [ ! -e "`+gate+`" ]; do sleep 0.01; done; fi`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(gate, nil, 0o644)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	t.Setenv("TMPDIR", dir)
	t.Setenv("BASH_ENV", benv)
	// A spawned warm process (a forked one runs no BASH_ENV).
	s, err := New(Config{Bash: bash, Script: path, Log: zaptest.NewLogger(t), Grace: 100 * time.Millisecond, NoFork: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sn, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Use(sn)
	var held int
	waitFor(t, "a warm process held in BASH_ENV", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "held"))
		held, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && held > 0 && len(idleWarm(s)) > 0
	})
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan Outcome, 1)
	go func() { done <- s.Call(ctx, Request{ID: "1", Tool: "nap", Args: []byte(`{}`)}) }()
	// Taken: the pool no longer holds it (the call now waits for it).
	waitFor(t, "the call to take the warm process", func() bool { return len(idleWarm(s)) == 0 })
	cancel(ErrCancelled)
	select {
	case o := <-done:
		if o.End != Cancelled {
			t.Fatalf("outcome %+v, want cancelled", o)
		}
	case <-deadline(t):
		t.Fatal("the cancelled call did not end while its warm process was held")
	}
	waitFor(t, "the held warm process to be gone", func() bool { return !alive(held) })
}
