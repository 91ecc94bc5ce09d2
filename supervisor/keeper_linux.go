//go:build linux && !portable

package supervisor

import (
	"errors"
	"strconv"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// The keeper: the lifeline of forked call processes, one bash per daemon
// instead of a sentinel forked into every call's group (a fork per call,
// about as much as the rest of a forked call costs: zygote_linux.go).
//
// It is started like every process of ours (worker.sh, keeper mode: its
// own group, the prelude's first lines) and reads "+PGID" and "-PGID"
// lines from a pipe on fd 4 whose only write end is the daemon's. EOF
// there means the daemon is gone, however it went: the keeper SIGKILLs
// every group still on its list, and exits. The daemon writes "+W" when a
// forked W registers with the reaper, under the reaper's lock, before W
// can be handed a call, and "-G" when group G ends, before the reaper
// reaps the process that kept G's id from being reused (the leader, or
// the pin of a held group): the keeper reads its lines in order, so it
// never signals an id that could have been reused. Until W has registered
// it runs no code of the server's, and if the daemon dies first W exits
// on its own (its call FIFO reads EOF; its wait for J's exit is bounded).
//
// A keeper that dies (killed from outside) is started again, and is told
// every forked group that is still registered. One whose pipe is full (it
// stopped reading) is killed, and so started again. A forked call's group
// has no sentinel: a cancellation that finds none pins the group for its
// grace with a process of its own (pinGroup).

// keeper is the running keeper (reaper.os.keep, under the reaper's lock).
type keeper struct {
	pid     int
	fd      int  // the pipe's write end, non-blocking; -1 once closed
	stopped bool // closed by idleKeeperLocked: not to be started again
}

// ensureKeeper starts the keeper if there is none running.
func (s *Supervisor) ensureKeeper() error {
	r := s.reaper
	r.os.starting.Lock()
	defer r.os.starting.Unlock()
	r.mu.Lock()
	running := r.os.keep != nil
	r.mu.Unlock()
	if running {
		return nil
	}
	if !s.enter() {
		return errClosed
	}
	defer s.users.Done()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	defer unix.Close(p[0])
	pid, done, err := s.start(proc{mode: modeKeeper, zero: "mcp-bashd", stdout: int(s.devnullFD), stderr: int(s.devnullFD), extra: []uintptr{uintptr(p[0])}})
	if err != nil {
		unix.Close(p[1])
		return err
	}
	_ = unix.SetNonblock(p[1], true)
	k := &keeper{pid: pid, fd: p[1]}
	r.mu.Lock()
	r.os.keep = k
	// Every forked group still ours, for a keeper started again.
	for pid, g := range r.tracked {
		if g.kept {
			r.keepLocked("+", pid)
		}
	}
	for gid, g := range r.pinned {
		if g.kept {
			r.keepLocked("+", gid)
		}
	}
	r.mu.Unlock()
	go s.watchKeeper(k, done)
	return nil
}

// watchKeeper waits for k's exit and starts a keeper again, unless the
// supervisor is closing.
func (s *Supervisor) watchKeeper(k *keeper, done <-chan exitInfo) {
	<-done
	r := s.reaper
	r.mu.Lock()
	if r.os.keep == k {
		r.os.keep = nil
	}
	closeFD(&k.fd)
	stopped := k.stopped
	r.mu.Unlock()
	if stopped {
		return
	}
	s.usersMu.Lock()
	closing := s.closing
	s.usersMu.Unlock()
	if closing {
		return
	}
	s.log.Warn("the keeper of forked calls' lifeline exited; starting it again", zap.Int("pid", k.pid))
	for i := 0; i < 3; i++ {
		err := s.ensureKeeper()
		if err == nil || errors.Is(err, errClosed) {
			return
		}
		s.log.Error("cannot start the keeper", zap.Error(err))
		time.Sleep(100 * time.Millisecond)
	}
}

// keepLocked writes op ("+" or "-") and pgid to the keeper (reaper lock
// held). A keeper that cannot take it is killed: its replacement is told
// the whole list (ensureKeeper).
func (r *reaper) keepLocked(op string, pgid int) {
	k := r.os.keep
	if k == nil || k.fd < 0 {
		return
	}
	msg := op + strconv.Itoa(pgid) + "\n"
	for {
		_, err := unix.Write(k.fd, []byte(msg))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			closeFD(&k.fd)
			r.os.keep = nil
			// EPIPE: it died, and watchKeeper starts another. Otherwise
			// its pipe is full.
			if err != unix.EPIPE {
				r.log.Warn("the keeper does not read its list; killing it", zap.Int("pid", k.pid), zap.Error(err))
				if _, ok := r.tracked[k.pid]; ok {
					_ = unix.Kill(-k.pid, unix.SIGKILL)
				}
			}
		}
		return
	}
}

// unkeepLocked takes group pgid off the keeper's list (reaper lock held),
// and stops the keeper once nothing is left for it to keep.
func (r *reaper) unkeepLocked(pgid int) {
	r.keepLocked("-", pgid)
	r.os.kept--
	r.idleKeeperLocked()
}

// idleKeeperLocked stops the keeper when no fork server is left and no
// forked group is registered (reaper lock held): a daemon whose warm pool
// has retired its processes keeps no keeper either. The next fork server
// starts one again (startZygote).
func (r *reaper) idleKeeperLocked() {
	k := r.os.keep
	if k == nil || r.os.kept > 0 || len(r.sources) > 0 {
		return
	}
	k.stopped = true
	closeFD(&k.fd)
	r.os.keep = nil
}

// closeKeeper closes the keeper's pipe (Close, once every group is
// killed): it exits on the EOF.
func (r *reaper) closeKeeper() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k := r.os.keep; k != nil {
		closeFD(&k.fd)
		r.os.keep = nil
	}
}

// pinScript is a pin's: it ignores what a cancellation sends, says it is
// ready, and waits for the lifeline's EOF like a sentinel.
const pinScript = `builtin trap '' TERM INT HUP; builtin echo; exec 1>&-; builtin read -r -u 3; builtin kill -KILL 0 # pin`

// pinWait bounds the wait for a pin to be ready.
const pinWait = 2 * time.Second

// pinGroup starts, in the group led by pid, a process that keeps the
// group's id ours once its leader is reaped, for a cancellation's grace
// (reaper.hold): what a spawned call's sentinel does, for a forked call,
// which has none. It is started under the reaper's lock while the leader
// is registered (so pid is still the group's id), and returned once it
// ignores SIGTERM. 0: none (the leader is gone, or the start failed).
func (s *Supervisor) pinGroup(pid int) int {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0
	}
	defer unix.Close(p[0])
	w := p[1]
	defer closeFD(&w)
	pin := 0
	s.reaper.whileRegistered(pid, func() {
		attr := &syscall.ProcAttr{
			Env:   s.env, // the daemon's, as every process of ours
			Files: []uintptr{s.devnullFD, uintptr(w), s.devnullFD, s.lifeFD},
			Sys:   &syscall.SysProcAttr{Setpgid: true, Pgid: pid},
		}
		if n, err := syscall.ForkExec(s.cfg.Bash, []string{s.cfg.Bash, "--noprofile", "--norc", "-c", pinScript}, attr); err == nil {
			pin = n
		}
	})
	closeFD(&w)
	if pin == 0 {
		return 0
	}
	// The newline comes once the trap is set; EOF: it died first.
	if readByte(p[0], pinWait) {
		return pin
	}
	_ = unix.Kill(pin, unix.SIGKILL)
	return 0
}

// readByte reports whether one byte could be read from fd within wait.
func readByte(fd int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false
		}
		var b [1]byte
		m, err := unix.Read(fd, b[:])
		if err == unix.EINTR {
			continue
		}
		return m == 1
	}
}
