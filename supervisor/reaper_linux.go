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

// group is a process group the reaper registered at spawn. Its leader's
// exit is delivered on ch once the whole group is dead.
//
// A group is normally killed the moment its leader exits (containment). A
// cancellation's grace holds it instead (hold): the leader's exit is then
// announced on exited, and the group lives on, pinned by its lifeline
// sentinel — reparented to the daemon when the leader died, so only the
// reaper can reap it, and it does so only after killing the group while
// the sentinel's zombie still holds the group id. Either way the group id
// is signalled only while a process of ours pins it.
type group struct {
	ch       chan exitInfo
	held     bool
	sentinel int             // the held group's sentinel (0: none found)
	exited   chan struct{}   // held groups: closed when the leader has exited
	closed   bool            // exited is closed
	status   unix.WaitStatus // the leader's, kept while the sentinel pins the group
}

// leaderGone closes exited once (held groups).
func (g *group) leaderGone() {
	if g.held && !g.closed {
		g.closed = true
		close(g.exited)
	}
}

// reaper is the only place that waits for processes.
type reaper struct {
	log     *zap.Logger
	mu      sync.Mutex
	tracked map[int]*group // by leader pid, until the leader is reaped
	pinned  map[int]*group // by group id: held groups whose leader is reaped, pinned by their sentinel
	pins    map[int]int    // sentinel pid → the group id it pins
	self    int
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
		tracked: make(map[int]*group),
		pinned:  make(map[int]*group),
		pins:    make(map[int]int),
		self:    os.Getpid(),
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
		g, deliver := r.exit(pid)
		r.mu.Unlock()
		if g != nil {
			g.ch <- exitInfo{status: deliver}
			r.mu.Lock()
			g.leaderGone()
			r.mu.Unlock()
		}
	}
}

// exit handles the exit of child pid (a zombie, not yet reaped) under the
// lock and reaps it; it returns the group to deliver, with the status to
// deliver, when pid's exit ends a group.
func (r *reaper) exit(pid int) (*group, unix.WaitStatus) {
	g, leader := r.tracked[pid]
	gid, pin := r.pins[pid]
	switch {
	case leader && g.held && r.pinnable(g.sentinel, pid):
		// A cancellation's grace: the rest of the group lives on, pinned
		// by its sentinel, now our child.
		delete(r.tracked, pid)
		g.status = r.reap(pid)
		r.pinned[pid], r.pins[g.sentinel] = g, pid
		g.leaderGone()
		return nil, 0
	case leader:
		// Containment: whatever the leader left in its group dies with
		// it. The zombie leader keeps the group id from being reused.
		_ = unix.Kill(-pid, unix.SIGKILL)
		delete(r.tracked, pid)
		return g, r.reap(pid)
	case pin:
		// The sentinel of a held group: the group ends with it. Its
		// zombie keeps the group id while the rest is killed.
		g = r.pinned[gid]
		delete(r.pinned, gid)
		delete(r.pins, pid)
		_ = unix.Kill(-gid, unix.SIGKILL)
		r.reap(pid)
		return g, g.status
	}
	r.orphans++
	r.reap(pid)
	return nil, 0
}

// reap collects pid's exit status.
func (r *reaper) reap(pid int) unix.WaitStatus {
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err != nil {
		r.log.Warn("reap failed", zap.Int("pid", pid), zap.Error(err))
	}
	return ws
}

// pinnable reports whether sentinel can pin group gid once its leader is
// reaped: it is our child (so only we reap it) and still in the group.
// Without a subreaper it was reparented elsewhere, and the group is
// contained at once as before.
func (r *reaper) pinnable(sentinel, gid int) bool {
	if sentinel <= 0 || sentinel == gid {
		return false
	}
	st, err := readStat(sentinel)
	return err == nil && st.ppid == r.self && st.pgrp == gid
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
	r.tracked[pid] = &group{ch: ch}
	return pid, ch, nil
}

// hold keeps the group led by pid alive past its leader's exit, pinned by
// sentinel, for a cancellation's grace: the returned channel is closed when
// the leader has exited. The group is delivered (and its id released) only
// once the sentinel is gone — the caller ends the grace with SIGKILL. Without
// a usable sentinel the leader's exit contains the group as usual (and still
// closes the channel). false: the leader is already reaped.
func (r *reaper) hold(pid, sentinel int) (<-chan struct{}, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.tracked[pid]
	if !ok {
		return nil, false
	}
	if !g.held {
		g.held, g.exited = true, make(chan struct{})
	}
	g.sentinel = sentinel
	return g.exited, true
}

// whileRegistered runs fn under the lock if the group led by pid is still
// registered (its pid cannot be reaped, so not reused, meanwhile) and
// reports whether it ran.
func (r *reaper) whileRegistered(pid int, fn func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.registeredLocked(pid) {
		return false
	}
	fn()
	return true
}

// registered reports whether the group led by pid is still ours to signal:
// its leader unreaped, or its sentinel pinning it.
func (r *reaper) registered(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registeredLocked(pid)
}

func (r *reaper) registeredLocked(pid int) bool {
	_, leader := r.tracked[pid]
	_, pinned := r.pinned[pid]
	return leader || pinned
}

// signalGroup sends sig to the group led by pid if that group is still
// registered (see registered); it reports whether the signal was sent.
func (r *reaper) signalGroup(pid int, sig unix.Signal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.registeredLocked(pid) {
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
	for pid := range r.pinned {
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
