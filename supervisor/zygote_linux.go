//go:build linux && !portable

package supervisor

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
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
//     reaps it, as a spawned one. Three forks (J, W, W's sentinel) cost
//     less than bash's exec and the snapshot's sourcing, which W inherits.
//   - DIR is a warm root made here as spawnWarm makes one, with a FIFO
//     "hand" in it: W works in DIR, its out file is fds 1 and 2, and it
//     reads its call from the FIFO on fd 4, which the daemon holds open to
//     write (a spawned warm process's pipe, made without passing a
//     descriptor). The FIFO is unlinked once W has it open.
//   - W forks its lifeline sentinel into its group (the zygote keeps the
//     lifeline's read end for that), waits until J has exited (its parent
//     is then the daemon: /proc/self/stat), and reports "PID SENTINEL DIR"
//     on the zygote's report pipe. The report registers W with the reaper,
//     under its lock, once /proc says W is the daemon's child and leads its
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
	exe    string
	argv   []string
	env    []string
	off    int
	once   sync.Once // retire
}

// bashSym is where a bash binary keeps $$: dollar_dollar_pid's value
// (its address before relocation) and the ELF entry point.
type bashSym struct {
	value, entry uint64
	err          error
}

var bashSyms sync.Map // bash path → *bashSym

// dollarSymbol reads bash's dollar_dollar_pid from its symbol tables,
// once per path.
func dollarSymbol(path string) *bashSym {
	if v, ok := bashSyms.Load(path); ok {
		return v.(*bashSym)
	}
	b := &bashSym{err: errors.New("no dollar_dollar_pid symbol")}
	if f, err := elf.Open(path); err != nil {
		b.err = err
	} else {
		b.entry = f.Entry
		for _, read := range []func() ([]elf.Symbol, error){f.DynamicSymbols, f.Symbols} {
			syms, _ := read()
			for _, sym := range syms {
				if sym.Name == "dollar_dollar_pid" && sym.Size == 4 && sym.Value != 0 {
					b.value, b.err = sym.Value, nil
					break
				}
			}
			if b.err == nil {
				break
			}
		}
		f.Close()
	}
	v, _ := bashSyms.LoadOrStore(path, b)
	return v.(*bashSym)
}

// atEntry is AT_ENTRY (linux/auxvec.h).
const atEntry = 9

// readPid reads the int32 at addr of the process whose mem is fd.
func readPid(fd int, addr int64) (int, error) {
	var b [4]byte
	if n, err := unix.Pread(fd, b[:], addr); err != nil || n != 4 {
		return 0, fmt.Errorf("read $$: %v", err)
	}
	return int(int32(binary.NativeEndian.Uint32(b[:]))), nil
}

// findDollar sets z.dollar: dollar_dollar_pid's address in the zygote,
// checked to hold its pid.
func (z *zygote) findDollar() error {
	sym := dollarSymbol(z.exe)
	if sym.err != nil {
		return fmt.Errorf("%s: %w", z.exe, sym.err)
	}
	proc := "/proc/" + strconv.Itoa(z.pid)
	entry := auxvValue(proc, atEntry)
	if entry == 0 {
		return errors.New("no AT_ENTRY in " + proc + "/auxv")
	}
	addr := int64(entry - sym.entry + sym.value)
	fd, err := unix.Open(proc+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	got, err := readPid(fd, addr)
	if err != nil {
		return err
	}
	if got != z.pid {
		return fmt.Errorf("dollar_dollar_pid holds %d, not the zygote's pid %d", got, z.pid)
	}
	z.dollar = addr
	return nil
}

// setDollar writes w's pid into its $$ through mem (w's /proc/PID/mem,
// opened while w is registered), after checking the zygote's is there.
func (z *zygote) setDollar(mem int, pid int) error {
	got, err := readPid(mem, z.dollar)
	if err != nil {
		return err
	}
	if got != z.pid {
		return fmt.Errorf("%w: $$ holds %d, not the zygote's %d", errNoArgv, got, z.pid)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(int32(pid)))
	if n, err := unix.Pwrite(mem, b[:], z.dollar); err != nil || n != 4 {
		return fmt.Errorf("%w: write $$: %v", errNoArgv, err)
	}
	return nil
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
	return z, nil
}

func (s *Supervisor) spawnZygote(sn *Snapshot) (*zygote, error) {
	pre, err := tmpdir.Create(s.runtime, "zygote.", s.owner)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*zygote, error) {
		s.removeRoot(callRoot(pre), s.log)
		return nil, err
	}
	out, err := openAppendFD(callRoot(pre).Out())
	if err != nil {
		return fail(err)
	}
	defer closeFD(&out)
	req, report, err := pipePair()
	if err != nil {
		return fail(err)
	}
	defer unix.Close(req[0])
	defer unix.Close(report[1])
	// A zygote that stops reading (stopped from outside) fails the fork
	// asked of it rather than the daemon's goroutine.
	_ = unix.SetNonblock(req[1], true)
	_ = unix.SetNonblock(report[0], true)
	z := &zygote{s: s, sn: sn, pre: pre, req: req[1], fd: report[0], report: os.NewFile(uintptr(report[0]), "zygote report"),
		pending: map[string]*warmProc{}, gone: make(chan struct{}), ready: make(chan struct{}), width: fieldWidth(sn)}
	// ps shows "fork" for the zygote; its forks show it too until
	// forkOne writes "warm" over it.
	field := forkField(z.width)
	env := []string{
		envCap + "=" + capString(s.cfg.OutputCap),
		"__MCPBASHD_SNAPSHOT=" + sn.Path,
		"__MCPBASHD_SHIM=" + s.shim,
	}
	p := proc{mode: modeZygote, field: field, zero: s.cfg.Script, args: s.cfg.ScriptArgs,
		dir: pre, env: env, stdout: out, stderr: out, extra: []uintptr{uintptr(req[0]), uintptr(report[1])}}
	z.off = len(s.cfg.Bash) + 1 + len("--noprofile") + 1 + len("--norc") + 1 + len("-c") + 1 + len(p.command()) - len(field)
	z.pid, z.done, err = s.startThen(p, func(pid int, exe string, argv, env []string) {
		z.exe, z.argv, z.env = exe, argv, env
	})
	if err != nil {
		unix.Close(req[1])
		z.report.Close()
		return fail(err)
	}
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
// "PID SENTINEL DIR" of each W.
func (z *zygote) lineLocked(line string) {
	r := z.s.reaper
	if z.sentinel == 0 {
		if pid, err := strconv.Atoi(line); err == nil && pid > 0 {
			z.sentinel = pid
			close(z.ready)
		}
		return
	}
	f := strings.SplitN(line, " ", 3)
	if len(f) != 3 {
		return
	}
	pid, err1 := strconv.Atoi(f[0])
	sentinel, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || pid <= 0 {
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
	r.tracked[pid] = &group{ch: ch}
	r.watchLocked(pid)
	w, ok := z.pending[f[2]]
	if !ok {
		// Asked for and given up on (forkWarm timed out): not wanted.
		_ = unix.Kill(-pid, unix.SIGKILL)
		return
	}
	delete(z.pending, f[2])
	w.pid, w.done, w.sentinel = pid, ch, sentinel
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
	root := callRoot(pre)
	w := &warmProc{pre: pre, sn: z.sn, hand: -1, peek: -1, ready: make(chan struct{}), mem: -1, width: z.width,
		exe: z.exe, argv: z.argv, env: z.env, off: z.off, zy: z}
	// The FIFO, args and values live on a tmpfs where there is one: a
	// call then makes three inodes in TMPDIR, not six (an inode is what a
	// call costs most on some filesystems: docs/operations.md, "Speed").
	if s.ctlBase != "" {
		w.ctl, _ = os.MkdirTemp(s.ctlBase, "w.")
	}
	hand := filepath.Join(cmp.Or(w.ctl, pre), "hand")
	fail := func(err error) (*warmProc, error) {
		// The FIFO goes before the daemon's end of it: a W that opens it
		// later finds nothing, and one that opened it meanwhile reads EOF
		// (retired); none waits in open for a writer.
		_ = unix.Unlink(hand)
		closeFD(&w.hand)
		s.removeRoot(root, s.log)
		w.removeCtl()
		return nil, err
	}
	if err := unix.Mkdir(root.Tmp(), 0o700); err != nil {
		return fail(err)
	}
	out, err := openAppendFD(root.Out())
	if err != nil {
		return fail(err)
	}
	closeFD(&out)
	if err := unix.Mkfifo(hand, 0o600); err != nil {
		return fail(err)
	}
	// Read and write: W's open for reading does not wait for a writer,
	// and W sees EOF only once the hand-over closes this.
	if w.hand, err = unix.Open(hand, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err != nil {
		return fail(err)
	}
	r := s.reaper
	r.mu.Lock()
	if z.closed {
		r.mu.Unlock()
		return fail(errors.New("the fork server is gone"))
	}
	z.pending[pre] = w
	msg := strconv.FormatUint(uint64(rand.Uint32()&0x7fffffff), 10) + " " + pre + "\x00" + w.ctl + "\x00"
	_, err = unix.Write(z.req, []byte(msg))
	if err != nil {
		delete(z.pending, pre)
	}
	r.mu.Unlock()
	if err != nil {
		return fail(fmt.Errorf("ask the fork server: %w", err))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ready:
	case <-z.gone:
	case <-t.C:
	}
	r.mu.Lock()
	delete(z.pending, pre)
	ok := w.pid != 0
	r.mu.Unlock()
	if !ok {
		return fail(errors.New("the fork server's process did not report"))
	}
	// W has the FIFO open (it opened it before reporting): a second
	// reader tells, after its call, whether it read it (warmProc.unread).
	w.peek, err = unix.Open(hand, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		w.peek = -1
	}
	_ = unix.Unlink(hand)
	// Its argv (ps) and $$ are the zygote's: "warm" and its own pid are
	// written now, off its call's path, through its /proc/PID/mem, kept
	// open for the hand-over (locateField).
	s.reaper.whileRegistered(w.pid, func() {
		w.mem, w.nameAt = openArgv(w.pid, w.off, []byte(forkField(w.width)), w.exe, w.argv, w.env)
	})
	if w.mem < 0 {
		s.killWarm(w, nil)
		return nil, errNoArgv
	}
	if err := z.setDollar(w.mem, w.pid); err != nil {
		s.killWarm(w, nil)
		return nil, err
	}
	field := []byte(warmField(w.width))
	_, _ = unix.Pwrite(w.mem, field, w.nameAt)
	s.nameSentinel(w, w.sentinel, field)
	return w, nil
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

// forkField and warmField are what ps shows of a zygote and of an idle
// warm process, padded to the width of the snapshot's "call TOOL".
func forkField(width int) string { return "fork" + strings.Repeat(" ", width-len("fork")) }
func warmField(width int) string { return "warm" + strings.Repeat(" ", width-len("warm")) }

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
			p.zyFails++
			if p.zyFails >= zygoteTries || errors.Is(err, errNoArgv) || strings.Contains(err.Error(), "dollar_dollar_pid") {
				p.zyOff = true
				p.s.log.Info("no fork server: warm call processes are started by exec", zap.Error(err))
			}
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
			p.zyFails++
			if p.zyFails >= zygoteTries {
				p.zyOff = true
				p.s.log.Info("no fork server after repeated failures: warm call processes are started by exec")
			}
		}
	}
	p.mu.Unlock()
	go z.retire()
}

// retireZygoteLocked retires the pool's zygote (p.mu held).
func (p *warmPool) retireZygoteLocked() {
	if p.zy != nil {
		go p.zy.retire()
		p.zy = nil
	}
}
