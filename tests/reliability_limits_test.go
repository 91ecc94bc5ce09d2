// RELIABILITY.md scenarios 20-22: descriptor limits, a fork bomb, a full
// TMPDIR.

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
	"golang.org/x/sys/unix"
)

// ---------------------------------------------------------------------------
// 20. RLIMIT_NOFILE = 64 with 100 concurrent calls: excess calls get errors,
// no hang, no fd leak.
//
// Each call briefly needs descriptors in the daemon (its owner record, its
// arguments file, its output file, the exec pipe), so 100 calls starting
// together exhaust 64. Every call must still be answered: with its result,
// or with an error result or JSON-RPC error, before the deadline.
// Afterwards the descriptor count is back to the baseline and a call
// succeeds again.
func TestFileDescriptorLimit(t *testing.T) {
	const (
		limit = 64
		calls = 100
	)
	m := rlNewMark(t, "rl20")
	dir := harness.WriteFiles(t, map[string]string{
		// The sleep only keeps the calls in flight together; nothing
		// waits for it.
		"server.sh":  `tool_work() { sleep 0.3; printf 'done %s' "$1"; }`,
		"tools.json": harness.ToolsJSON("work"),
	})
	tmp := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	s := rlLimited(t, limit, []string{"TMPDIR=" + tmp, m.env(), "MCP_LOG_FILE=" + logFile},
		append(append([]string{"--max-concurrency", strconv.Itoa(calls)}, rlQuietFlags...), filepath.Join(dir, "server.sh")))
	pid := s.Cmd.Process.Pid
	s.RoundTrip(harness.InitLine)
	if got := s.RoundTrip(rlCall(`"warm"`, "work", `{}`)); !strings.Contains(got, `"text":"done {}"`) {
		t.Fatalf("warm-up call: %s", got)
	}
	rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
	base := rlQuietSample(t, pid)

	start := time.Now()
	for i := 0; i < calls; i++ {
		s.Send(rlCall(strconv.Itoa(i), "work", fmt.Sprintf(`{"i":%d}`, i)))
	}
	answered := map[string]bool{}
	var ok, isError, rpcError int
	errTexts := map[string]int{}
	for n := 0; n < calls; n++ {
		// recv fails the test if nothing comes before the deadline: a hang.
		line := s.Recv()
		resp := harness.Parse(t, string(line))
		id := string(resp.ID)
		if answered[id] {
			t.Fatalf("id %s answered twice", id)
		}
		answered[id] = true
		text, isText := resp.TextItem()
		switch {
		case resp.Error != nil:
			rpcError++
			errTexts[fmt.Sprintf("error %d %s", resp.Error.Code, resp.Error.Message)]++
		case isText && resp.Result.IsError:
			isError++
			// A full descriptor table is what happened, whatever the
			// spawn's own error was (ForkExec reports EBADF for it).
			if strings.Contains(text, "bad file descriptor") {
				t.Errorf("call %s: the error does not say the table is full: %s", id, text)
			}
			errTexts["isError "+text]++
		case isText && text == fmt.Sprintf(`done {"i":%s}`, id):
			ok++
		default:
			t.Errorf("call %s: neither its result nor an error: %s", id, line)
		}
	}
	took := time.Since(start)
	if len(answered) != calls {
		t.Fatalf("%d distinct ids answered, want %d", len(answered), calls)
	}
	t.Logf("%d calls under RLIMIT_NOFILE=%d answered in %v: %d results, %d isError, %d JSON-RPC errors; errors: %v",
		calls, limit, took.Round(time.Millisecond), ok, isError, rpcError, errTexts)

	rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
	t.Run("fds back to the baseline", func(t *testing.T) {
		proctest.WaitUntil(t, time.Now().Add(5*time.Second), "open fds back to the baseline", func() (bool, string) {
			p, err := rlSample(pid)
			if err != nil {
				return false, err.Error()
			}
			return p.quiet() && p.fds == base.fds, fmt.Sprintf("%d fds, baseline %d: %s", p.fds, base.fds, rlFDs(pid))
		})
	})
	// Whether a removal runs out of descriptors here depends on how the
	// calls interleave, so leftovers are only reported; the squeeze test
	// below reproduces them deterministically.
	if d := rlCallDirs(tmp); len(d) != 0 {
		t.Logf("%d call directories left in TMPDIR after the burst (see TestFileDescriptorSqueeze)", len(d))
	}
	t.Run("serving afterwards", func(t *testing.T) {
		if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
			t.Fatalf("ping: %s", got)
		}
		if got := s.RoundTrip(rlCall(`"again"`, "work", `{}`)); !strings.Contains(got, `"text":"done {}"`) || strings.Contains(got, `"isError":true`) {
			t.Fatalf("a call after the burst: %s", got)
		}
	})
	rlWaitNoZombies(t, time.Now().Add(2*time.Second), pid)
}

// rlWaitNoCallDirs waits (a few seconds, once descriptors are available
// again) for TMPDIR to hold no call root, and explains a failure with the
// daemon's own log lines about removals.
func rlWaitNoCallDirs(t *testing.T, tmp, logFile string) {
	t.Helper()
	proctest.WaitUntil(t, time.Now().Add(5*time.Second), "no call directory left in TMPDIR", func() (bool, string) {
		d := rlCallDirs(tmp)
		if len(d) == 0 {
			return true, ""
		}
		log, _ := os.ReadFile(logFile)
		var why []string
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "not removed") {
				why = append(why, l)
			}
		}
		return false, fmt.Sprintf("%d left: %v\nthe daemon's log:\n%s", len(d), d, strings.Join(why[:min(len(why), 4)], "\n"))
	})
}

// The same limit, squeezed until it fails the same way every time: the
// daemon's soft RLIMIT_NOFILE is set (prlimit(2) on the running daemon) so
// that exactly one descriptor number is free. (The limit caps descriptor
// numbers, not their count: the free slot is the lowest unused number.) A
// call can then create its root and open one file at a time, but cannot
// start bash, which needs its output file and the exec pipe together. The
// call must fail with an error result, and its root must not outlive it —
// at the latest once descriptors are free again.
func TestFileDescriptorSqueeze(t *testing.T) {
	m := rlNewMark(t, "rl20s")
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	// The squeeze is on starting bash at the call: no process is started
	// ahead of it (a warm one needs no new descriptor pair to be handed
	// a call).
	s := harness.Start(t, rlServe(m, `tool_work() { printf 'done %s' "$1"; }`, []string{"work"}, []string{"--warm", "0"}, "MCP_LOG_FILE="+logFile))
	tmp := s.Tmp
	pid := s.Cmd.Process.Pid
	if got := s.RoundTrip(rlCall(`"warm"`, "work", `{}`)); !strings.Contains(got, `"text":"done {}"`) {
		t.Fatalf("warm-up call: %s", got)
	}
	rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
	base := rlMustSample(t, pid)
	fds, err := proctest.OpenFDs(pid)
	if err != nil {
		t.Fatal(err)
	}
	free := 0
	for _, fd := range fds {
		if fd == free {
			free++
		}
	}
	var old unix.Rlimit
	if err := prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Skipf("prlimit(2) on the daemon is not permitted: %v", err)
	}
	squeezed := unix.Rlimit{Cur: uint64(free) + 1, Max: old.Max}
	if err := prlimit(pid, unix.RLIMIT_NOFILE, &squeezed, nil); err != nil {
		t.Skipf("prlimit(2) on the daemon is not permitted: %v", err)
	}
	got := s.RoundTrip(rlCall(`"squeezed"`, "work", `{}`))
	if err := prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("with only descriptor %d free: %s", free, got)
	resp := harness.Parse(t, got)
	if text, ok := resp.TextItem(); resp.Error == nil && !(ok && resp.Result.IsError) {
		t.Fatalf("a call with one free descriptor: %s (text %q), want an error", got, text)
	}
	rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
	// Back to the baseline: a descriptor leaked by the failed call stays
	// open; one the daemon holds for a moment (a file it reads) does not,
	// so the count is sampled until it matches.
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon's descriptors back to the baseline after the failed call", func() (bool, string) {
		p := rlMustSample(t, pid)
		return p.fds == base.fds, fmt.Sprintf("%d fds open, baseline %d: %s", p.fds, base.fds, rlFDs(pid))
	})
	if got := s.RoundTrip(rlCall(`"after"`, "work", `{}`)); !strings.Contains(got, `"text":"done {}"`) || strings.Contains(got, `"isError":true`) {
		t.Fatalf("a call once descriptors are free again: %s", got)
	}
	rlWaitNoCallDirs(t, tmp, logFile)
}

// ---------------------------------------------------------------------------
// 21. A fork bomb in a tool: the daemon keeps answering ping; the bomb is
// gone within grace + 1 s.
//
// The bomb is bounded so the machine survives a daemon that fails: a
// binary tree of bash subshells 10 levels deep, 2047 processes that all
// stay alive, in the call's process group and carrying the marker. It
// ignores SIGTERM (inherited by every fork), so only the SIGKILL at the
// end of the grace can end it. The daemon is pinged while the bomb forks
// and while it is cancelled.
func TestForkBombIsContained(t *testing.T) {
	const (
		depth = 10
		procs = 1<<(depth+1) - 1
		grace = 2 * time.Second
	)
	m := rlNewMark(t, "rl21")
	script := `tool_bomb() {
    trap '' TERM
    b() { if (($1 > 0)); then b $(($1 - 1)) & b $(($1 - 1)) & fi; exec sleep 1000; }
    b ` + strconv.Itoa(depth) + ` &
    wait
}`
	s := harness.Start(t, rlServe(m, script, []string{"bomb"}, []string{"--grace", grace.String()}))
	tmp := s.Tmp
	pid := s.Cmd.Process.Pid

	var lat []time.Duration
	// ping sends a few pings in a row; each answer must be the next line.
	ping := func(when string) {
		t.Helper()
		for range 5 {
			id := fmt.Sprintf(`"ping-%d"`, len(lat))
			start := time.Now()
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
				t.Fatalf("ping %s: %s", when, got)
			}
			lat = append(lat, time.Since(start))
		}
	}
	summary := func() string {
		if len(lat) == 0 {
			return "none"
		}
		sorted := slices.Clone(lat)
		slices.Sort(sorted)
		s := fmt.Sprintf("%d pings, median %v, slowest %v", len(sorted),
			sorted[len(sorted)/2].Round(time.Microsecond), sorted[len(sorted)-1].Round(time.Microsecond))
		lat = lat[:0]
		return s
	}
	countBomb := func() int {
		ps, err := rlLeft(m, pid)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range ps {
			if p.Comm == "sleep" {
				n++
			}
		}
		return n
	}
	s.Send(rlCall(`"bomb"`, "bomb", `{}`))
	forkStart := time.Now()
	proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("the bomb's %d processes", procs), func() (bool, string) {
		ping("while the bomb forks")
		n := countBomb()
		return n >= procs, fmt.Sprintf("%d of %d", n, procs)
	})
	t.Logf("the bomb reached %d processes in %v; meanwhile %s", procs, time.Since(forkStart).Round(time.Millisecond), summary())

	cancelled := time.Now()
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"bomb"}}`)
	var gone time.Duration
	proctest.WaitUntil(t, cancelled.Add(grace+time.Second), "the bomb gone within grace + 1 s of the cancel", func() (bool, string) {
		ping("while the bomb is cancelled")
		left, err := rlLeft(m, pid)
		if err != nil {
			return false, err.Error()
		}
		gone = time.Since(cancelled)
		return len(left) == 0, rlDescribe(left)
	})
	t.Logf("the bomb was gone %v after the cancel (grace %v); meanwhile %s", gone.Round(time.Millisecond), grace, summary())
	rlWaitNoZombies(t, harness.Deadline(t), pid)
	// The cancelled call is never answered: the next line is this ping's.
	ping("after the cancel")
	// The call's root is removed when its call ends, which the wire does
	// not show (a cancelled call is not answered): wait for it, bounded.
	proctest.WaitUntil(t, time.Now().Add(grace+3*time.Second), "the call directory removed", func() (bool, string) {
		d := rlCallDirs(tmp)
		return len(d) == 0, fmt.Sprintf("call directories left behind: %v", d)
	})
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v", ee)
	}
}

// ---------------------------------------------------------------------------
// 22. A full TMPDIR: the call gets an error result; nothing left behind.
//
// The daemon runs in its own mount namespace (unshare -m; -r too when not
// root) with a small tmpfs mounted on its TMPDIR, so the filesystem really
// is full — no permission trick that root would bypass. The test reaches
// that tmpfs through /proc/PID/root, fills it (first every block, then
// every inode), and expects the SDK's exact text for a call whose root
// cannot be created, with nothing left in TMPDIR and no process started.
// Once space is freed, calls run again.
func TestFullTMPDIR(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) is not installed: no way to mount a private tmpfs")
	}
	nsArgs := []string{"-m", "--propagation", "private"}
	if os.Geteuid() != 0 {
		nsArgs = append([]string{"-r"}, nsArgs...)
	}
	const mountCmd = `mount -t tmpfs -o size=256k,nr_inodes=64,mode=700 rl-full-tmpdir "$RL_TMP"`
	probe := exec.Command(unshare, append(nsArgs, "bash", "-c", mountCmd)...)
	probe.Env = append(os.Environ(), "RL_TMP="+t.TempDir())
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot mount a private tmpfs (unshare %s; %s): %v: %s", strings.Join(nsArgs, " "), mountCmd, err, out)
	}

	m := rlNewMark(t, "rl22")
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  `tool_quick() { printf 'ok %s' "$1"; }`,
		"tools.json": harness.ToolsJSON("quick"),
	})
	mnt := t.TempDir()
	// Warm call processes make and remove roots of their own in TMPDIR:
	// the pool is let go quiet before each fill, so the fill is not raced.
	daemonArgs := append(append([]string{"bash", "-c", mountCmd + ` && exec "$0" "$@"`, harness.Binary}, rlQuietFlags...), filepath.Join(dir, "server.sh"))
	cmd := exec.Command(unshare, append(nsArgs, daemonArgs...)...)
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	cmd.Env = append(os.Environ(), "RL_TMP="+mnt, "TMPDIR="+mnt, m.env(), "MCP_LOG_FILE="+logFile)
	s := harness.StartCmd(t, cmd)
	pid := s.Cmd.Process.Pid
	s.RoundTrip(harness.InitLine)
	// The daemon's TMPDIR as the test sees it: through its mount namespace.
	tmp := fmt.Sprintf("/proc/%d/root%s", pid, mnt)
	var st syscall.Statfs_t
	if err := syscall.Statfs(tmp, &st); err != nil || st.Type != 0x01021994 { // TMPFS_MAGIC
		t.Fatalf("the daemon's TMPDIR %s is not its private tmpfs (type %#x): %v", tmp, st.Type, err)
	}
	if got := s.RoundTrip(rlCall(`"before"`, "quick", `{}`)); got != `{"jsonrpc":"2.0","id":"before","result":{"content":[{"type":"text","text":"ok {}"}],"isError":false}}` {
		t.Fatalf("a call with room in TMPDIR: %s", got)
	}

	want := `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"Cannot run quick: its call directory could not be created."}],"isError":true}}`
	fullCall := func(what string, id string) {
		t.Helper()
		if got := s.RoundTrip(rlCall(id, "quick", `{}`)); got != fmt.Sprintf(want, id) {
			t.Errorf("a call with %s: %s\nwant %s", what, got, fmt.Sprintf(want, id))
		}
		if d := rlCallDirs(tmp); len(d) != 0 {
			t.Errorf("with %s, call directories were left behind: %v", what, d)
		}
		if left, err := rlLeft(m, pid); err != nil || len(left) != 0 {
			t.Errorf("with %s, call processes exist: %s %v", what, rlDescribe(left), err)
		}
		if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Fatalf("ping with %s: %s", what, got)
		}
	}

	// Every block taken.
	rlQuietSample(t, pid)
	fill := filepath.Join(tmp, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("filling TMPDIR: %v", err)
			}
			break
		}
	}
	f.Close()
	fullCall("no free block in TMPDIR", `"blocks"`)
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}

	// Every inode taken.
	rlQuietSample(t, pid)
	var fillers []string
	for i := 0; ; i++ {
		p := filepath.Join(tmp, fmt.Sprintf("inode.%d", i))
		f, err := os.Create(p)
		if err != nil {
			if !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("filling TMPDIR's inodes: %v", err)
			}
			break
		}
		f.Close()
		fillers = append(fillers, p)
	}
	fullCall("no free inode in TMPDIR", `"inodes"`)
	for _, p := range fillers {
		os.Remove(p)
	}

	if got := s.RoundTrip(rlCall(`"after"`, "quick", `{}`)); got != `{"jsonrpc":"2.0","id":"after","result":{"content":[{"type":"text","text":"ok {}"}],"isError":false}}` {
		t.Fatalf("a call once TMPDIR has room again: %s", got)
	}
	if d := rlCallDirs(tmp); len(d) != 0 {
		t.Errorf("call directories left behind: %v", d)
	}
	log, _ := os.ReadFile(logFile)
	var notRun []string
	for _, l := range strings.Split(string(log), "\n") {
		// Its call directory, or the MCP_CALL_TMPDIR inside it: which
		// creation met the full filesystem first is the filesystem's to say.
		if strings.Contains(l, `"msg":"Tool quick not run: cannot create `) {
			var e struct{ Error string }
			json.Unmarshal([]byte(l), &e)
			notRun = append(notRun, e.Error)
		}
	}
	if len(notRun) != 2 {
		t.Errorf("the log records %d calls not run, want 2:\n%s", len(notRun), log)
	}
	t.Logf("why the calls were not run: %q", notRun)
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v\n%s", ee, s.Stderr)
	}
}
