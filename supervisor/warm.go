package supervisor

import (
	"errors"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/sandbox"
	"github.com/mcp-bashd/mcp-bashd/tmpdir"
)

// Warm call processes. A call's bash is started before its call arrives:
// the same process a cold call gets (start: its own group, the lifeline
// and its sentinel, the snapshot sourced, options restored), but in the
// prelude's warm mode, which then blocks reading its call from a pipe on
// fd 4. A call takes one, hands it exactly one call and the process exits
// after it, as a cold one does; what the spawn, bash's start-up and the
// sourcing cost is off the call's path.
//
// What a warm process is handed, and how each promise of a call is kept:
//
//   - Its root. A warm process is started in a root made in the runtime
//     directory (the root's files, its tmp/ and its out file, which is its
//     fds 1 and 2 as in a cold call); the call writes the args file and
//     renames the root into TMPDIR under a fresh mcp-call.N name
//     (renameat2 RENAME_NOREPLACE): the process's cwd and descriptors
//     follow the directory, and nothing of a call exists in TMPDIR before
//     the call.
//   - Tool name and root: written to the pipe in one write (worker.sh
//     says how), and the write end closed; the prelude exports the root's
//     variables (as root.env names them), closes fd 4 and goes on as a
//     cold call does after its sourcing. EOF before a call (the pool
//     retired it) exits.
//   - ps: the -c comment holds "warm" padded to the longest "call TOOL"
//     of the snapshot's tools; before handing the call over, the daemon
//     writes "call TOOL" over it through /proc/PID/mem (opened under the
//     reaper's lock while the process is registered, so it names that
//     process and no later one; locateField) and over the sentinel's
//     copy (nameSentinel), so $0, $@ and the tool name show as for a cold
//     call once it runs.
//   - Containment, cancellation, reaping, pgid pinning: it is registered
//     with the reaper at its spawn like any call, and a taken process goes
//     through the same await/stop/outcome as a cold one. One never taken
//     is SIGKILLed as a group while registered (retire) and reaped.
//   - No state across calls: each process serves one call and exits; a
//     reload retires the processes of the old snapshot.
//
// Only calls whose process is a plain bash get one: a bash function tool
// (not a tools-directory executable) whose sandbox is empty (a call with
// limits is started through the exec helper with that tool's limits, and
// there is no process to keep warm for it before its limits are known),
// and a snapshot that defines no function named exec (the prelude closes
// fd 4 with a plain exec after sourcing it) and does not make IFS
// read-only (it reads the arguments with IFS= after sourcing it).
//
// The pool is sized from the load: one is started when a snapshot is put
// in use, and a call that takes or misses one asks for one more than calls
// are running (at most Config.Warm), started when a call ends; after
// Config.WarmIdle without a call every warm process is retired, until the
// next call.

// DefaultWarmIdle is how long the pool keeps processes while no call
// comes.
const DefaultWarmIdle = 10 * time.Second

// DefaultWarm is the most warm processes kept when Config.Warm is 0.
const DefaultWarm = 8

// A warm process reads its call on fd 4 and reports its sentinel's pid
// on fd 5 (the fds after the lifeline, 3).

// unread is how many bytes of its call a warm process left in its pipe.
func (w *warmProc) unread() int {
	if w.peek < 0 {
		return 0
	}
	n, err := unix.IoctlGetInt(w.peek, unreadIoctl)
	if err != nil {
		return 0
	}
	return n
}

// warmProc is one warm call process.
type warmProc struct {
	pid  int
	done <-chan exitInfo
	pre  string // its root, in the runtime directory until handed a call
	sn   *Snapshot
	hand int // the pipe's write end
	// peek is the pipe's read end, kept so that, once the process has
	// exited, what it left unread says whether it ever took its call.
	peek   int
	report *os.File // the report pipe's read end (non-blocking, polled)
	// ready is closed once the report is read (or cannot be): then
	// sentinel is the sentinel's pid, 0 if the process died first.
	ready    chan struct{}
	sentinel int
	width    int // the length of the comment's field in ps
	// The address of its field in argv is found at the hand-over
	// (locateField).
	argvImage
	mem    int   // /proc/PID/mem; -1: not open
	nameAt int64 // the field's address
	// zy is the fork server it was forked from (zygote_linux.go); nil: it
	// was spawned. ctl is a forked one's control directory on a tmpfs (its
	// FIFO, args and values); "": they are in its root.
	zy  *zygote
	ctl string
	// released gives back what startWarm took for it — its hold on sn
	// and its user of the supervisor — once, whichever way it ends.
	released sync.Once
}

// releaseWarm gives back w's holds (startWarm's), once: after it was retired
// (finishWarm) or after the call it was handed ended (callWarm).
func (s *Supervisor) releaseWarm(w *warmProc) {
	w.released.Do(func() { s.unhold(w.sn) })
}

type warmPool struct {
	s    *Supervisor
	max  int
	mu   sync.Mutex
	sn   *Snapshot // the snapshot the ready processes source
	idle []*warmProc
	// starting counts spawns under way; want is how many to keep ready.
	starting, want int
	running        int // calls that took a process or could have
	last           time.Time
	kick           chan struct{}
	stop           chan struct{}
	off            bool // closed, or warm processes cannot work here
	once           sync.Once
	// The fork server warm processes come from (zygote_linux.go); zyOff:
	// none will be started again, zyFails: failures in a row.
	zy      *zygote
	zyOff   bool
	zyFails int
}

func newWarmPool(s *Supervisor, max int) *warmPool {
	return &warmPool{s: s, max: max, kick: make(chan struct{}, 1), stop: make(chan struct{})}
}

// eligible reports whether req's process can be a warm one.
func (s *Supervisor) eligible(req Request) bool {
	// Resource, prompt and completion functions and a tool whose stderr
	// is kept apart (a 2026-SDK server) take the cold path.
	return s.warm != nil && req.Kind == ToolFunc && req.Stderr == nil && s.warmable(req.Snapshot) &&
		sandbox.Merge(s.box.Defaults(), req.Limits).Empty() && len("call "+req.Tool) <= fieldWidth(req.Snapshot)
}

// warmable reports whether calls of sn can run in warm processes: it
// defines tool functions, no function named exec and no read-only IFS.
// With daemon-wide limits the pool keeps none.
func (s *Supervisor) warmable(sn *Snapshot) bool {
	return sn != nil && fieldWidth(sn) > len("warm") && !sn.HasFunction("exec") && !sn.readonlyIFS &&
		sandbox.Merge(s.box.Defaults(), nil).Empty()
}

// fieldWidth is the length of the ps field of a snapshot's warm processes:
// the longest "call TOOL" of its tool functions.
func fieldWidth(sn *Snapshot) int {
	sn.widthOnce.Do(func() {
		sn.width = len("warm")
		for fn := range sn.Functions {
			if name, ok := strings.CutPrefix(fn, "tool_"); ok {
				sn.width = max(sn.width, len("call "+name))
			}
		}
	})
	return sn.width
}

// take returns a warm process for req, or nil (the call starts its own);
// either way the pool learns that a call runs. done must be called when
// the call ends.
func (p *warmPool) take(req Request) (w *warmProc, done func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off {
		return nil, func() {}
	}
	p.running++
	p.last = time.Now()
	// One more than run at once: a client that sends its next call as
	// soon as it has an answer finds one ready while the one that replaces
	// this call's is still being started.
	p.want = min(max(p.want, p.running+1), p.max)
	// The pool follows the snapshot in use (use); a call that runs an
	// older one (it began before a reload) starts its own process.
	for len(p.idle) > 0 && w == nil && p.sn == req.Snapshot {
		w = p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		select {
		case ei := <-w.done: // died waiting (killed from outside): not usable
			go p.s.finishWarm(w, &ei)
			w = nil
		default:
		}
	}
	p.once.Do(func() { go p.fill() })
	if w == nil {
		// A miss: the filler starts one while this call starts its own.
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	return w, func() {
		p.mu.Lock()
		p.running--
		p.mu.Unlock()
		// The replacement is started once this call is over, not while
		// its process runs: on a busy machine a bash starting up takes
		// the CPU the call's own process and its answer need.
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// fill keeps want processes ready, and retires them all once no call
// came for Config.WarmIdle.
func (p *warmPool) fill() {
	idle := p.s.cfg.WarmIdle
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if time.Since(p.last) >= idle && p.running == 0 {
				busy := p.want > 0 || len(p.idle) > 0
				p.want = 0
				p.retireLocked()
				if busy {
					// The daemon has gone idle after calls: the heap a
					// burst of them grew is handed back to the system now,
					// not at the runtime's next forced collection (two
					// minutes, or never while nothing allocates).
					go debug.FreeOSMemory()
				}
			}
			p.mu.Unlock()
		case <-p.kick:
		}
		t.Reset(idle)
		for p.spawnOne() {
		}
	}
}

// spawnOne starts one process if the pool wants one more; false when it
// does not (or cannot).
func (p *warmPool) spawnOne() bool {
	p.mu.Lock()
	sn := p.sn
	if p.off || sn == nil || len(p.idle)+p.starting >= p.want {
		p.mu.Unlock()
		return false
	}
	p.starting++
	p.mu.Unlock()
	w, err := p.newWarm(sn)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting--
	switch {
	case errors.Is(err, errNoArgv):
		// A property of the system (ptrace restricted): for good.
		p.s.log.Warn("warm call processes turned off", zap.Error(err))
		p.off = true
		p.retireLocked()
		return false
	case err != nil:
		// Closing, a reload, or a spawn that failed (out of processes,
		// descriptors or space): the next call's end tries again, and the
		// calls start their own meanwhile.
		if !errors.Is(err, errClosed) && !errors.Is(err, errSnapshotGone) {
			p.s.log.Debug("warm call process not started", zap.Error(err))
		}
		return false
	}
	orig, fwd := w.done, make(chan exitInfo, 1)
	w.done = fwd
	go p.watch(w, orig, fwd)
	if p.off || p.sn != sn {
		go p.s.finishWarm(w, nil)
		return true
	}
	p.idle = append(p.idle, w)
	return true
}

// watch passes w's exit on to w.done and, when w died idle (killed from
// outside), takes it out of the pool at once and has a replacement
// started: a dead process must not hold a place in the pool until a call
// happens to find it (until then the pool started none).
func (p *warmPool) watch(w *warmProc, orig <-chan exitInfo, fwd chan<- exitInfo) {
	fwd <- <-orig
	p.mu.Lock()
	i := slices.Index(p.idle, w)
	if i < 0 {
		p.mu.Unlock() // taken, or retired: its exit is theirs
		return
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	ei := <-w.done // there, and only take reads it of an idle one, under p.mu
	p.mu.Unlock()
	p.s.finishWarm(w, &ei)
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// retireLocked retires every idle process and the fork server (p.mu
// held).
func (p *warmPool) retireLocked() {
	for _, w := range p.idle {
		go p.s.finishWarm(w, nil)
	}
	p.idle = nil
	p.retireZygoteLocked()
}

// turnOff stops warming for good: err says why warm roots cannot be
// moved into place here.
func (p *warmPool) turnOff(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.off {
		p.s.log.Warn("warm call processes turned off", zap.Error(err))
		p.off = true
		p.retireLocked()
	}
}

// use makes sn the snapshot warm processes source (Use, Reload): the
// processes of the one it replaces are retired, and at least one is
// started for sn, so the next call — the first one too — finds it warm.
func (p *warmPool) use(sn *Snapshot) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off || p.sn == sn {
		return
	}
	p.retireLocked()
	p.sn = nil
	if !p.s.warmable(sn) {
		return // no call of this snapshot would take one
	}
	p.sn = sn
	p.want = max(p.want, 1)
	p.last = time.Now()
	p.once.Do(func() { go p.fill() })
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// close retires everything and stops the filler (Supervisor.Close).
func (p *warmPool) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.off = true
	p.retireLocked()
	p.mu.Unlock()
	close(p.stop)
}

var (
	errSnapshotGone = errors.New("snapshot removed")
	// errNoArgv: without it the tool's name could not show in ps.
	errNoArgv = errors.New("cannot write a process's argv through /proc/PID/mem")
)

// startWarm starts a warm process for sn. It holds sn and one user of the
// supervisor until releaseWarm; when no process starts it gives them back
// itself.
func (s *Supervisor) startWarm(sn *Snapshot) (*warmProc, error) {
	if err := s.holdFor(sn); err != nil {
		return nil, err
	}
	w, err := s.spawnWarm(sn)
	if err != nil {
		s.unhold(sn)
		return nil, err
	}
	return w, nil
}

// holdFor takes what a warm process or a zygote holds while it lives: one
// user of the supervisor and sn. unhold gives them back.
func (s *Supervisor) holdFor(sn *Snapshot) error {
	if !s.enter() {
		return errClosed
	}
	if !sn.hold() {
		s.users.Done()
		return errSnapshotGone
	}
	return nil
}

func (s *Supervisor) unhold(sn *Snapshot) {
	sn.release()
	s.users.Done()
}

func (s *Supervisor) spawnWarm(sn *Snapshot) (*warmProc, error) {
	width := fieldWidth(sn)
	st, err := s.warmStart(modeWarm, "warm.", warmField(width), sn, true)
	if err != nil {
		return nil, err
	}
	w := &warmProc{pid: st.pid, done: st.done, pre: st.pre, sn: sn, hand: st.in[1], peek: st.in[0],
		report: os.NewFile(uintptr(st.report), "warm report"), ready: make(chan struct{}), mem: -1, width: width, argvImage: st.img}
	// The report is read as soon as it comes, and its pipe closed: an
	// idle warm process costs the daemon two descriptors, the ends of its
	// hand-over pipe.
	go w.awaitReport()
	return w, nil
}

// finishWarm ends a warm process never handed a call (killWarm) and
// releases its holds. exited: its exit, already taken from w.done.
func (s *Supervisor) finishWarm(w *warmProc, exited *exitInfo) {
	s.killWarm(w, exited)
	s.releaseWarm(w)
}

// killWarm SIGKILLs w's group while it is registered, waits until it is
// reaped (unless exited says it was) and removes its root.
func (s *Supervisor) killWarm(w *warmProc, exited *exitInfo) {
	closeFD(&w.hand)
	closeFD(&w.peek)
	if w.report != nil {
		w.report.Close()
	}
	closeFD(&w.mem)
	if exited == nil {
		s.reaper.signalGroup(w.pid, unix.SIGKILL)
		<-w.done
	}
	s.removeRoot(callRoot(w.pre), s.log)
	w.removeCtl()
}

// argvImage is what a warm process or a zygote was exec'd with, and off,
// where its field is in argv (argv[0..3] and the comment's prefix before
// it): openArgv finds the field's address from them. A fork has its
// zygote's.
type argvImage struct {
	exe       string
	argv, env []string
	off       int
}

// warmStarted is a process warmStart started: its root, the daemon's ends
// of its pipes (in[0], its fd 4's, is kept open too) and its image.
type warmStarted struct {
	pre    string
	in     [2]int
	report int // non-blocking, so reading it waits in the runtime's poller
	pid    int
	done   <-chan exitInfo
	img    argvImage
}

// warmStart starts a warm process or a zygote (mode) of sn in a root of
// its own made in the runtime directory (prefix; with tmp/ when tmp):
// field in ps, the root's out file its fds 1 and 2, a pipe's read end its
// fd 4 and a report pipe's write end its fd 5. On an error nothing is
// left open, and the root is removed.
func (s *Supervisor) warmStart(mode, prefix, field string, sn *Snapshot, tmp bool) (warmStarted, error) {
	pre, err := tmpdir.Create(s.runtime, prefix, s.owner)
	if err != nil {
		return warmStarted{}, err
	}
	root := callRoot(pre)
	fail := func(err error, fds ...int) (warmStarted, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		s.removeRoot(root, s.log) // kept for a later retry if it cannot go now
		return warmStarted{}, err
	}
	if tmp {
		if err := unix.Mkdir(root.Tmp(), 0o700); err != nil {
			return fail(err)
		}
	}
	out, err := openAppendFD(root.Out())
	if err != nil {
		return fail(err)
	}
	defer closeFD(&out)
	in, report, err := pipePair()
	if err != nil {
		return fail(err)
	}
	if err := unix.SetNonblock(report[0], true); err != nil {
		return fail(err, in[0], in[1], report[0], report[1])
	}
	env := []string{
		envCap + "=" + capString(s.cfg.OutputCap),
		"__MCPBASHD_SNAPSHOT=" + sn.Path,
		"__MCPBASHD_SHIM=" + s.shim,
	}
	p := proc{mode: mode, field: field, zero: s.cfg.Script, args: s.cfg.ScriptArgs,
		dir: pre, env: env, stdout: out, stderr: out, extra: []uintptr{uintptr(in[0]), uintptr(report[1])}}
	st := warmStarted{pre: pre, in: in, report: report[0]}
	st.img.off = len(s.cfg.Bash) + 1 + len("--noprofile") + 1 + len("--norc") + 1 + len("-c") + 1 + len(p.command()) - len(field)
	st.pid, st.done, err = s.startThen(p, func(pid int, exe string, argv, env []string) {
		st.img.exe, st.img.argv, st.img.env = exe, argv, env
	})
	unix.Close(report[1])
	if err != nil {
		return fail(err, in[0], in[1], report[0])
	}
	return st, nil
}

// warmField and forkField are what ps shows of an idle warm process and
// of a zygote (zygote_linux.go), padded to the width of the snapshot's
// "call TOOL".
func warmField(width int) string { return "warm" + strings.Repeat(" ", width-len("warm")) }
func forkField(width int) string { return "fork" + strings.Repeat(" ", width-len("fork")) }

// pipePair makes two close-on-exec pipes; on an error none is left open.
func pipePair() (a, b [2]int, err error) {
	if err = pipeCloexec(a[:]); err != nil {
		return a, b, err
	}
	if err = pipeCloexec(b[:]); err != nil {
		unix.Close(a[0])
		unix.Close(a[1])
	}
	return a, b, err
}

// capString is MCP_BASHD_OUTPUT_CAP's value: bytes, empty for none.
func capString(outputCap int64) string {
	if outputCap > 0 {
		return strconv.FormatInt(outputCap, 10)
	}
	return ""
}
