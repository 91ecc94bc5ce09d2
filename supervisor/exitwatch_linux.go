//go:build linux && portable

package supervisor

import (
	"errors"
	"os"
	"os/signal"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sigchldWatch is the portable build's exit watch on Linux: POSIX only.
// SIGCHLD says some child changed; each watched leader is then looked at
// with waitid(P_PID, WNOWAIT), which leaves it a zombie. No P_ALL: the
// daemon waits for its own leaders, one by one, as on macOS.
type sigchldWatch struct {
	set  watched
	sigc chan os.Signal
	stop chan struct{}
	done chan struct{}
}

func newExitWatch(q *exitQueue) (exitWatch, error) {
	w := &sigchldWatch{
		set:  watched{pids: make(map[int]struct{}), q: q},
		sigc: make(chan os.Signal, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	signal.Notify(w.sigc, unix.SIGCHLD)
	go w.loop()
	return w, nil
}

func (w *sigchldWatch) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.sigc:
			for _, pid := range w.set.list() {
				if zombie(pid) {
					w.set.report(pid)
				}
			}
		case <-w.stop:
			signal.Stop(w.sigc)
			return
		}
	}
}

// add watches pid; one that exited before it was watched (its SIGCHLD
// perhaps already taken) is seen here.
func (w *sigchldWatch) add(pid int) {
	w.set.put(pid)
	if zombie(pid) {
		w.set.report(pid)
	}
}

func (w *sigchldWatch) close() {
	close(w.stop)
	<-w.done
}

// zombie reports whether child pid has exited, without reaping it.
func zombie(pid int) bool {
	for {
		var info siginfoChld
		err := unix.Waitid(unix.P_PID, pid, (*unix.Siginfo)(unsafe.Pointer(&info)), unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && int(info.Pid) == pid
	}
}
