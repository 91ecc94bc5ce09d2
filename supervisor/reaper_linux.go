package supervisor

import (
	"errors"
	"os"
	"os/signal"
	"sync"
	"unsafe"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// exitInfo is how a registered process ended.
type exitInfo struct {
	status unix.WaitStatus
}

// reaper is the only place that waits for processes.
type reaper struct {
	log     *zap.Logger
	mu      sync.Mutex
	tracked map[int]chan exitInfo // group leaders we spawned, until reaped
	sigc    chan os.Signal
	stop    chan struct{}
	done    chan struct{}
	orphans uint64 // reaped processes nobody registered (detached tools)
}

func newReaper(log *zap.Logger) (*reaper, error) {
	// Reparented descendants (a tool's setsid or double-forked children,
	// sentinels outliving their leader) become our children, not init's,
	// so they are reaped here even when we are not PID 1.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		log.Warn("cannot become child subreaper", zap.Error(err))
	}
	r := &reaper{
		log:     log,
		tracked: make(map[int]chan exitInfo),
		sigc:    make(chan os.Signal, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	signal.Notify(r.sigc, unix.SIGCHLD)
	go r.loop()
	return r, nil
}

func (r *reaper) loop() {
	defer close(r.done)
	for {
		r.drain()
		select {
		case <-r.sigc:
		case <-r.stop:
			signal.Stop(r.sigc)
			r.drain()
			return
		}
	}
}

// siginfoChld is the part of siginfo_t that waitid fills for SIGCHLD on
// 64-bit Linux: three ints, padding to align the union, then si_pid.
type siginfoChld struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Pid   int32
	_     [108]byte
}

// drain handles every zombie child there is right now.
func (r *reaper) drain() {
	for {
		var info siginfoChld
		// WNOWAIT: look without reaping, so a call leader stays a zombie
		// (its pid and group id pinned) while its group is killed.
		err := unix.Waitid(unix.P_ALL, 0, (*unix.Siginfo)(unsafe.Pointer(&info)), unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return // ECHILD: no children at all
		}
		pid := int(info.Pid)
		if pid == 0 {
			return // children exist, none has exited
		}
		r.mu.Lock()
		ch, ok := r.tracked[pid]
		if ok {
			// Containment: whatever the leader left in its group dies with
			// it. The zombie leader keeps the group id from being reused.
			_ = unix.Kill(-pid, unix.SIGKILL)
			delete(r.tracked, pid)
		}
		var ws unix.WaitStatus
		_, werr := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if !ok {
			r.orphans++
		}
		r.mu.Unlock()
		if werr != nil {
			r.log.Warn("reap failed", zap.Int("pid", pid), zap.Error(werr))
		}
		if ok {
			ch <- exitInfo{status: ws}
		}
	}
}

// spawn runs start under the lock and registers the pid it returns as a
// group leader whose exit is delivered on the returned channel.
func (r *reaper) spawn(start func() (int, error)) (int, <-chan exitInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := start()
	if err != nil {
		return 0, nil, err
	}
	ch := make(chan exitInfo, 1)
	r.tracked[pid] = ch
	return pid, ch, nil
}

// signalGroup sends sig to the group led by pid if that leader has not
// been reaped yet; it reports whether the signal was sent.
func (r *reaper) signalGroup(pid int, sig unix.Signal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tracked[pid]; !ok {
		return false
	}
	return unix.Kill(-pid, sig) == nil
}

// killAll SIGKILLs every registered group (supervisor shutdown).
func (r *reaper) killAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid := range r.tracked {
		_ = unix.Kill(-pid, unix.SIGKILL)
	}
}

// reapedOrphans is how many unregistered processes were reaped.
func (r *reaper) reapedOrphans() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.orphans
}

func (r *reaper) close() {
	close(r.stop)
	<-r.done
}
