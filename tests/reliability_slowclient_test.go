package tests

// Slow and vanished clients on stdio: scenarios 23 and 24 of RELIABILITY.md
// and the drain window (issue 10, items 3, 4, 10 and 13). The HTTP side is
// in reliability_slowhttp_test.go. Every package-level name here starts
// with sc (this file's prefix).
//
// A client that stops reading is a pipe the test never reads from: the
// daemon's stdout is the write end of an os.Pipe whose read end the test
// holds and leaves alone. "Stdout is full" is a fact the test reads from
// the pipe itself (TIOCINQ, the bytes queued, equals F_GETPIPE_SZ), and "every call slot
// waits for the client" is a line the daemon logs; no step waits on a
// sleep. Times are asserted only as generous hang bounds.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// scSlotsFull is what the daemon logs when every call slot holds an
// answer the client has not read: no further call starts until it reads.
const scSlotsFull = "every call slot waits for the client to read an answer"

// scMiB: mib prints 1 MiB of "a"; ctl prints 256 KiB of \x01, each byte
// six of JSON (\u0001). What one call costs while its result is built
// from such output is scenario 27's (the output cap applies to the escaped
// text); here it is kept small enough that the bound measures the answers
// piled up, not one call's escaping.
const scMiB = `sc_out() { head -c "$1" /dev/zero | tr '\0' "$(printf "\\$2")"; }
tool_mib() { sc_out 1048576 141; }
tool_ctl() { sc_out 262144 001; }
`

// scDaemon is a stdio daemon whose stdout the test reads only when it
// chooses to.
type scDaemon struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *os.File // read end of the daemon's stdout
	br     *bufio.Reader
	stderr *harness.Output
	done   chan struct{}
	dir    string
	log    string
	mark   rlMark
}

// scStartStdio writes SERVER.sh (rfLib + body) and tools.json, starts the
// daemon with flags and initializes (the one line the test reads before it
// goes silent).
func scStartStdio(t *testing.T, body string, tools []string, flags ...string) *scDaemon {
	t.Helper()
	d := &scDaemon{}
	var outW *os.File
	p, l := harness.RunCmd(t, scServer(body, tools, flags...), func(cmd *exec.Cmd) {
		var err error
		if d.stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if d.out, outW, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = outW
	})
	outW.Close()
	d.cmd, d.stderr, d.done, d.dir, d.log, d.mark = p.Cmd, p.Stderr, p.Done, l.Dir, l.Log, rlMark{harness.MarkKey, l.Mark}
	t.Cleanup(func() {
		d.stdin.Close()
		d.out.Close()
	})
	d.br = bufio.NewReader(d.out)
	d.send(t, harness.InitLine)
	if line := d.readLine(t); !strings.Contains(line, `"protocolVersion"`) {
		t.Fatalf("initialize: %q", line)
	}
	return d
}

func (d *scDaemon) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(d.stdin, line+"\n"); err != nil {
		t.Fatalf("write to the daemon: %v", err)
	}
}

// readLine reads one line of stdout, bounded by the test's deadline.
func (d *scDaemon) readLine(t *testing.T) string {
	t.Helper()
	d.out.SetReadDeadline(harness.Deadline(t))
	line, err := d.br.ReadString('\n')
	if err != nil {
		t.Fatalf("read stdout: %v (%q); stderr:\n%s", err, line, d.stderr)
	}
	return strings.TrimSuffix(line, "\n")
}

// scLogged reports whether the daemon's log has a line with msg.
func scLogged(path, msg string) bool {
	b, _ := os.ReadFile(path)
	return bytes.Contains(b, []byte(`"msg":"`+msg+`"`))
}

// exitWithin waits for the daemon to end at most bound after from, and
// returns how long after from it ended.
func (d *scDaemon) exitWithin(t *testing.T, from time.Time, bound time.Duration, what string) time.Duration {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(time.Until(from.Add(bound))):
		t.Fatalf("daemon still running %v after %s (bound %v); stderr:\n%s", time.Since(from).Round(time.Millisecond), what, bound, d.stderr)
	}
	return time.Since(from)
}

// signal reports the signal that ended the daemon (0: it exited).
func (d *scDaemon) signal() syscall.Signal {
	if ws := d.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// noneLeft waits until no process of the daemon's calls is alive.
func (d *scDaemon) noneLeft(t *testing.T, until time.Time) {
	t.Helper()
	rlWaitNoneLeft(t, until, d.mark, d.cmd.Process.Pid)
}

// scSendCalls sends n calls of tool from its own goroutine (the daemon may
// stop reading: that is the backpressure under test) and returns when the
// last one is written or the daemon ended.
func scSendCalls(d *scDaemon, n int, tool string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%s\n", rfCall(strconv.Itoa(i+1), tool, `{}`))
		}
		_, err := io.WriteString(d.stdin, b.String())
		errc <- err
	}()
	return errc
}

// Item 3 (scenario 23, stdio): a client that stops reading with 40 calls
// of 1 MiB in flight, then SIGTERM. A write blocked on the full pipe must
// not hold the shutdown: the daemon dies by SIGTERM within drain (0 on
// stdio) + grace + 5 s, leaving nothing running, and its memory stays
// under the output cap + 50 MiB the whole time.
func TestSlowClientStdoutFullSIGTERM(t *testing.T) {
	const grace = time.Second
	d := scStartStdio(t, scMiB, []string{"mib", "ctl"}, "--grace", grace.String())
	pid := d.cmd.Process.Pid
	sampler := rlStartSampler(pid)
	scSendCalls(d, 40, "mib")
	scPipeFull(t, d.out)
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	took := d.exitWithin(t, sent, grace+5*time.Second, "SIGTERM with stdout full")
	peak, _ := sampler.finish()
	if sig := d.signal(); sig != syscall.SIGTERM {
		t.Errorf("daemon ended with %v, want death by SIGTERM", d.cmd.ProcessState)
	}
	d.noneLeft(t, time.Now().Add(time.Second+rfScanSlack))
	t.Logf("died by %v %v after SIGTERM with stdout full; peak VmRSS %.1f MiB", d.signal(), took.Round(time.Millisecond), float64(peak.rssKiB)/1024)
	if limit := int64(16+50) << 10; peak.rssKiB >= limit {
		t.Errorf("daemon RSS peaked at %.1f MiB, want < cap + 50 MiB = %d MiB", float64(peak.rssKiB)/1024, limit>>10)
	}
}

// Item 10: a client that does not read while 400 calls of 1 MiB are asked
// for, with --max-concurrency 4. Answers waiting for the client keep their
// call slots, so calls stop starting and the daemon's memory stays under
// the output cap + 50 MiB — also when the output is control characters
// (1.5 MiB of JSON per answer). The test goes on until the daemon says
// every slot waits for the client (or its RSS passes the bound), then
// SIGTERM must still end it within drain + grace + 5 s.
func TestSlowClientAnswersAreBounded(t *testing.T) {
	for _, tool := range []string{"mib", "ctl"} {
		t.Run(tool, func(t *testing.T) {
			const grace = time.Second
			limit := int64(16+50) << 10 // default output cap + 50 MiB, in KiB
			d := scStartStdio(t, scMiB, []string{"mib", "ctl"}, "--max-concurrency", "4", "--grace", grace.String())
			pid := d.cmd.Process.Pid
			sampler := rlStartSampler(pid)
			scSendCalls(d, 400, tool)
			proctest.WaitUntil(t, harness.Deadline(t), "the daemon to report every slot waiting for the client", func() (bool, string) {
				p, err := rlSample(pid)
				if err != nil {
					return false, err.Error()
				}
				if p.hwmKiB >= limit {
					return true, "" // failed already: reported below
				}
				return scLogged(d.log, scSlotsFull), p.String()
			})
			now := rlMustSample(t, pid)
			if now.hwmKiB >= limit {
				t.Errorf("daemon VmHWM %.1f MiB with answers waiting for a client that does not read, want < cap + 50 MiB = %d MiB", float64(now.hwmKiB)/1024, limit>>10)
			}
			if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			took := d.exitWithin(t, sent, grace+5*time.Second, "SIGTERM with answers waiting")
			peak, samples := sampler.finish()
			if sig := d.signal(); sig != syscall.SIGTERM {
				t.Errorf("daemon ended with %v, want death by SIGTERM", d.cmd.ProcessState)
			}
			d.noneLeft(t, time.Now().Add(time.Second+rfScanSlack))
			t.Logf("%s: VmHWM %.1f MiB while waiting, peak VmRSS %.1f MiB (%d samples); died by %v %v after SIGTERM",
				tool, float64(now.hwmKiB)/1024, float64(peak.rssKiB)/1024, samples, d.signal(), took.Round(time.Millisecond))
			if peak.rssKiB >= limit {
				t.Errorf("daemon RSS peaked at %.1f MiB, want < %d MiB", float64(peak.rssKiB)/1024, limit>>10)
			}
		})
	}
}

// Item 4 (scenario 24): the host died — stdin and stdout both closed while
// a long tool runs (it ignores SIGTERM and holds three children). Nothing
// is written after that, so only watching the pipe can notice: the calls
// are cancelled, the daemon exits within grace + 1 s and nothing is left
// running.
func TestHostDiedStdinStdoutClosed(t *testing.T) {
	const grace = 500 * time.Millisecond
	d := scStartStdio(t, rfHold, []string{"hold"}, "--grace", grace.String())
	d.send(t, rfCall(`"long"`, "hold", `{"i":0}`))
	pgid := rfInt(t, d.dir, "hold.0")
	proctest.WaitUntil(t, harness.Deadline(t), "the call's group to be complete", func() (bool, string) {
		ps, err := proctest.InGroup(pgid)
		if err != nil {
			return false, err.Error()
		}
		n := len(proctest.Alive(ps))
		// leader, three sleeps and, unless the call was forked, its sentinel
		return n == 4 || n == 5, fmt.Sprintf("%d members", n)
	})
	d.stdin.Close()
	d.out.Close()
	closed := time.Now()
	took := d.exitWithin(t, closed, grace+time.Second, "stdin and stdout were closed")
	if !d.cmd.ProcessState.Exited() {
		t.Errorf("daemon ended with %v, want an exit", d.cmd.ProcessState)
	}
	d.noneLeft(t, closed.Add(grace+time.Second+rfScanSlack))
	t.Logf("%v %v after the host closed both pipes; nothing left", d.cmd.ProcessState, took.Round(time.Millisecond))
}

// Item 13: requests that arrive during the drain window are answered on
// stdio with a JSON-RPC error saying the server is shutting down (HTTP
// answers 503), while the call in flight still finishes and is answered.
func TestDrainAnswersNewRequestsStdio(t *testing.T) {
	body := `tool_gated() { rf_note gated.ready; rf_gate go; echo done; }`
	d := harness.Start(t, rfServer(body, []string{"gated"}, []string{"--drain", "60s", "--grace", "1s"}))
	d.Send(rfCall(`"g"`, "gated", `{}`))
	rfLine(t, d.Dir, "gated.ready")
	if err := d.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// A ping answered with a result was read before the daemon began to
	// stop; the first one it answers otherwise was read during the drain.
	recv := func(what string) harness.Response {
		t.Helper()
		select {
		case line, ok := <-d.Lines:
			if !ok {
				t.Fatalf("stdout closed waiting for %s; stderr:\n%s", what, d.Stderr)
			}
			d.Check(line)
			return harness.Parse(t, string(bytes.TrimSuffix(line, []byte("\n"))))
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer within 10 s to %s", what)
		}
		return harness.Response{}
	}
	var r harness.Response
	n := 0
	proctest.WaitUntil(t, harness.Deadline(t), "the daemon to begin to stop (a ping answered with an error)", func() (bool, string) {
		id := fmt.Sprintf(`"p%d"`, n)
		n++
		d.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if r = recv("a ping sent during the drain"); string(r.ID) != id {
			t.Fatalf("answer to %s has id %s", id, r.ID)
		}
		return r.Error != nil, fmt.Sprintf("%d pings answered with a result", n)
	})
	want := func(r harness.Response, id string) {
		t.Helper()
		if string(r.ID) != id || r.Error == nil || r.Error.Code != -32004 || !strings.Contains(r.Error.Message, "shutting down") {
			t.Fatalf("answer during the drain: %+v %s, want id %s with error -32004 saying the server is shutting down", r.Error, r.ID, id)
		}
	}
	want(r, string(r.ID))
	d.Send(rfCall(`"late"`, "gated", `{}`))
	want(recv("a tools/call sent during the drain"), `"late"`)
	rfTouch(t, d.Dir, "go")
	if r := recv("the call in flight"); string(r.ID) != `"g"` || r.Result == nil || r.Error != nil || !strings.Contains(r.Raw, `"done"`) {
		t.Fatalf("the call in flight was answered %s, want its result", r.Raw)
	}
	if rest := d.Drain(t); len(rest) != 0 {
		t.Fatalf("more lines after the drain: %q", rest)
	}
	d.WaitExit(t)
	if sig := d.Signalled(); sig != syscall.SIGTERM {
		t.Fatalf("daemon ended with %v, want death by SIGTERM", d.WaitErr)
	}
	d.WaitNoneAlive(t, harness.Deadline(t), "nothing of the call left running")
}
