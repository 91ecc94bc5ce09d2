package harness

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

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
func WaitNoneLeft(t *testing.T, mark string, skip int, what string) {
	t.Helper()
	proctest.WaitUntil(t, Deadline(t), what, func() (bool, string) {
		marked, err := Marked(mark, skip)
		if err != nil {
			return false, err.Error()
		}
		return len(marked) == 0, describe(marked)
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
