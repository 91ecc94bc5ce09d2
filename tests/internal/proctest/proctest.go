// Package proctest finds and inspects processes through Linux /proc.
//
// End-to-end tests use it to prove that mcp-bashd leaves no process behind:
// tools run as bash process groups, and a tool may escape its group with
// setsid, so tests tag every spawned process with an environment marker and
// later look for survivors by that marker (WithEnv), by group (InGroup) and
// by state (Alive / Zombies).
//
// Everything here reads /proc directly instead of running ps(1), so results
// do not depend on which procps the test machine has, and a scan costs no
// extra processes (which would otherwise show up in the very scans that look
// for stray children).
package proctest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const procRoot = "/proc"

// Proc is one process as seen in /proc/PID/stat and /proc/PID/cmdline.
type Proc struct {
	PID, PPID, PGID, SID int
	// State is the one-letter state from /proc/PID/stat: 'R' running,
	// 'S' sleeping, 'D' disk sleep, 'Z' zombie, 'T' stopped, 't' traced,
	// 'X' dead, 'I' idle kernel thread.
	State byte
	// Comm is the kernel's short name (at most 15 bytes), e.g. "bash".
	Comm string
	// Cmdline is argv. It is empty for zombies and kernel threads, and nil
	// when it could not be read (for example the process vanished). Scan
	// waits out the short execve window in which a live process shows an
	// empty cmdline (see read).
	Cmdline []string
}

// String formats p for failure messages: a test that finds a leftover
// process should say exactly what it was.
func (p Proc) String() string {
	return fmt.Sprintf("pid=%d ppid=%d pgid=%d sid=%d state=%c comm=%q cmdline=%q",
		p.PID, p.PPID, p.PGID, p.SID, p.State, p.Comm, p.Cmdline)
}

// vanished reports errors that mean "the process went away (or we may not
// look at it)". A scan races with process exit all the time, so these are
// expected and must not fail the scan.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) ||
		errors.Is(err, fs.ErrPermission)
}

// pids lists the numeric entries of /proc. Threads other than group leaders
// are not listed there, so each entry is one process.
func pids() ([]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// pfKthread is PF_KTHREAD from the flags field of /proc/PID/stat.
const pfKthread = 0x00200000

// parseStat parses the contents of /proc/PID/stat, returning the process
// and its kernel flags. comm is in parentheses and may itself contain
// spaces and ')' (a process can name itself anything), so fields are split
// after the LAST ')'.
func parseStat(b []byte) (Proc, uint64, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Proc{}, 0, fmt.Errorf("malformed stat %q", b)
	}
	var p Proc
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return Proc{}, 0, fmt.Errorf("malformed stat pid %q", b)
	}
	p.PID = pid
	p.Comm = string(b[open+1 : closing])
	// After ")": state ppid pgrp session tty_nr tpgid flags ...
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 7 || len(f[0]) != 1 {
		return Proc{}, 0, fmt.Errorf("malformed stat fields %q", b)
	}
	p.State = f[0][0]
	ints := []*int{&p.PPID, &p.PGID, &p.SID}
	for i, dst := range ints {
		if *dst, err = strconv.Atoi(f[i+1]); err != nil {
			return Proc{}, 0, fmt.Errorf("malformed stat field %d %q", i+1, b)
		}
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return Proc{}, 0, fmt.Errorf("malformed stat flags %q", b)
	}
	return p, flags, nil
}

// splitNUL splits a NUL-separated /proc file (cmdline, environ).
func splitNUL(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return []string{}
	}
	return strings.Split(string(b), "\x00")
}

// execWindow bounds how long read waits for a process inside execve.
const execWindow = 100 * time.Millisecond

// read returns one process, or ok=false if it vanished.
//
// execve has a window after the new program is committed (comm already
// shows the new name, and for a child started by os/exec, cmd.Start has
// already returned) but before its argv and environment are mapped; /proc
// then shows an empty cmdline and environ. A leak scan that hit that window
// would miss an environment-marked process, so read re-reads a live,
// non-kernel process with an empty cmdline for up to execWindow.
func read(pid int) (p Proc, ok bool, err error) {
	deadline := time.Now().Add(execWindow)
	for {
		p, ok, settled, err := readOnce(pid)
		if err != nil || !ok || settled || !time.Now().Before(deadline) {
			return p, ok, err
		}
		time.Sleep(time.Millisecond)
	}
}

func readOnce(pid int) (p Proc, ok, settled bool, err error) {
	dir := procRoot + "/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		if vanished(err) {
			return Proc{}, false, false, nil
		}
		return Proc{}, false, false, err
	}
	p, flags, err := parseStat(b)
	if err != nil {
		return Proc{}, false, false, err
	}
	// A process may exit between the two reads; keep the stat data and
	// leave Cmdline nil rather than dropping a process we did see.
	c, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		if !vanished(err) {
			return Proc{}, false, false, err
		}
		return p, true, true, nil
	}
	p.Cmdline = splitNUL(c)
	settled = len(p.Cmdline) > 0 || p.State == 'Z' || p.State == 'X' || flags&pfKthread != 0
	return p, true, settled, nil
}

// Scan lists every process in /proc, sorted by PID. Processes that exit
// during the scan are silently skipped.
func Scan() ([]Proc, error) {
	ids, err := pids()
	if err != nil {
		return nil, err
	}
	out := make([]Proc, 0, len(ids))
	for _, pid := range ids {
		p, ok, err := read(pid)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// WithEnv returns processes whose /proc/PID/environ contains exactly
// KEY=VALUE. This is the one handle that survives setsid/setpgid escapes
// and re-parenting to init, which is why leak tests mark their processes
// through the environment.
//
// Caveats: environ is the environment at execve time (later setenv calls
// in the process are not visible), zombies have an empty environ, and
// processes of other users are skipped unless we are root.
func WithEnv(key, value string) ([]Proc, error) {
	want := []byte(key + "=" + value)
	ps, err := Scan()
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, p := range ps {
		b, err := os.ReadFile(procRoot + "/" + strconv.Itoa(p.PID) + "/environ")
		if err == nil && len(b) == 0 && p.State != 'Z' {
			// Empty environ on a live process: it may have started another
			// execve since Scan read it (bash exec'ing a tool). read waits
			// that out; then environ is mapped and worth one more look.
			var ok bool
			if p, ok, err = read(p.PID); err == nil && ok {
				b, err = os.ReadFile(procRoot + "/" + strconv.Itoa(p.PID) + "/environ")
			}
		}
		if err != nil {
			if vanished(err) {
				continue
			}
			return nil, err
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

// InGroup returns the processes whose process group ID is pgid.
func InGroup(pgid int) ([]Proc, error) {
	ps, err := Scan()
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, p := range ps {
		if p.PGID == pgid {
			out = append(out, p)
		}
	}
	return out, nil
}

// Alive drops zombies ('Z') and dead-but-not-yet-gone entries ('X'): neither
// runs code any more, so neither is a leaked *running* process. Zombies are
// still reported separately by Zombies, because an unreaped child is its own
// kind of leak.
func Alive(ps []Proc) []Proc {
	var out []Proc
	for _, p := range ps {
		if p.State != 'Z' && p.State != 'X' {
			out = append(out, p)
		}
	}
	return out
}

// Zombies keeps only processes in state 'Z'.
func Zombies(ps []Proc) []Proc {
	var out []Proc
	for _, p := range ps {
		if p.State == 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// pollInterval is how often WaitUntil re-evaluates its condition.
const pollInterval = 10 * time.Millisecond

// WaitUntil calls fn every ~10ms until it returns true or deadline passes.
// fn is always called at least once, even if deadline is already past. On
// timeout the test fails with what and the description fn returned last,
// so the message says what state the system was stuck in.
//
// Like t.Fatal, it must be called from the goroutine running the test.
func WaitUntil(t testing.TB, deadline time.Time, what string, fn func() (bool, string)) {
	t.Helper()
	start := time.Now()
	for n := 1; ; n++ {
		ok, desc := fn()
		if ok {
			return
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("timed out after %v (%d tries) waiting for %s; last: %s",
				time.Since(start).Round(time.Millisecond), n, what, desc)
			return // only reached with a fake TB whose Fatalf returns
		}
		// Sleeping between polls is not synchronisation: the condition is
		// re-checked, and the sleep only bounds CPU use.
		time.Sleep(min(pollInterval, time.Until(deadline)))
	}
}

// statusFields reads the "Key:\tvalue" lines of /proc/PID/status.
func statusFields(pid int) (map[string]string, error) {
	b, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil, err
	}
	return parseStatus(b), nil
}

func parseStatus(b []byte) map[string]string {
	m := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// SignalMasks returns the SigBlk and SigIgn masks of pid. Bit n-1 is set
// for signal n (SIGTERM=15 is 1<<14). Note that SigBlk is per thread: the
// value in /proc/PID/status is the main thread's, which is the right one for
// a single-threaded bash but not a complete picture of a Go process.
//
// Tests use it to prove a tool started with default dispositions: a bash
// started from a goroutine whose mask blocks SIGTERM, or whose parent
// ignored SIGINT, would not die the way the daemon expects.
func SignalMasks(pid int) (blocked, ignored uint64, err error) {
	m, err := statusFields(pid)
	if err != nil {
		return 0, 0, err
	}
	if blocked, err = hexField(m, "SigBlk"); err != nil {
		return 0, 0, err
	}
	if ignored, err = hexField(m, "SigIgn"); err != nil {
		return 0, 0, err
	}
	return blocked, ignored, nil
}

func hexField(m map[string]string, key string) (uint64, error) {
	v, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("status has no %s field", key)
	}
	n, err := strconv.ParseUint(v, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("status %s=%q: %w", key, v, err)
	}
	return n, nil
}

// OpenFDs lists the open file descriptor numbers of pid, ascending. Tests
// use it to prove a tool process inherited only stdin/stdout/stderr (plus
// whatever the daemon passes on purpose), not the daemon's sockets.
// For the calling process itself the list includes the fd used to read the
// directory.
func OpenFDs(pid int) ([]int, error) {
	ents, err := os.ReadDir(procRoot + "/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			return nil, fmt.Errorf("unexpected fd entry %q", e.Name())
		}
		out = append(out, fd)
	}
	sort.Ints(out)
	return out, nil
}

// oCloexec is O_CLOEXEC as shown (in octal) in /proc/PID/fdinfo "flags".
const oCloexec = 0o2000000

// InheritableFDs lists the fds of pid that are NOT close-on-exec, i.e. the
// ones a child would inherit across execve. A test binary is often started
// with stray inherited fds (a CI runner's pipes, say); those flow into every
// process the test starts, so an fd-leak assertion must treat
// InheritableFDs(os.Getpid()) as the baseline rather than expect exactly
// {0,1,2}.
func InheritableFDs(pid int) ([]int, error) {
	fds, err := OpenFDs(pid)
	if err != nil {
		return nil, err
	}
	dir := procRoot + "/" + strconv.Itoa(pid) + "/fdinfo/"
	out := fds[:0]
	for _, fd := range fds {
		b, err := os.ReadFile(dir + strconv.Itoa(fd))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // closed since the listing (e.g. the ReadDir fd)
			}
			return nil, err
		}
		flags, err := strconv.ParseUint(parseStatus(b)["flags"], 8, 64)
		if err != nil {
			return nil, fmt.Errorf("fdinfo %d of pid %d: %w", fd, pid, err)
		}
		if flags&oCloexec == 0 {
			out = append(out, fd)
		}
	}
	return out, nil
}

// RSSKiB returns VmRSS of pid in KiB. Zombies and kernel threads have no
// VmRSS line, which is reported as an error rather than as zero so a test
// cannot mistake "not measurable" for "small".
func RSSKiB(pid int) (int64, error) {
	m, err := statusFields(pid)
	if err != nil {
		return 0, err
	}
	v, ok := m["VmRSS"]
	if !ok {
		return 0, fmt.Errorf("pid %d: status has no VmRSS (zombie or kernel thread?)", pid)
	}
	num, unit, _ := strings.Cut(v, " ")
	if unit != "kB" {
		return 0, fmt.Errorf("pid %d: unexpected VmRSS %q", pid, v)
	}
	return strconv.ParseInt(num, 10, 64)
}
