package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ioctlGetTermios is the request that reads a terminal's settings.
const ioctlGetTermios = unix.TIOCGETA

// dieWithShell SIGKILLs this process when its parent, the drop-in
// server's shell, dies — whatever kills it. macOS has no parent-death
// signal: a kqueue's EVFILT_PROC/NOTE_EXIT on the shell tells of its
// exit, and this process then kills itself, as Linux's kernel would (the
// lifeline then kills every call's group). A shell that died before the
// watch was set is seen in our parent pid, no longer the shell's.
func dieWithShell(shell int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return fmt.Errorf("watch the server shell: %w", err)
	}
	unix.CloseOnExec(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, shell, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		if errors.Is(err, unix.ESRCH) {
			return errShellGone
		}
		return fmt.Errorf("watch the server shell: %w", err)
	}
	if os.Getppid() != shell {
		unix.Close(kq)
		return errShellGone
	}
	go func() {
		out := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, nil, out, nil)
			switch {
			case errors.Is(err, unix.EINTR):
			case err != nil:
				return // no watch after all: as if PR_SET_PDEATHSIG had failed
			case n > 0:
				_ = unix.Kill(os.Getpid(), unix.SIGKILL)
				return
			}
		}
	}()
	return nil
}
