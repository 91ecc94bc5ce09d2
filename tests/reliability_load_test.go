package tests

// Reliability scenarios 12–14 (load) and 20–22 (resource exhaustion) of
// RELIABILITY.md, end to end: the real daemon, real bash, real limits.
// Every package-level name here starts with rl (this file's prefix).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// rlMark is the environment marker a test puts in the daemon's env: every
// call process inherits it, which is how leftovers are found in /proc.
type rlMark struct{ key, val string }

func (m rlMark) env() string { return m.key + "=" + m.val }

// rlNewMark makes a marker unique to this test and run, and kills whatever
// still carries it when the test ends, so a failing test cannot leave
// thousands of processes behind for the next one.
func rlNewMark(t *testing.T, name string) rlMark {
	t.Helper()
	m := rlMark{harness.MarkKey, fmt.Sprintf("%s-%d", name, os.Getpid())}
	t.Cleanup(func() {
		ps, err := proctest.WithEnv(m.key, m.val)
		if err != nil {
			return
		}
		for _, p := range proctest.Alive(ps) {
			if p.PID != os.Getpid() {
				syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
	})
	return m
}

// rlLeft lists the live processes carrying the marker other than the
// daemon itself (pid skip).
func rlLeft(m rlMark, skip int) ([]proctest.Proc, error) {
	ps, err := proctest.WithEnv(m.key, m.val)
	if err != nil {
		return nil, err
	}
	var out []proctest.Proc
	for _, p := range proctest.Alive(ps) {
		// An idle warm call process and the fork server are the daemon's,
		// not a call's.
		if p.PID != skip && !harness.IsIdleWarm(p) && !harness.IsForkServer(p) && !harness.IsKeeper(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func rlDescribe(ps []proctest.Proc) string {
	if len(ps) > 5 {
		return fmt.Sprintf("%d processes, first: %v", len(ps), ps[:5])
	}
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return fmt.Sprintf("%d processes: %s", len(ps), strings.Join(s, "; "))
}

// rlWaitNoneLeft waits until no marked process but the daemon is alive.
func rlWaitNoneLeft(t *testing.T, until time.Time, m rlMark, daemon int) {
	t.Helper()
	proctest.WaitUntil(t, until, "no call process left", func() (bool, string) {
		left, err := rlLeft(m, daemon)
		if err != nil {
			return false, err.Error()
		}
		return len(left) == 0, rlDescribe(left)
	})
}

// rlZombieChildren lists zombies whose parent is pid.
func rlZombieChildren(pid int) ([]proctest.Proc, error) {
	ps, err := proctest.Scan()
	if err != nil {
		return nil, err
	}
	var out []proctest.Proc
	for _, p := range proctest.Zombies(ps) {
		if p.PPID == pid {
			out = append(out, p)
		}
	}
	return out, nil
}

// rlWaitNoZombies waits until the daemon has reaped every child that
// exited (the daemon is a child subreaper, so orphans are its children).
func rlWaitNoZombies(t *testing.T, until time.Time, pid int) {
	t.Helper()
	proctest.WaitUntil(t, until, "no zombie children of the daemon", func() (bool, string) {
		z, err := rlZombieChildren(pid)
		if err != nil {
			return false, err.Error()
		}
		return len(z) == 0, rlDescribe(z)
	})
}

// rlProc is what /proc/PID/status and /proc/PID/fd say about the daemon.
type rlProc struct {
	rssKiB, hwmKiB int64
	threads        int
	fds            int  // not counting those of idle warm call processes (rlWarmPipes)
	warmSettled    bool // no warm call process was starting
	warmIdle       int  // idle warm call processes
	warmBusy       bool // a warm call process is being started or retired
}

func (p rlProc) String() string {
	return fmt.Sprintf("VmRSS %.1f MiB, VmHWM %.1f MiB, %d threads, %d fds",
		float64(p.rssKiB)/1024, float64(p.hwmKiB)/1024, p.threads, p.fds)
}

func rlSample(pid int) (rlProc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return rlProc{}, err
	}
	var p rlProc
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			p.rssKiB, found = n, found+1
		case "VmHWM":
			p.hwmKiB, found = n, found+1
		case "Threads":
			p.threads, found = int(n), found+1
		}
	}
	if found != 3 {
		return rlProc{}, fmt.Errorf("pid %d: VmRSS, VmHWM or Threads missing from status", pid)
	}
	fds, err := proctest.OpenFDs(pid)
	if err != nil {
		return rlProc{}, err
	}
	warm, settled := rlWarmPipes(pid)
	p.fds, p.warmSettled, p.warmIdle, p.warmBusy = len(fds), settled, len(warm), rlWarmRoots(pid) > 0
	for _, fd := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd)); warm[target] {
			p.fds--
		}
	}
	return p, nil
}

// rlWarmPipes are the pipes connecting daemon pid to its idle warm call
// processes: each holds its hand-over pipe as fd 4, and the daemon its
// write end, one descriptor per idle warm process, which the daemon
// keeps as long as the pool does (up to --warm, 10 s after the last call).
// settled: the daemon holds no other pipe but its stdio and what the test
// process passed it — none of a warm process still starting (its report
// pipe), none leaked (which keeps it unsettled for good).
func rlWarmPipes(pid int) (map[string]bool, bool) {
	ps, err := proctest.Scan()
	if err != nil {
		return nil, false
	}
	pipes := map[string]bool{}
	for _, p := range ps {
		if p.PPID == pid && p.PID == p.PGID && harness.IsIdleWarm(p) {
			if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/4", p.PID)); err == nil {
				pipes[target] = true
			}
		}
		// The keeper's list (fd 4).
		if p.PPID == pid && p.PID == p.PGID && harness.IsKeeper(p) {
			if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/4", p.PID)); err == nil {
				pipes[target] = true
			}
		}
		// The fork server's request (fd 4) and report (fd 5) pipes.
		if p.PPID == pid && p.PID == p.PGID && harness.IsForkServer(p) {
			for _, fd := range []int{4, 5} {
				if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", p.PID, fd)); err == nil {
					pipes[target] = true
				}
			}
		}
	}
	ours := map[string]bool{}
	if fds, err := proctest.OpenFDs(os.Getpid()); err == nil {
		for _, fd := range fds {
			target, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			ours[target] = true
		}
	}
	fds, err := proctest.OpenFDs(pid)
	if err != nil {
		return nil, false
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
		if fd > 2 && strings.HasPrefix(target, "pipe:") && !pipes[target] && !ours[target] {
			return pipes, false
		}
	}
	return pipes, true
}

// quiet: the daemon keeps no warm call process and starts or retires none
// (the descriptors it holds are then its own baseline's).
func (p rlProc) quiet() bool { return p.warmSettled && p.warmIdle == 0 && !p.warmBusy }

// rlWarmRoots counts the roots of warm call processes in daemon pid's
// runtime directory: made first when one is started, removed last when
// one is retired (a call's root is moved into TMPDIR when it is handed).
func rlWarmRoots(pid int) int {
	fds, _ := proctest.OpenFDs(pid)
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
		if filepath.Base(target) == ".mcp-bashd-owner" {
			m, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "warm.*"))
			return len(m)
		}
	}
	return 0
}

// rlQuietFlags keep warm call processes for a short while only, so that a
// test comparing the daemon's descriptors with a baseline can wait until
// the pool is empty again (rlQuietSample): warm processes come and go in
// the background, each holding a descriptor of the daemon's.
var rlQuietFlags = []string{"--warm-idle", "200ms"}

// rlQuietSample samples the daemon once its warm pool is empty again.
func rlQuietSample(t *testing.T, pid int) rlProc {
	t.Helper()
	// Two samples in a row, both quiet and alike: a descriptor list read
	// while a retirement was under way is not the baseline.
	var p, prev rlProc
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon's warm call processes to be retired", func() (bool, string) {
		var err error
		prev = p
		p, err = rlSample(pid)
		if err != nil {
			t.Fatal(err)
		}
		return prev.quiet() && p.quiet() && prev.fds == p.fds,
			fmt.Sprintf("%d idle warm processes, settled %v, starting or retiring %v", p.warmIdle, p.warmSettled, p.warmBusy)
	})
	return p
}

func rlMustSample(t *testing.T, pid int) rlProc {
	t.Helper()
	var p rlProc
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon's warm call processes to have started", func() (bool, string) {
		var err error
		p, err = rlSample(pid)
		if err != nil {
			t.Fatal(err)
		}
		return p.warmSettled, ""
	})
	return p
}

// rlFDs describes the daemon's open descriptors, for failure messages.
func rlFDs(pid int) string {
	fds, err := proctest.OpenFDs(pid)
	if err != nil {
		return err.Error()
	}
	var s []string
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
		s = append(s, fmt.Sprintf("%d→%s", fd, target))
	}
	return strings.Join(s, " ")
}

// rlSampler polls the daemon's status in the background and keeps the
// highest VmRSS and VmHWM seen.
type rlSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	max  rlProc
	n    int
}

func rlStartSampler(pid int) *rlSampler {
	s := &rlSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if p, err := rlSample(pid); err == nil {
				s.mu.Lock()
				s.n++
				if p.rssKiB > s.max.rssKiB {
					s.max.rssKiB = p.rssKiB
				}
				if p.hwmKiB > s.max.hwmKiB {
					s.max.hwmKiB = p.hwmKiB
				}
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// finish stops sampling; it returns the highest VmRSS and VmHWM seen and
// how many samples were taken.
func (s *rlSampler) finish() (rlProc, int) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max, s.n
}

func rlCall(id, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// rlServe serves script and tools.json declaring tools, with flags,
// marked with m, with a fresh TMPDIR (Daemon.Tmp), initialized.
func rlServe(m rlMark, script string, tools []string, flags []string, env ...string) harness.Options {
	return harness.Options{Files: map[string]string{"server.sh": script, "tools.json": harness.ToolsJSON(tools...)},
		Flags: flags, TempDir: true, Marked: m.val, Env: env, Init: true}
}

// rlCallDirs lists per-call roots left under a TMPDIR.
func rlCallDirs(tmp string) []string {
	m, _ := filepath.Glob(filepath.Join(tmp, "mcp-call.*"))
	return m
}

// rlGoroutines stops the daemon with SIGQUIT, which makes the Go runtime
// print every goroutine's stack on stderr and exit, and counts the
// daemon's own goroutines (those with a frame in package main or in this
// module) by their outermost such frame. It is the only outside view of
// goroutines; it ends the daemon, so it is the last step of a test.
func rlGoroutines(t *testing.T, s *harness.Daemon) (int, map[string]int) {
	t.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done:
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("daemon did not exit on SIGQUIT")
	}
	dump := s.Stderr.String()
	byFunc := map[string]int{}
	total := 0
	for _, block := range strings.Split(dump, "\n\n") {
		if !strings.HasPrefix(block, "goroutine ") {
			continue
		}
		// A goroutine is named by its outermost frame in the daemon's
		// code (its entry function), which does not depend on where it
		// happened to be blocked when the dump was taken.
		entry := ""
		for _, line := range strings.Split(block, "\n")[1:] {
			if strings.HasPrefix(line, "main.") || strings.HasPrefix(line, "github.com/mcp-bashd/") {
				// "pkg.(*T).method(args...)": the name ends at the last "(".
				entry = line
				if i := strings.LastIndex(line, "("); i > 0 {
					entry = line[:i]
				}
			}
		}
		if entry != "" {
			byFunc[entry]++
			total++
		}
	}
	if total == 0 {
		t.Fatalf("no goroutine of the daemon in its SIGQUIT dump:\n%.2000s", dump)
	}
	return total, byFunc
}

// ---------------------------------------------------------------------------
// 12. 200 concurrent calls × 10 rounds: daemon RSS, goroutines and open fds
// back to baseline.
//
// The baseline is taken after a warm-up round at full concurrency, once
// every call process is gone, so the runtime has already grown to what
// this load needs. Goroutines are counted exactly from a SIGQUIT dump; as
// that ends the daemon, a reference daemon that ran only the warm-up round
// gives the baseline count. Threads are a coarser proxy: the Go runtime
// never ends an idle thread, so their number is the high-water mark of
// syscalls that blocked at the same time — up to about one per call
// running at once, reached in any round or none (17 to 135 after the
// warm-up, 97 to 180 after ten rounds, in runs on 2 CPUs). What must not
// happen is growth with the number of calls (a thread pinned per call, or
// 2,000 here), so the count must stay below twice the concurrency.
func TestConcurrentRoundsBackToBaseline(t *testing.T) {
	const (
		perRound    = 200
		rounds      = 10
		rssSlackKiB = 10 << 10
	)
	type run struct {
		base, after rlProc
		goroutines  int
		byFunc      map[string]int
	}
	load := func(t *testing.T, name string, rounds int) run {
		m := rlNewMark(t, name)
		s := harness.Start(t, rlServe(m, `tool_quick() { printf 'ok %s' "$1"; }`, []string{"quick"}, append([]string{"--max-concurrency", strconv.Itoa(perRound)}, rlQuietFlags...), "GOTRACEBACK=all"))
		tmp := s.Tmp
		pid := s.Cmd.Process.Pid
		round := func(r int) time.Duration {
			start := time.Now()
			for i := 0; i < perRound; i++ {
				s.Send(rlCall(fmt.Sprintf(`"r%d-%d"`, r, i), "quick", fmt.Sprintf(`{"i":%d}`, i)))
			}
			seen := map[string]bool{}
			for n := 0; n < perRound; n++ {
				resp := harness.Parse(t, string(s.Recv()))
				var id string
				if err := json.Unmarshal(resp.ID, &id); err != nil {
					t.Fatalf("round %d: response with unexpected id %s", r, resp.ID)
				}
				if seen[id] {
					t.Fatalf("round %d: id %s answered twice", r, id)
				}
				seen[id] = true
				var i int
				fmt.Sscanf(id, fmt.Sprintf("r%d-%%d", r), &i)
				text, ok := resp.TextItem()
				if want := fmt.Sprintf(`ok {"i":%d}`, i); !ok || resp.Result.IsError || text != want {
					t.Fatalf("round %d: %s answered %+v, want text %q", r, id, resp, want)
				}
			}
			if len(seen) != perRound {
				t.Fatalf("round %d: %d distinct ids answered, want %d", r, len(seen), perRound)
			}
			return time.Since(start)
		}

		var out run
		warm := round(0)
		rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
		out.base = rlQuietSample(t, pid)
		t.Logf("%s: after the warm-up round (%v): %v", name, warm.Round(time.Millisecond), out.base)
		var took []string
		for r := 1; r <= rounds; r++ {
			took = append(took, round(r).Round(time.Millisecond).String())
		}
		rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
		if rounds > 0 {
			t.Logf("%s: %d rounds of %d calls took %s", name, rounds, perRound, strings.Join(took, " "))
		}
		// Every call's group is gone and its root out of TMPDIR before its
		// response is written; the root's removal (removeRoot) holds a
		// descriptor for a moment after. Polling absorbs that and a scan
		// racing the last close. The baseline itself can catch such a
		// moment (a root's removal, a warm process's pipe), so a count
		// below it is back too; a leak is a count above it.
		proctest.WaitUntil(t, time.Now().Add(5*time.Second), "open fds back to the baseline", func() (bool, string) {
			p, err := rlSample(pid)
			if err != nil {
				return false, err.Error()
			}
			return p.quiet() && p.fds <= out.base.fds, fmt.Sprintf("%d fds, baseline %d: %s", p.fds, out.base.fds, rlFDs(pid))
		})
		// The runtime returns freed heap to the OS in the background.
		proctest.WaitUntil(t, time.Now().Add(10*time.Second), "RSS back to the baseline (+10 MiB)", func() (bool, string) {
			p, err := rlSample(pid)
			if err != nil {
				return false, err.Error()
			}
			return p.rssKiB <= out.base.rssKiB+rssSlackKiB, fmt.Sprintf("now %v; baseline %v", p, out.base)
		})
		out.after = rlMustSample(t, pid)
		rlWaitNoZombies(t, time.Now().Add(2*time.Second), pid)
		if d := rlCallDirs(tmp); len(d) != 0 {
			t.Errorf("call directories left behind: %v", d)
		}
		if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
			t.Fatalf("ping after the load: %s", got)
		}
		out.goroutines, out.byFunc = rlGoroutines(t, s)
		return out
	}

	ref := load(t, "rl12-reference", 0)
	got := load(t, "rl12", rounds)
	t.Logf("baseline %v; after %d×%d calls %v", got.base, rounds, perRound, got.after)
	t.Logf("daemon goroutines: %d after the warm-up only, %d after %d more rounds", ref.goroutines, got.goroutines, rounds)
	if got.goroutines != ref.goroutines || fmt.Sprint(got.byFunc) != fmt.Sprint(ref.byFunc) {
		t.Errorf("goroutines not back to the baseline: %d %v after the load, %d %v after the warm-up only",
			got.goroutines, got.byFunc, ref.goroutines, ref.byFunc)
	}
	if got.after.threads >= 2*perRound {
		t.Errorf("%d threads after %d calls (%d after the warm-up), want < %d: threads pile up with calls",
			got.after.threads, rounds*perRound, got.base.threads, 2*perRound)
	}
}

// ---------------------------------------------------------------------------
// 13. A tool writing 1 GiB: output capped with a marker, daemon RSS < cap +
// 50 MiB, other calls unaffected.
//
// The output goes to a file in the call's root under the test's TMPDIR,
// which the daemon removes when the call ends (asserted). The tool holds
// its call open after writing until the test has checked the other calls,
// so "meanwhile" is a fact, not a timing guess. VmHWM (the kernel's peak
// RSS) covers every moment of the daemon's life, including the result
// being built and written.
func TestGigabyteOutputIsCapped(t *testing.T) {
	const total = 1 << 30
	for _, c := range []struct {
		name  string
		cap   int64
		flags []string
	}{
		{"cap 1 MiB", 1 << 20, []string{"--output-cap", "1048576"}},
		{"default cap 16 MiB", 16 << 20, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := rlNewMark(t, "rl13")
			ctl := t.TempDir()
			script := `tool_big() {
    head -c ` + strconv.Itoa(total) + ` /dev/zero | tr '\0' a
    : >"$RL_CTL/written"
    while [ ! -e "$RL_CTL/gate" ]; do sleep 0.01; done
}
tool_quick() { printf 'ok %s' "$1"; }`
			s := harness.Start(t, rlServe(m, script, []string{"big", "quick"}, c.flags, "RL_CTL="+ctl))
			tmp := s.Tmp
			pid := s.Cmd.Process.Pid
			before := rlMustSample(t, pid)
			sampler := rlStartSampler(pid)

			s.Send(rlCall(`"big"`, "big", `{}`))
			// While the tool writes: ping and a quick tool are answered,
			// in order, and before the big call.
			var lat []string
			for i := 0; i < 3; i++ {
				start := time.Now()
				id := fmt.Sprintf(`"p%d"`, i)
				if got := s.RoundTrip(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
					t.Fatalf("ping while writing: %s", got)
				}
				lat = append(lat, "ping "+time.Since(start).Round(time.Microsecond).String())
				start = time.Now()
				resp := harness.Parse(t, s.RoundTrip(rlCall(fmt.Sprintf(`"q%d"`, i), "quick", `{}`)))
				if text, ok := resp.TextItem(); !ok || resp.Result.IsError || text != "ok {}" || string(resp.ID) != fmt.Sprintf(`"q%d"`, i) {
					t.Fatalf("quick call while writing: %+v", resp)
				}
				lat = append(lat, "quick "+time.Since(start).Round(time.Microsecond).String())
			}
			_, errWritten := os.Stat(filepath.Join(ctl, "written"))
			t.Logf("answered while the 1 GiB was being written (still writing: %v): %s", errWritten != nil, strings.Join(lat, ", "))
			proctest.WaitUntil(t, harness.Deadline(t), "the tool has written 1 GiB", func() (bool, string) {
				_, err := os.Stat(filepath.Join(ctl, "written"))
				return err == nil, fmt.Sprint(err)
			})
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"p-after","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"p-after","result":{}}` {
				t.Fatalf("ping with 1 GiB of output pending: %s", got)
			}
			start := time.Now()
			if err := os.WriteFile(filepath.Join(ctl, "gate"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			line := s.Recv()
			took := time.Since(start)
			peak, samples := sampler.finish()
			resp := harness.Parse(t, string(line))
			text, ok := resp.TextItem()
			want := strings.Repeat("a", int(c.cap)) + fmt.Sprintf("\n[mcp-bashd: output truncated; %d more bytes not shown]", total-c.cap)
			if string(resp.ID) != `"big"` || !ok || resp.Result.IsError || text != want {
				t.Fatalf("big call: id %s, %d bytes of text, isError %v; want %d bytes ending %q, got ending %q",
					resp.ID, len(text), resp.Result != nil && resp.Result.IsError, len(want), want[len(want)-60:], text[max(0, len(text)-60):])
			}
			after := rlMustSample(t, pid)
			limit := (c.cap + 50<<20) >> 10
			t.Logf("before %v; peak while running (%d samples) VmRSS %.1f MiB; after %v; result built and read in %v",
				before, samples, float64(peak.rssKiB)/1024, after, took.Round(time.Millisecond))
			if after.hwmKiB >= limit || peak.rssKiB >= limit {
				t.Errorf("daemon RSS peaked at %.1f MiB (VmHWM %.1f MiB), want < cap + 50 MiB = %d MiB",
					float64(peak.rssKiB)/1024, float64(after.hwmKiB)/1024, limit>>10)
			}
			if d := rlCallDirs(tmp); len(d) != 0 {
				t.Errorf("the call's root (with its 1 GiB output file) was not removed: %v", d)
			}
			rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
			if ee := s.CloseAndWait(); ee != nil {
				t.Fatalf("exit after EOF: %v", ee)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 14. A tool that leaves `(sleep 100 &)` holding its output: the call returns
// at once, and nothing is left.
//
// "At once" is bounded at 5 s, far below the 100 s the child would hold a
// pipe; the background children are killed with the call's group.
func TestBackgroundChildHoldingOutput(t *testing.T) {
	const bound = 5 * time.Second
	m := rlNewMark(t, "rl14")
	script := `tool_subshell() { (sleep 100 &); echo started; }
tool_child() { sleep 100 & echo started; }
tool_stderr() { sleep 100 >/dev/null & echo started; }
tool_nested() { ( (sleep 100 &) & ); { sleep 100 2>&1 & } ; echo started; }`
	tools := []string{"subshell", "child", "stderr", "nested"}
	s := harness.Start(t, rlServe(m, script, tools, nil))
	tmp := s.Tmp
	pid := s.Cmd.Process.Pid
	for i, tool := range tools {
		start := time.Now()
		resp := harness.Parse(t, s.RoundTrip(rlCall(strconv.Itoa(i+1), tool, `{}`)))
		took := time.Since(start)
		if text, ok := resp.TextItem(); !ok || resp.Result.IsError || text != "started" {
			t.Fatalf("%s: %+v", tool, resp)
		}
		t.Logf("%s: answered in %v", tool, took.Round(time.Microsecond))
		if took >= bound {
			t.Errorf("%s: the call took %v, want < %v: a background child held its output", tool, took, bound)
		}
		// The group was SIGKILLed before the answer was written; only the
		// kernel's delivery is left to wait for.
		rlWaitNoneLeft(t, time.Now().Add(bound), m, pid)
	}
	rlWaitNoZombies(t, time.Now().Add(2*time.Second), pid)
	if d := rlCallDirs(tmp); len(d) != 0 {
		t.Errorf("call directories left behind: %v", d)
	}
}

// rlLimited starts the daemon with RLIMIT_NOFILE soft=hard=n: through
// util-linux prlimit when it exists (it sets the limit and execs, so the
// daemon keeps the pid), else through bash's ulimit and exec. os/exec
// cannot set rlimits itself.
func rlLimited(t *testing.T, n int, env, args []string) *harness.Daemon {
	t.Helper()
	o := harness.Options{Exe: "bash", Args: append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, n), harness.Binary}, args...), Env: env}
	if p, err := exec.LookPath("prlimit"); err == nil {
		o.Exe, o.Args = p, append([]string{fmt.Sprintf("--nofile=%d:%d", n, n), harness.Binary}, args...)
	}
	s := harness.Start(t, o)
	// The exec must have happened before the pid is the daemon's.
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon runs under the limit", func() (bool, string) {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", s.Cmd.Process.Pid))
		return err == nil && exe == harness.Binary, exe
	})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", s.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "Max open files") && (len(f) < 5 || f[3] != strconv.Itoa(n) || f[4] != strconv.Itoa(n)) {
			t.Fatalf("the daemon's limit is not %d: %s", n, line)
		}
	}
	return s
}
