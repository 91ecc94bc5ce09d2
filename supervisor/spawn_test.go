package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

// Every mode the daemon starts the prelude in is one worker.sh handles.
func TestWorkerModes(t *testing.T) {
	for _, m := range []string{modeCall, modeExec, modeCancel, modeExit, modeList, modeCheck, modeLoad} {
		if !strings.Contains(scripts.Worker+scripts.WorkerCall, "\n"+m+")\n") {
			t.Errorf("worker.sh has no case for mode %q", m)
		}
	}
}

// The daemon of TestSIGKILLEndsListAndLoad runs in a child process (this
// test binary again, as os/exec's tests do) so that it can be SIGKILLed.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SUPERVISOR_TEST_DAEMON"); mode != "" {
		os.Exit(testDaemon(mode, os.Getenv("SUPERVISOR_TEST_FILE")))
	}
	os.Exit(m.Run())
}

// testDaemon starts a tools-dir `list` or a load of file and blocks in it.
func testDaemon(mode, file string) int {
	s, err := New(Config{Script: file, LoadBudget: time.Hour}) // bash from PATH
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mode == modeList {
		_, err = s.ListTools(context.Background(), file)
	} else {
		_, err = s.Load(context.Background())
	}
	fmt.Fprintf(os.Stderr, "%s returned while it should block: %v\n", mode, err)
	return 1
}

// A tools directory's `EXE list` and a load are processes of the daemon
// like calls: when the daemon is SIGKILLed while they run, their whole
// process group dies with it, long before their budget would end them.
func TestSIGKILLEndsListAndLoad(t *testing.T) {
	// The killed groups' processes become this process's children, so it
	// can tell them apart from live ones and reap them.
	becomeSubreaper(t)
	for _, mode := range []string{modeList, modeLoad} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			ready, never := filepath.Join(dir, "ready"), filepath.Join(dir, "never")
			for _, fifo := range []string{ready, never} {
				if err := unix.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// The executable (or server script): a child in its group, then
			// its pid announced, then blocked for good on a FIFO nobody
			// writes to.
			file := filepath.Join(dir, "blocker")
			write(t, file, fmt.Sprintf("#!/bin/bash\nsleep 600 &\necho $$ >%q\nread -r _ <%q\n", ready, never))
			if err := os.Chmod(file, 0o755); err != nil {
				t.Fatal(err)
			}
			daemon := exec.Command(os.Args[0])
			daemon.Env = append(os.Environ(), "SUPERVISOR_TEST_DAEMON="+mode, "SUPERVISOR_TEST_FILE="+file, "TMPDIR="+dir)
			daemon.Stderr = os.Stderr
			if err := daemon.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { daemon.Wait(); close(exited) }()
			t.Cleanup(func() { daemon.Process.Kill(); <-exited })

			pgid := groupOf(t, readLine(t, ready))
			if alive, _ := groupMembers(pgid); alive < 3 {
				t.Fatalf("group %d has %d live processes; want the blocked one, its child and the sentinel", pgid, alive)
			}
			if err := daemon.Process.Signal(unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited: // reaped by its exec.Cmd, before the loop below reaps
			case <-deadline(t):
				t.Fatal("the SIGKILLed daemon did not exit")
			}
			waitFor(t, fmt.Sprintf("no live process in group %d", pgid), func() bool {
				alive, _ := groupMembers(pgid)
				return alive == 0
			})
			// Dead, they are zombies of this subreaper: reap them and see
			// the group gone for good.
			for {
				var ws unix.WaitStatus
				if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|waitAll, nil); pid <= 0 || err != nil {
					break
				}
			}
			if alive, zombies := groupMembers(pgid); alive+zombies != 0 {
				t.Errorf("group %d: %d live, %d zombies after reaping", pgid, alive, zombies)
			}
		})
	}
}

// deadline fires a little before the test's own deadline, so a hang is
// reported by the test rather than by the test binary's panic.
func deadline(t *testing.T) <-chan time.Time {
	d, ok := t.Deadline()
	if !ok {
		return time.After(2 * time.Minute)
	}
	return time.After(time.Until(d) - 5*time.Second)
}

// waitFor polls an outcome until the test's deadline.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	end := deadline(t)
	for !done() {
		select {
		case <-end:
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// readLine reads the first line written to a FIFO: the readiness handshake.
func readLine(t *testing.T, fifo string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // returns once the writer closes
		got <- strings.TrimSpace(string(b))
	}()
	select {
	case line := <-got:
		return line
	case <-deadline(t):
		t.Fatalf("nothing written to %s", fifo)
		return ""
	}
}

// groupOf is the process group of a pid, from /proc.
func groupOf(t *testing.T, pid string) int {
	t.Helper()
	_, pgid, ok := procStat(pid)
	if !ok {
		t.Fatalf("no process %q", pid)
	}
	return pgid
}

// procStat reads a process's state and process group from /proc.
func procStat(pid string) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgid, err = strconv.Atoi(f[2])
	return f[0][0], pgid, err == nil
}

// groupMembers counts the processes of a group, zombies apart.
func groupMembers(pgid int) (alive, zombies int) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if state, g, ok := procStat(e.Name()); ok && g == pgid {
			if state == 'Z' {
				zombies++
			} else {
				alive++
			}
		}
	}
	return alive, zombies
}
