package supervisor

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// kqueueWatch is macOS's exit watch: kqueue's EVFILT_PROC with NOTE_EXIT
// on each leader, which tells of its exit and leaves it a zombie for the
// reaper to reap (reaper_posix.go). A pipe's read end in the same queue
// wakes the loop to close it.
type kqueueWatch struct {
	set  watched
	kq   int
	wake [2]int
	done chan struct{}
}

func newExitWatch(q *exitQueue) (exitWatch, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: %w", err)
	}
	unix.CloseOnExec(kq)
	w := &kqueueWatch{set: watched{pids: make(map[int]struct{}), q: q}, kq: kq, done: make(chan struct{})}
	if err := pipeCloexec(w.wake[:]); err != nil {
		unix.Close(kq)
		return nil, err
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, w.wake[0], unix.EVFILT_READ, unix.EV_ADD)
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		w.closeFDs()
		return nil, fmt.Errorf("kevent: %w", err)
	}
	go w.loop()
	return w, nil
}

// add watches pid. ESRCH: it is no longer running (a zombie: it is our
// child, and unreaped), so its exit is reported now; so is one the kernel
// took the registration of while it was already a zombie.
func (w *kqueueWatch) add(pid int) {
	w.set.put(pid)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	_, err := unix.Kevent(w.kq, []unix.Kevent_t{ev}, nil, nil)
	for errors.Is(err, unix.EINTR) {
		_, err = unix.Kevent(w.kq, []unix.Kevent_t{ev}, nil, nil)
	}
	if err != nil || zombie(pid) {
		w.set.report(pid)
	}
}

func (w *kqueueWatch) loop() {
	defer close(w.done)
	events := make([]unix.Kevent_t, 32)
	for {
		n, err := unix.Kevent(w.kq, nil, events, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			switch {
			case ev.Filter == unix.EVFILT_READ:
				return // close
			case ev.Filter == unix.EVFILT_PROC && ev.Fflags&unix.NOTE_EXIT != 0:
				w.set.report(int(ev.Ident))
			}
		}
	}
}

func (w *kqueueWatch) close() {
	unix.Write(w.wake[1], []byte{0})
	<-w.done
	w.closeFDs()
}

func (w *kqueueWatch) closeFDs() {
	unix.Close(w.kq)
	unix.Close(w.wake[0])
	unix.Close(w.wake[1])
}

// zombie reports whether pid has exited and is not yet reaped.
func zombie(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && kp.Proc.P_pid == int32(pid) && kp.Proc.P_stat == sZomb
}

// sZomb is p_stat of a zombie (<sys/proc.h>: SIDL 1, SRUN, SSLEEP,
// SSTOP, SZOMB 5).
const sZomb = 5
