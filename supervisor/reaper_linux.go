//go:build linux && !portable

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
		sources: make(map[*zygote]struct{}),
		self:    os.Getpid(),
		os:      reaperOS{sigc: make(chan os.Signal, 1)},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	signal.Notify(r.os.sigc, unix.SIGCHLD)
	go r.loop()
	return r, nil
}

func (r *reaper) loop() {
	defer close(r.done)
	for {
		r.drain()
		select {
		case <-r.os.sigc:
		case <-r.stop:
			signal.Stop(r.os.sigc)
			r.drain()
			return
		}
	}
}

// reaperOS is what Linux's reaper adds: SIGCHLD, on which every zombie
// child is looked at with waitid(WNOWAIT).
type reaperOS struct {
	sigc chan os.Signal
	keep *keeper // the keeper of forked calls' groups (keeper_linux.go)
	kept int     // groups registered and on the keeper's list
	// starting serialises keeper starts (ensureKeeper, its restart).
	starting sync.Mutex
}

// watchLocked: SIGCHLD tells of every child; nothing to do per leader.
func (r *reaper) watchLocked(int) {}

// signalledLocked: a held group is released by its sentinel's exit.
func (r *reaper) signalledLocked(int, unix.Signal) {}

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
		// it. The zombie leader keeps the group id from being reused, and
		// the keeper forgets the id before it can be.
		_ = unix.Kill(-pid, unix.SIGKILL)
		delete(r.tracked, pid)
		if g.kept {
			r.unkeepLocked(pid)
		}
		return g, r.reap(pid)
	case pin:
		// The sentinel of a held group: the group ends with it. Its
		// zombie keeps the group id while the rest is killed.
		g = r.pinned[gid]
		delete(r.pinned, gid)
		delete(r.pins, pid)
		_ = unix.Kill(-gid, unix.SIGKILL)
		if g.kept {
			r.unkeepLocked(gid)
		}
		r.reap(pid)
		return g, g.status
	}
	if len(r.sources) > 0 {
		// A fork server's process that reported and died before its
		// report was read: register it now, and it is a leader.
		r.pumpSourcesLocked()
		if _, ok := r.tracked[pid]; ok {
			return r.exit(pid)
		}
	}
	r.orphans++
	r.reap(pid)
	return nil, 0
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
