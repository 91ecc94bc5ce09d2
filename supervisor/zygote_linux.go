//go:build linux && !portable

package supervisor

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/tmpdir"
)

// The fork server. Where it can, the warm pool (warm.go) gets its
// processes from a zygote instead of an exec each: one bash per snapshot
// in use, started like a warm process (its own group, the lifeline and its
// sentinel, the snapshot sourced, options restored) in worker.sh's zygote
// mode, which then reads requests on fd 4. Each request, "SEED DIR", is one
// warm process W:
//
//   - The zygote forks a subshell J, which turns job control on and forks
//     W in the background (so W leads a new process group) and exits; W is
//     reparented to the daemon, the child subreaper, and the daemon alone
//     reaps it, as a spawned one. Two forks (J, W) cost less than bash's
//     exec and the snapshot's sourcing, which W inherits.
//   - DIR is a warm root made here as spawnWarm makes one, with a FIFO
//     "hand" in it: W works in DIR, its out file is fds 1 and 2, and it
//     reads its call from the FIFO on fd 4, which the daemon holds open to
//     write (a spawned warm process's pipe, made without passing a
//     descriptor). The FIFO is unlinked once W has it open.
//   - W has no sentinel: its lifeline is the daemon's keeper
//     (keeper_linux.go), which lists W's group once W has registered. W
//     waits until J has exited (its parent is then the daemon:
//     /proc/self/stat), and reports "PID DIR" on the zygote's report pipe.
//     The report registers W with the reaper and the keeper, under the
//     reaper's lock, once /proc says W is the daemon's child and leads its
//     group. A W that exits between its report and the report being read
//     is a zombie nobody else can reap: the reaper reads the pending
//     reports (pumpLocked) before it takes an unknown child for an orphan.
//   - $$: a fork keeps its parent's, and every call of a zygote would have
//     the zygote's pid there, where a cold or spawned call has its own.
//     bash keeps $$ in its global dollar_dollar_pid, which its binary
//     exports (for loadable builtins); once W has reported the daemon writes
//     W's pid there through /proc/PID/mem, as it writes the tool's name into
//     argv (forkOne, when W reports). The address is found once per zygote (the
//     symbol's value plus the load bias, AT_ENTRY less the ELF entry) and
//     checked: it must hold the zygote's pid. A bash without the symbol
//     gets no zygote. RANDOM is seeded per W with SEED.
//   - $PPID is the daemon, as for a spawned call (W inherits the zygote's
//     value); W sets BASH_SUBSHELL to 0, as a spawned call's.
//
// Everything after the hand-over is the warm path's. A zygote is retired
// with its snapshot (Use, Reload), when the pool retires its processes
// after WarmIdle, and at Close; one that dies is started again at the
// next spawn, and after zygoteTries failures in a row the pool spawns
// warm processes by exec as before.

// zygoteTries is how many zygotes may fail in a row before the pool stops
// starting them.
const zygoteTries = 3

// zygoteWait bounds how long a zygote's start-up or one fork may take
// before it is taken for stuck.
const zygoteWait = 10 * time.Second

type zygote struct {
	s    *Supervisor
	sn   *Snapshot
	pid  int
	done <-chan exitInfo
	dead chan struct{} // closed once done has delivered (watchExit)
	pre  string        // its root in the runtime directory
	req  int           // the request pipe's write end
	// The report pipe's read end, non-blocking: read by pumpLocked only,
	// under the reaper's lock (the reaper reads it too).
	report *os.File
	fd     int
	buf    []byte
	// pending are the forks asked for and not yet reported, by root;
	// closed and gone are set once the zygote is over (under the lock).
	pending map[string]*warmProc
	closed  bool
	gone    chan struct{}
	ready   chan struct{} // closed when its sentinel's pid is read
	// sentinel is the zygote's own sentinel (0: not reported).
	sentinel int
	// dollar is the address of dollar_dollar_pid in its memory, and in
	// every W's.
	dollar int64
	width  int
	argvImage
	once sync.Once // retire
}

// startZygote starts the fork server for sn and waits until it is ready.
func (s *Supervisor) startZygote(sn *Snapshot) (*zygote, error) {
	if err := s.holdFor(sn); err != nil {
		return nil, err
	}
	z, err := s.spawnZygote(sn)
	if err != nil {
		s.unhold(sn)
		return nil, err
	}
	t := time.NewTimer(zygoteWait)
	defer t.Stop()
	select {
	case <-z.ready:
	case <-t.C:
	}
	s.reaper.mu.Lock()
	started := z.sentinel != 0
	s.reaper.mu.Unlock()
	if !started {
		z.retire()
		return nil, errors.New("the fork server did not start")
	}
	if err := z.findDollar(); err != nil {
		z.retire()
		return nil, err
	}
	// Its forks' lifeline (keeper_linux.go).
	if err := s.ensureKeeper(); err != nil {
		z.retire()
		return nil, fmt.Errorf("start the keeper: %w", err)
	}
	return z, nil
}

func (s *Supervisor) spawnZygote(sn *Snapshot) (*zygote, error) {
	width := fieldWidth(sn)
	// ps shows "fork" for the zygote; its forks show it too until
	// nameFork writes "warm" over it.
	st, err := s.warmStart(modeZygote, "zygote.", forkField(width), sn, false)
	if err != nil {
		return nil, err
	}
	unix.Close(st.in[0])
	// A zygote that stops reading (stopped from outside) fails the fork
	// asked of it rather than the daemon's goroutine.
	_ = unix.SetNonblock(st.in[1], true)
	z := &zygote{s: s, sn: sn, pid: st.pid, done: st.done, pre: st.pre, req: st.in[1], fd: st.report,
		report: os.NewFile(uintptr(st.report), "zygote report"), pending: map[string]*warmProc{},
		gone: make(chan struct{}), ready: make(chan struct{}), width: width, argvImage: st.img}
	s.reaper.mu.Lock()
	s.reaper.sources[z] = struct{}{}
	s.reaper.mu.Unlock()
	z.dead = make(chan struct{})
	go func() { <-z.done; close(z.dead) }()
	go z.readReports()
	return z, nil
}

// readReports pumps the report pipe as reports come, until EOF (the
// zygote and every W it started have closed it) or retire closes it.
func (z *zygote) readReports() {
	r := z.s.reaper
	rc, err := z.report.SyscallConn()
	if err == nil {
		for {
			more := true
			err = rc.Read(func(uintptr) bool {
				r.mu.Lock()
				defer r.mu.Unlock()
				var again bool
				more, again = z.pumpLocked()
				return !again
			})
			if err != nil || !more {
				break
			}
		}
	}
	z.close()
}

// close ends the zygote's reports: pending forks fail, and the reaper
// stops reading its pipe. The file is closed after the lock is let go:
// Close waits for readReports's Read, which may be waiting for the lock.
func (z *zygote) close() {
	r := z.s.reaper
	r.mu.Lock()
	if !z.closed {
		z.closed = true
		delete(r.sources, z)
		close(z.gone)
		if z.sentinel == 0 {
			close(z.ready)
		}
	}
	r.mu.Unlock()
	z.report.Close()
}

// pumpLocked reads what the report pipe holds and handles each complete
// line (reaper lock held). more is false at EOF; again when it would
// block.
func (z *zygote) pumpLocked() (more, again bool) {
	if z.closed {
		return false, false
	}
	var b [512]byte
	for {
		n, err := unix.Read(z.fd, b[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return true, true
		}
		if err != nil || n == 0 {
			return false, false
		}
		z.buf = append(z.buf, b[:n]...)
		for {
			i := strings.IndexByte(string(z.buf), '\n')
			if i < 0 {
				break
			}
			line := string(z.buf[:i])
			z.buf = z.buf[i+1:]
			z.lineLocked(line)
		}
		// A line longer than any report: not one of ours.
		if len(z.buf) > 8<<10 {
			z.buf = nil
		}
	}
}

// lineLocked handles one report: the zygote's sentinel first, then
// "PID DIR" of each W.
func (z *zygote) lineLocked(line string) {
	r := z.s.reaper
	if z.sentinel == 0 {
		if pid, err := strconv.Atoi(line); err == nil && pid > 0 {
			z.sentinel = pid
			close(z.ready)
		}
		return
	}
	f := strings.SplitN(line, " ", 2)
	if len(f) != 2 {
		return
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return
	}
	if _, ok := r.tracked[pid]; ok {
		return
	}
	// Our child (J is gone) and the leader of its group: then only we can
	// reap it, and the pid stays W's until we do.
	st, err := readStat(pid)
	if err != nil || st.ppid != r.self || st.pgrp != pid {
		z.s.log.Warn("fork server report ignored: not a call process of ours", zap.String("report", line))
		return
	}
	ch := make(chan exitInfo, 1)
	r.tracked[pid] = &group{ch: ch, kept: true}
	r.watchLocked(pid)
	// On the keeper's list before W can be handed anything.
	r.os.kept++
	r.keepLocked("+", pid)
	w, ok := z.pending[f[1]]
	if !ok {
		// Asked for and given up on (forkWarm timed out): not wanted.
		_ = unix.Kill(-pid, unix.SIGKILL)
		return
	}
	delete(z.pending, f[1])
	w.pid, w.done = pid, ch
	close(w.ready)
}

// forkWarm has z fork a warm process for z's snapshot. Like startWarm, it
// holds the snapshot and one user of the supervisor until releaseWarm.
func (s *Supervisor) forkWarm(z *zygote, wait time.Duration) (*warmProc, error) {
	if err := s.holdFor(z.sn); err != nil {
		return nil, err
	}
	w, err := s.forkOne(z, wait)
	if err != nil {
		s.unhold(z.sn)
		return nil, err
	}
	return w, nil
}

func (s *Supervisor) forkOne(z *zygote, wait time.Duration) (*warmProc, error) {
	pre, err := tmpdir.Create(s.runtime, "warm.", s.owner)
	if err != nil {
		return nil, err
	}
	w := &warmProc{pre: pre, sn: z.sn, hand: -1, peek: -1, ready: make(chan struct{}), mem: -1, width: z.width,
		argvImage: z.argvImage, zy: z}
	// The FIFO, args and values live on a tmpfs where there is one: a
	// call then makes three inodes in TMPDIR, not six (an inode is what a
	// call costs most on some filesystems: docs/operations.md, "Speed").
	if s.ctlBase != "" {
		w.ctl, _ = os.MkdirTemp(s.ctlBase, "w.")
	}
	hand := filepath.Join(cmp.Or(w.ctl, pre), "hand")
	err = s.forkRoot(w, hand)
	if err == nil {
		err = s.askFork(z, w, wait)
	}
	if err != nil {
		// The FIFO goes before the daemon's end of it: a W that opens it
		// later finds nothing, and one that opened it meanwhile reads EOF
		// (retired); none waits in open for a writer.
		_ = unix.Unlink(hand)
		closeFD(&w.hand)
		s.removeRoot(callRoot(pre), s.log)
		w.removeCtl()
		return nil, err
	}
	// W has the FIFO open (it opened it before reporting): a second
	// reader tells, after its call, whether it read it (warmProc.unread).
	w.peek, err = unix.Open(hand, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		w.peek = -1
	}
	_ = unix.Unlink(hand)
	if err := s.nameFork(z, w); err != nil {
		s.killWarm(w, nil)
		return nil, err
	}
	return w, nil
}

// forkRoot makes the rest of w's root (tmp/, out) and its FIFO at hand,
// which the daemon holds open read and write: W's open for reading does
// not wait for a writer, and W sees EOF only once the hand-over closes it.
func (s *Supervisor) forkRoot(w *warmProc, hand string) error {
	root := callRoot(w.pre)
	if err := unix.Mkdir(root.Tmp(), 0o700); err != nil {
		return err
	}
	out, err := openAppendFD(root.Out())
	if err != nil {
		return err
	}
	closeFD(&out)
	if err := unix.Mkfifo(hand, 0o600); err != nil {
		return err
	}
	w.hand, err = unix.Open(hand, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	return err
}

// askFork has z fork W for w and waits, at most wait, until W's report
// registered it (pumpLocked sets w.pid).
func (s *Supervisor) askFork(z *zygote, w *warmProc, wait time.Duration) error {
	r := s.reaper
	r.mu.Lock()
	if z.closed {
		r.mu.Unlock()
		return errors.New("the fork server is gone")
	}
	z.pending[w.pre] = w
	msg := strconv.FormatUint(uint64(rand.Uint32()&0x7fffffff), 10) + " " + w.pre + "\x00" + w.ctl + "\x00"
	_, err := unix.Write(z.req, []byte(msg))
	if err != nil {
		delete(z.pending, w.pre)
	}
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("ask the fork server: %w", err)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ready:
	case <-z.gone:
	case <-t.C:
	}
	r.mu.Lock()
	delete(z.pending, w.pre)
	ok := w.pid != 0
	r.mu.Unlock()
	if !ok {
		return errors.New("the fork server's process did not report")
	}
	return nil
}

// nameFork makes W its own in what it inherited from the zygote: "warm"
// over the "fork" of its argv (ps), and its own pid in
// its $$, through its /proc/PID/mem, kept open for the hand-over
// (locateField). Off its call's path.
func (s *Supervisor) nameFork(z *zygote, w *warmProc) error {
	s.reaper.whileRegistered(w.pid, func() {
		w.mem, w.nameAt = openArgv(w.pid, w.off, []byte(forkField(w.width)), w.exe, w.argv, w.env)
	})
	if w.mem < 0 {
		return errNoArgv
	}
	if err := z.setDollar(w.mem, w.pid); err != nil {
		return err
	}
	field := []byte(warmField(w.width))
	_, _ = unix.Pwrite(w.mem, field, w.nameAt)
	return nil
}

// retire ends the zygote: its group is killed while registered, and its
// root and holds are given back once it is reaped. The W it forked live
// on as warm processes of their own.
func (z *zygote) retire() {
	z.once.Do(func() {
		z.s.reaper.mu.Lock()
		closeFD(&z.req) // forkOne writes it under the lock
		z.s.reaper.mu.Unlock()
		z.s.reaper.signalGroup(z.pid, unix.SIGKILL)
		<-z.dead
		z.close()
		z.s.reaper.mu.Lock()
		z.s.reaper.idleKeeperLocked()
		z.s.reaper.mu.Unlock()
		z.s.removeRoot(callRoot(z.pre), z.s.log)
		z.s.unhold(z.sn)
	})
}

// over reports whether the zygote can fork no more (it died, or was
// retired).
func (z *zygote) over() bool {
	select {
	case <-z.gone:
		return true
	case <-z.dead:
		return true
	default:
		return false
	}
}

// pumpSourcesLocked reads every zygote's pending reports (reaper lock
// held), so a W that reported and died is registered before its zombie is
// taken for an orphan.
func (r *reaper) pumpSourcesLocked() {
	for z := range r.sources {
		z.pumpLocked()
	}
}
