package tests

// The test helpers that need Linux's calls; platform_darwin_test.go skips
// in their place.

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// cliOpenPTY opens a pseudo-terminal pair.
func cliOpenPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// scPipeFull waits until the pipe f reads from holds as much as it can: a
// writer with more to say is blocked.
func scPipeFull(t *testing.T, f *os.File) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon's stdout pipe to be full", func() (bool, string) {
		var size, queued int
		var serr, qerr error
		rc.Control(func(fd uintptr) {
			size, serr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
			queued, qerr = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		})
		if serr != nil || qerr != nil {
			return false, fmt.Sprint(serr, qerr)
		}
		return queued >= size, fmt.Sprintf("%d of %d bytes queued", queued, size)
	})
}

// prlimit reads and sets another process's rlimit.
func prlimit(pid, resource int, set, old *unix.Rlimit) error {
	return unix.Prlimit(pid, resource, set, old)
}
