//go:build darwin || (linux && portable)

package supervisor

import (
	"os"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// The reaper where there is no child subreaper (macOS; the portable build
// on Linux, which runs this same code so that the Linux suite tests it).
//
// Exits are learnt of per leader, without reaping (exitWatch: kqueue's
// EVFILT_PROC/NOTE_EXIT on macOS, SIGCHLD and waitid(P_PID, WNOWAIT) in
// the portable build): the leader stays a zombie, so its pid — and with
// it the group id, which only a process of that pid can create — is ours
// until we reap it. Containment is as on Linux: the group is SIGKILLed,
// then the leader reaped. A held group (a cancellation's grace) keeps its
// zombie leader unreaped instead, for the whole grace: the zombie pins
// the group, and the SIGKILL that ends the grace reaps it and delivers
// the exit (signalledLocked). No sentinel needs to be reparented to us.
//
// What changes without a subreaper: a process that leaves its call's
// group (setsid, or a double fork after setpgid) and outlives it is
// reparented to init (launchd on macOS), not to us, so it is neither
// killed with the call nor reaped here, and OrphansReaped stays 0. Every
// process still in the group dies with it, and every sentinel still ends
// its group when the daemon dies (the lifeline is a FIFO: POSIX).

// reaperOS is the exit watch and the queue it fills.
type reaperOS struct {
	q     *exitQueue
	watch exitWatch
}

func newReaper(log *zap.Logger) (*reaper, error) {
	q := newExitQueue()
	w, err := newExitWatch(q)
	if err != nil {
		return nil, err
	}
	r := &reaper{
		log:     log,
		tracked: make(map[int]*group),
		pinned:  make(map[int]*group),
		pins:    make(map[int]int),
		sources: make(map[*zygote]struct{}),
		self:    os.Getpid(),
		os:      reaperOS{q: q, watch: w},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go r.loop()
	return r, nil
}

func (r *reaper) loop() {
	defer close(r.done)
	for {
		select {
		case <-r.os.q.kick:
			for _, pid := range r.os.q.take() {
				r.exited(pid)
			}
		case <-r.stop:
			r.os.watch.close()
			for _, pid := range r.os.q.take() {
				r.exited(pid)
			}
			return
		}
	}
}

// watchLocked asks for pid's exit; the spawn holds the lock, so the exit
// cannot be handled before the leader is registered.
func (r *reaper) watchLocked(pid int) { r.os.watch.add(pid) }

// exited handles the exit of leader pid (not yet reaped); the watch
// reports each add at most once.
func (r *reaper) exited(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.tracked[pid]
	if !ok || g.zombie {
		return
	}
	if g.held && !g.over {
		// A cancellation's grace: the zombie pins the group while the
		// rest of it lives on, until the SIGKILL that ends the grace.
		g.zombie = true
		g.leaderGone()
		return
	}
	// Containment: whatever the leader left in its group dies with it,
	// while the zombie leader keeps the group id from being reused.
	_ = unix.Kill(-pid, unix.SIGKILL)
	r.deliverLocked(pid, g)
}

// signalledLocked ends a held group's grace with its SIGKILL: a group
// whose leader is a zombie is reaped and delivered now, one whose leader
// still runs when that leader's exit comes, as any group.
func (r *reaper) signalledLocked(pid int, sig unix.Signal) {
	g, ok := r.tracked[pid]
	if !ok || !g.held || sig != unix.SIGKILL {
		return
	}
	g.over = true
	if g.zombie {
		r.deliverLocked(pid, g)
	}
}

// deliverLocked reaps leader pid and delivers its exit (ch has room for
// it: one exit per group). The wait blocks: the watch said pid exited,
// and a notification may come a moment before the kernel has made the
// process a zombie.
func (r *reaper) deliverLocked(pid int, g *group) {
	delete(r.tracked, pid)
	var ws unix.WaitStatus
	_, err := unix.Wait4(pid, &ws, 0, nil)
	for err == unix.EINTR {
		_, err = unix.Wait4(pid, &ws, 0, nil)
	}
	if err != nil {
		r.log.Warn("reap failed", zap.Int("pid", pid), zap.Error(err))
	}
	g.ch <- exitInfo{status: ws}
	g.leaderGone()
}
