//go:build linux && !portable

package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// The warm pool's side of the fork server (zygote_linux.go): which
// zygote forks, when one is started, dropped or given up on.

// newWarm is a warm process for sn: forked by the pool's zygote where
// there is one, spawned otherwise.
func (p *warmPool) newWarm(sn *Snapshot) (*warmProc, error) {
	if z := p.zygoteFor(sn); z != nil {
		w, err := p.s.forkWarm(z, zygoteWait)
		if err == nil {
			p.mu.Lock()
			p.zyFails = 0
			p.mu.Unlock()
			return w, nil
		}
		if !errors.Is(err, errClosed) && !errors.Is(err, errSnapshotGone) {
			p.s.log.Info("fork server failed; starting it again", zap.Error(err))
			p.dropZygote(z, true)
		}
	}
	return p.s.startWarm(sn)
}

// forkWait bounds the fork a call that found no idle warm process waits
// for: a zygote that takes longer is replaced, and the call starts its own
// process.
const forkWait = time.Second

// forkFor forks a warm process for req at once, when the pool had none
// idle: a fork costs less than the exec of a cold call, and is ready
// about as soon. Nil when there is no live zygote of req's snapshot (the
// call starts its own process).
func (p *warmPool) forkFor(req Request) *warmProc {
	p.mu.Lock()
	z := p.zy
	p.mu.Unlock()
	if z == nil || z.sn != req.Snapshot || z.over() {
		return nil
	}
	w, err := p.s.forkWarm(z, forkWait)
	if err != nil {
		if !errors.Is(err, errClosed) && !errors.Is(err, errSnapshotGone) {
			p.s.log.Info("fork server failed; starting it again", zap.Error(err))
			p.dropZygote(z, true)
		}
		return nil
	}
	return w
}

// zygoteFor is the pool's zygote for sn, started if need be (on the
// filler's goroutine, the only caller); nil: none.
func (p *warmPool) zygoteFor(sn *Snapshot) *zygote {
	p.mu.Lock()
	z := p.zy
	off := p.zyOff || p.off || p.s.cfg.NoFork
	p.mu.Unlock()
	if off {
		return nil
	}
	if z != nil && z.sn == sn && !z.over() {
		return z
	}
	if z != nil {
		p.dropZygote(z, z.sn == sn)
	}
	z, err := p.s.startZygote(sn)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if !errors.Is(err, errClosed) && !errors.Is(err, errSnapshotGone) {
			p.failedLocked(err, errors.Is(err, errNoArgv) || errors.Is(err, errNoDollar))
		}
		return nil
	}
	if p.off || p.sn != sn {
		go z.retire()
		return nil
	}
	p.zy = z
	return z
}

// dropZygote retires z if it is the pool's; failed counts it against
// zygoteTries.
func (p *warmPool) dropZygote(z *zygote, failed bool) {
	p.mu.Lock()
	if p.zy == z {
		p.zy = nil
		if failed {
			p.failedLocked(errors.New("the fork server failed"), false)
		}
	}
	p.mu.Unlock()
	go z.retire()
}

// failedLocked counts a zygote's failure (p.mu held): after zygoteTries in
// a row, or at once when for good, no zygote is started again.
func (p *warmPool) failedLocked(err error, forGood bool) {
	p.zyFails++
	if forGood || p.zyFails >= zygoteTries {
		p.zyOff = true
		p.s.log.Info("no fork server: warm call processes are started by exec", zap.Error(err))
	}
}

// retireZygoteLocked retires the pool's zygote (p.mu held).
func (p *warmPool) retireZygoteLocked() {
	if p.zy != nil {
		go p.zy.retire()
		p.zy = nil
	}
}

// ctlDir makes the private directory forked warm processes' control
// files are made in: on /dev/shm when it is a tmpfs; "" otherwise.
func ctlDir() string {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) != nil || st.Type != unix.TMPFS_MAGIC {
		return ""
	}
	sweepCtl()
	dir, err := os.MkdirTemp("/dev/shm", "mcp-bashd."+strconv.Itoa(os.Getpid())+".")
	if err != nil {
		return ""
	}
	return dir
}

// sweepCtl removes the control directories of daemons that are gone
// without their Close (SIGKILL): mcp-bashd.PID.N of this user, PID no
// longer a process. (A daemon in another PID namespace may keep one of
// a dead daemon's a while longer: never one of a live daemon's.)
func sweepCtl() {
	names, _ := filepath.Glob("/dev/shm/mcp-bashd.*.*")
	for _, name := range names {
		f := strings.Split(filepath.Base(name), ".")
		pid, err := strconv.Atoi(f[1])
		if len(f) != 3 || err != nil || pid <= 0 || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == os.Getuid() {
			_ = os.RemoveAll(name)
		}
	}
}

// removeCtl removes w's control directory, if it has one.
func (w *warmProc) removeCtl() {
	if w.ctl != "" {
		_ = os.RemoveAll(w.ctl)
	}
}
