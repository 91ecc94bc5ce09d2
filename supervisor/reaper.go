package supervisor

import (
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// The reaper: what every OS shares. How exits are learnt of and how a
// held group stays pinned once its leader has exited are each OS's
// (reaper_linux.go: waitid(WNOWAIT) and a child subreaper;
// reaper_posix.go: a per-leader exit notification that does not reap,
// on macOS and in the portable build on Linux).

// exitInfo is how a registered process ended.
type exitInfo struct {
	status unix.WaitStatus
}

// group is a process group the reaper registered at spawn. Its leader's
// exit is delivered on ch once the whole group is dead.
//
// A group is normally killed the moment its leader exits (containment). A
// cancellation's grace holds it instead (hold): the leader's exit is then
// announced on exited, and the group lives on, pinned — on Linux by its
// lifeline sentinel (reaper_linux.go), elsewhere by the leader's own
// zombie (reaper_posix.go) — until the grace ends with a SIGKILL. Either
// way the group id is signalled only while a process of ours pins it.
type group struct {
	ch       chan exitInfo
	held     bool
	sentinel int             // the held group's sentinel (0: none found)
	exited   chan struct{}   // held groups: closed when the leader has exited
	closed   bool            // exited is closed
	status   unix.WaitStatus // the leader's, kept while the sentinel pins the group
	zombie   bool            // held, its leader exited and left unreaped (reaper_posix.go)
	over     bool            // held, and its grace ended with a SIGKILL (reaper_posix.go)
	kept     bool            // on the keeper's list (a forked call process: keeper_linux.go)
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
	os      reaperOS // how this OS tells of exits
	stop    chan struct{}
	done    chan struct{}
	orphans uint64 // reaped processes nobody registered (detached tools)
	// sources are the fork servers whose reports register processes
	// (zygote_linux.go): read before a child is taken for an orphan.
	sources map[*zygote]struct{}
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
	r.watchLocked(pid)
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
	sent := unix.Kill(-pid, sig) == nil
	r.signalledLocked(pid, sig)
	return sent
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

// reap collects pid's exit status.
func (r *reaper) reap(pid int) unix.WaitStatus {
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err != nil {
		r.log.Warn("reap failed", zap.Int("pid", pid), zap.Error(err))
	}
	return ws
}
