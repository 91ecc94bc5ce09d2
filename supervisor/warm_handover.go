package supervisor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/tmpdir"
)

// A warm process's hand-over (warm.go): its argv found and rewritten
// through /proc/PID/mem, its root moved into TMPDIR, its call written on
// its pipe.

// openArgv opens /proc/PID/mem for writing and finds the address of
// want, off bytes into pid's argv; -1 when either fails. exe, argv and
// env are what pid was exec'd with, and its exec must be complete: a
// vfork parent resumes once the child has its new memory, before execve
// has laid argv and the auxiliary vector out in it.
//
// execve copies the file name, then the environment's strings, then
// argv's, each right below the one before, at the top of the new stack,
// and the auxiliary vector's AT_EXECFN is the file name's address: argv
// starts the length of all those strings below it. /proc/PID/auxv is a
// copy, where /proc/PID/stat (arg_start) costs the kernel a walk over
// the task; the bytes found there are read back and compared, and stat is
// the fallback.
func openArgv(pid, off int, want []byte, exe string, argv, env []string) (int, int64) {
	proc := "/proc/" + strconv.Itoa(pid)
	fd, err := unix.Open(proc+"/mem", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0
	}
	holds := func(at int64) bool {
		got := make([]byte, len(want))
		n, err := unix.Pread(fd, got, at)
		return err == nil && n == len(want) && string(got) == string(want)
	}
	if fn := execFn(proc); fn != 0 {
		start := fn
		for _, e := range env {
			start -= int64(len(e) + 1)
		}
		for _, a := range argv {
			start -= int64(len(a) + 1)
		}
		if holds(start + int64(off)) {
			return fd, start + int64(off)
		}
	}
	if start := argStart(proc); start != 0 && holds(start+int64(off)) {
		return fd, start + int64(off)
	}
	unix.Close(fd)
	return -1, 0
}

// atExecFn is AT_EXECFN (linux/auxvec.h).
const atExecFn = 31

// execFn is AT_EXECFN from /proc/PID/auxv (0: not found).
func execFn(proc string) int64 { return int64(auxvValue(proc, atExecFn)) }

// auxvValue is key want's value in /proc/PID/auxv (0: not found).
func auxvValue(proc string, want uint64) uint64 {
	fd, err := unix.Open(proc+"/auxv", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var buf [1024]byte
	n, _ := unix.Read(fd, buf[:])
	for i := 0; i+16 <= n; i += 16 {
		key := binary.NativeEndian.Uint64(buf[i:])
		if key == want {
			return binary.NativeEndian.Uint64(buf[i+8:])
		}
		if key == 0 { // AT_NULL
			break
		}
	}
	return 0
}

// argStart is arg_start, field 48 of /proc/PID/stat (0: unreadable).
func argStart(proc string) int64 {
	b, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 46 { // f[0] is field 3
		return 0
	}
	start, _ := strconv.ParseInt(f[45], 10, 64)
	return start
}

// handOver gives w its call: the args file, the root renamed into TMPDIR,
// the tool's name in ps, then tool and root on the pipe. An error means
// w was not handed anything (the caller retires it).
func (s *Supervisor) handOver(ctx context.Context, w *warmProc, req Request) (callRoot, error) {
	// First what can fail without the process having been touched.
	select {
	case <-w.ready:
	case <-ctx.Done():
		return "", errHandOverCancelled
	}
	// A process that is not waiting for its call (stopped by a debugger
	// or kill -STOP, frozen, killed and not yet reaped) would take the
	// call and never answer it, or answer it with nothing.
	if st, ok := waiting(w.pid); !ok {
		return "", fmt.Errorf("%w (state %q)", errWarmUnusable, st)
	}
	// A cold call in a TMPDIR without a free block or inode fails to make
	// its root and says so; a warm root, made earlier, would instead let
	// the tool run and fail writing. The same answer either way.
	if err := s.tmpFull(); err != nil {
		return "", err
	}
	if err := s.reserveOutPath(callRoot(w.pre).Out()); err != nil {
		return "", err
	}
	sentinel := w.sentinel
	if err := s.locateField(w, sentinel); err != nil {
		return "", err
	}

	files := callRoot(cmp.Or(w.ctl, w.pre)) // where args and values go
	if err := writeNew(files.Args(), req.Args); err != nil {
		return "", err
	}
	if err := writeValues(files, req.values()); err != nil {
		return "", err
	}
	root, err := s.renameIntoBase(w.pre)
	if err != nil {
		return "", err
	}
	w.pre = root
	field := []byte("call " + req.Tool + strings.Repeat(" ", w.width-len("call "+req.Tool)))
	// The process may be gone already; its exit is the call's outcome.
	_, _ = unix.Pwrite(w.mem, field, w.nameAt)
	closeFD(&w.mem)
	s.nameSentinel(w, sentinel, field)
	// "LENGTH TOOL/ROOT", ended by a NUL for a bash without read -N.
	body := req.Tool + root
	msg := strconv.Itoa(len(body)) + " " + body + "\x00"
	// Stopped after the check above, it would take its call and wait. The
	// SIGCONT goes before the call does: sent after, it would undo a tool
	// that stops itself (kill -STOP $$) as soon as it starts.
	s.reaper.signalGroup(w.pid, unix.SIGCONT)
	_, _ = unix.Write(w.hand, []byte(msg))
	closeFD(&w.hand)
	return callRoot(root), nil
}

// errWarmUnusable: the warm process is not waiting for a call.
var errWarmUnusable = errors.New("the warm call process is not waiting for its call")

// pfExiting is PF_EXITING (linux/sched.h): the task is in do_exit.
const pfExiting = 0x4

// waiting reports whether pid can be waiting for its call: asleep or
// running (not stopped, traced, frozen or a zombie) and not exiting, from
// /proc/PID/stat's state (returned, 0: unreadable) and flags.
func waiting(pid int) (byte, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 || len(f[0]) != 1 { // f[0] is field 3, f[6] field 9
		return 0, false
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	st := f[0][0]
	return st, (st == 'S' || st == 'R') && flags&pfExiting == 0
}

// awaitReport reads the sentinel's pid, which the prelude reports right
// after forking it, into w.sentinel (0: none), then closes w.ready. Once
// it is there, the process's exec is complete. The read waits in the
// runtime's poller; it ends at EOF if the process died first (its group
// is then killed, the sentinel with it), or when killWarm closes the pipe.
func (w *warmProc) awaitReport() {
	defer close(w.ready)
	defer w.report.Close()
	var buf [24]byte
	n := 0
	for n < len(buf) {
		m, err := w.report.Read(buf[n:])
		n += m
		if err != nil || (n > 0 && buf[n-1] == '\n') {
			break
		}
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n]))); err == nil && pid > 0 {
		w.sentinel = pid
	}
}

// errHandOverCancelled: the call ended before its warm process was ready
// to be handed it.
var errHandOverCancelled = errors.New("cancelled before the hand-over")

// errWarmGone: the warm process died before its hand-over.
var errWarmGone = errors.New("the warm call process exited before its call")

// locateField opens w's /proc/PID/mem and finds its field, under the
// reaper's lock while w is registered (so the pid is w's, unreaped). A
// process that reported its sentinel has finished its exec; one that did
// not has died (errWarmGone). errNoArgv: the field cannot be written here.
func (s *Supervisor) locateField(w *warmProc, sentinel int) error {
	if w.mem >= 0 {
		return nil // a fork's, located when it reported (zygote_linux.go)
	}
	placeholder := []byte(warmField(w.width))
	registered := s.reaper.whileRegistered(w.pid, func() {
		w.mem, w.nameAt = openArgv(w.pid, w.off, placeholder, w.exe, w.argv, w.env)
	})
	switch {
	case !registered || sentinel == 0:
		closeFD(&w.mem)
		return errWarmGone
	case w.mem < 0:
		// A process killed an instant ago has no memory to find the field
		// in: that is its death, not this system's (which would turn
		// warm processes off for good).
		if _, ok := waiting(w.pid); !ok {
			return errWarmGone
		}
		return errNoArgv
	}
	return nil
}

// nameSentinel writes field into the argv of w's sentinel (pid), forked
// from w with "warm" there: its argv is at the same address. The
// /proc/PID/mem opened is the sentinel's only if, once opened, that pid is
// still a member of w's group, which w's unreaped leader pins.
func (s *Supervisor) nameSentinel(w *warmProc, pid int, field []byte) {
	if pid <= 0 {
		return
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/mem", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if pg, err := unix.Getpgid(pid); err != nil || pg != w.pid {
		return
	}
	_, _ = unix.Pwrite(fd, field, w.nameAt)
}

// errTmpFull: TMPDIR's filesystem has no free block or inode left.
var errTmpFull = errors.New("TMPDIR has no free block or inode")

// tmpFull is errTmpFull when TMPDIR's filesystem is full (statfs: one
// system call, no file touched).
func (s *Supervisor) tmpFull() error {
	var st unix.Statfs_t
	if unix.Statfs(s.base, &st) != nil {
		return nil
	}
	// f_files is 0 where a filesystem does not count inodes.
	if st.Bavail == 0 || (st.Files > 0 && st.Ffree == 0) {
		return errTmpFull
	}
	return nil
}

// outReserve is the room a call's out file is given before the call
// starts (at most the output cap): a TMPDIR with less free than that (and
// the arguments) is full for a call — its tool could not write its first
// line — and the call gets the call-directory error, warm or cold, rather
// than "Error executing TOOL: " with its output lost.
const outReserve = 64 << 10

// reserveOut allocates the room for fd's first output without changing
// its size (FALLOC_FL_KEEP_SIZE; the daemon reads a file by its size).
// errTmpFull when there is not that much; nothing where the filesystem
// cannot reserve.
func (s *Supervisor) reserveOut(fd int) error {
	n := int64(outReserve)
	if s.cfg.OutputCap > 0 {
		n = min(n, s.cfg.OutputCap)
	}
	err := reserve(fd, n)
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return fmt.Errorf("%w: no room for the call's output", errTmpFull)
	}
	return nil
}

func (s *Supervisor) reserveOutPath(path string) error {
	fd, err := openRaw(path, unix.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return s.reserveOut(fd)
}

// renameIntoBase moves a warm root to TMPDIR as mcp-call.N, never over
// an existing name.
func (s *Supervisor) renameIntoBase(pre string) (string, error) {
	for try := 0; try < 100; try++ {
		name := filepath.Join(s.base, tmpdir.CallPrefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		err := renameNoReplace(pre, name)
		if err == nil {
			return name, nil
		}
		if err != unix.EEXIST {
			return "", &rootError{path: s.base, err: fmt.Errorf("move a warm call directory into place: %w", err)}
		}
	}
	return "", &rootError{path: s.base, err: errors.New("no free call directory name")}
}
