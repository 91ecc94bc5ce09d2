package fds

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCloseOnExecInheritedMarksAllButKept(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, f := range []*os.File{r, w} {
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CloseOnExecInherited(int(w.Fd())); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[*os.File]int{r: unix.FD_CLOEXEC, w: 0} {
		got, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
		if err != nil || got&unix.FD_CLOEXEC != want {
			t.Errorf("fd %d: flags %d %v, want cloexec %d", f.Fd(), got, err, want)
		}
	}
}
