//go:build !portable

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testCgroup makes a cgroup in the first hierarchy match accepts, under
// this process's own cgroup, or skips saying why there is none.
func testCgroup(t *testing.T, what string, match func(mount) bool) string {
	t.Helper()
	mounts, err := readMounts()
	if err != nil {
		t.Skipf("no mountinfo: %v", err)
	}
	own, err := ownCgroups()
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	for _, m := range mounts {
		if !match(m) {
			continue
		}
		key := ""
		if !m.v2 {
			key = "pids"
		}
		dir, ok := dirOf(m, own[key])
		if !ok {
			continue
		}
		cg := filepath.Join(dir, fmt.Sprintf("mcp-bashd-test.%d.%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
		if err := os.Mkdir(cg, 0o755); err != nil {
			t.Skipf("cannot create a %s cgroup here: %v", what, err)
		}
		t.Cleanup(func() { os.Remove(cg) })
		return cg
	}
	t.Skipf("no %s hierarchy is mounted", what)
	return ""
}

// killAndRemove ends every member of a cgroup — here two processes that
// left their process group with setsid — and removes it. On v2 it uses
// cgroup.kill; on v1 it signals the members it lists until none is left.
func TestKillAndRemove(t *testing.T) {
	for _, c := range []struct {
		name  string
		match func(mount) bool
	}{
		{"v1 pids", func(m mount) bool { return !m.v2 && m.opts["pids"] }},
		{"v2", func(m mount) bool { return m.v2 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cg := testCgroup(t, c.name, c.match)
			dir := t.TempDir()
			// The shell joins the cgroup, then starts two setsid sleepers
			// that report their pids, and waits.
			sh := exec.Command("bash", "-c", `echo $$ >"$1/cgroup.procs" || exit 1
for i in 1 2; do setsid bash -c 'echo $$ >"$0/p.$1"; exec sleep 1000' "$2" $i & done
wait`, "_", cg, dir)
			if err := sh.Start(); err != nil {
				t.Fatal(err)
			}
			var pids []int
			end := time.Now().Add(30 * time.Second)
			for i := 1; i <= 2; i++ {
				for {
					b, err := os.ReadFile(filepath.Join(dir, "p."+strconv.Itoa(i)))
					if n, e := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && e == nil {
						pids = append(pids, n)
						break
					}
					if time.Now().After(end) {
						t.Fatal("the sleepers did not start")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			if err := killAndRemove(cg, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(cg); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("cgroup still there: %v", err)
			}
			err := sh.Wait()
			if ws, ok := sh.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the shell was not killed: %v", err)
			}
			for _, pid := range pids {
				// Killed: gone, or a zombie waiting for init (their
				// parent, the shell, is dead).
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				if err == nil && !strings.Contains(string(b), ") Z ") {
					t.Errorf("setsid sleeper %d still alive: %s", pid, b)
				}
			}
		})
	}
}

func TestCounter(t *testing.T) {
	f := filepath.Join(t.TempDir(), "memory.events")
	os.WriteFile(f, []byte("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\n"), 0o644)
	if counter(f, "oom_kill") != 1 || counter(f, "max") != 12 || counter(f, "absent") != 0 {
		t.Fatal("counter")
	}
}

func TestUnescape(t *testing.T) {
	if got := unescape(`/sys/fs/my\040cgroup`); got != "/sys/fs/my cgroup" {
		t.Fatal(got)
	}
}
