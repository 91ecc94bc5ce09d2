package tests

// Reliability scenarios 26 and 27 of RELIABILITY.md (issue 10, items 1, 11
// and 12), end to end: a tool hands the daemon paths that mean something
// else there, output made of bytes JSON escapes six times larger, and
// notifications of tens of MiB. The daemon never reads outside the call's
// own files, never blocks on them, and stays under the output cap + 50 MiB.
// Package-level names here start with rb (this file's prefix); the process
// and response helpers come from reliability_load_test.go (rl).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

const (
	rbCap      = 16 << 20               // the default --output-cap
	rbLimitKiB = (rbCap + 50<<20) >> 10 // the bound: cap + 50 MiB
	// Past 1 GiB the daemon is SIGKILLed, so a build that grows without
	// bound fails the test instead of taking the host down.
	rbCeilingKiB = 1 << 20
)

// rbGuard samples the daemon's VmRSS every 5 ms, keeps the peak, and kills
// the daemon if it passes rbCeilingKiB.
type rbGuard struct {
	pid    int
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	peak   int64
	killed int64 // VmRSS when killed; 0: not killed
}

func rbStartGuard(pid int) *rbGuard {
	g := &rbGuard{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if p, err := rlSample(pid); err == nil {
				g.mu.Lock()
				g.peak = max(g.peak, p.rssKiB)
				if p.rssKiB > rbCeilingKiB && g.killed == 0 {
					g.killed = p.rssKiB
					syscall.Kill(pid, syscall.SIGKILL)
				}
				g.mu.Unlock()
			}
			select {
			case <-g.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return g
}

// check stops sampling and fails the test when the daemon was killed or
// its peak (sampled VmRSS, and the kernel's VmHWM) reached cap + 50 MiB.
func (g *rbGuard) check(t *testing.T, what string) {
	t.Helper()
	close(g.stop)
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killed != 0 {
		t.Fatalf("%s: the daemon grew past %d MiB (VmRSS %.1f MiB) and was killed", what, rbCeilingKiB>>10, float64(g.killed)/1024)
	}
	after := rlMustSample(t, g.pid)
	t.Logf("%s: peak VmRSS %.1f MiB, VmHWM %.1f MiB (bound: cap + 50 MiB = %d MiB)",
		what, float64(g.peak)/1024, float64(after.hwmKiB)/1024, rbLimitKiB>>10)
	if g.peak >= rbLimitKiB || after.hwmKiB >= rbLimitKiB {
		t.Errorf("%s: daemon RSS peaked at %.1f MiB (VmHWM %.1f MiB), want < %d MiB",
			what, float64(g.peak)/1024, float64(after.hwmKiB)/1024, rbLimitKiB>>10)
	}
}

// rbLine is the next line from the daemon, or a failure that says why
// there is none (the guard killed it, or the deadline passed).
func rbLine(t *testing.T, s *harness.Daemon, g *rbGuard) []byte {
	t.Helper()
	select {
	case line, ok := <-s.Lines:
		if !ok {
			if g != nil {
				g.mu.Lock()
				killed := g.killed
				g.mu.Unlock()
				if killed != 0 {
					t.Fatalf("the daemon grew past %d MiB (VmRSS %.1f MiB) and was killed", rbCeilingKiB>>10, float64(killed)/1024)
				}
			}
			t.Fatalf("the daemon closed stdout; stderr:\n%.2000s", s.Stderr.String())
		}
		s.Check(line)
		return bytes.TrimSuffix(line, []byte("\n"))
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("no line before the deadline; stderr:\n%.2000s", s.Stderr.String())
	}
	return nil
}

// rbMsg is one line as these tests read it: a response or a notification.
type rbMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Level   string          `json:"level"`
		Data    json.RawMessage `json:"data"`
		Message string          `json:"message"`
	} `json:"params"`
	Result *struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	size int // bytes on the wire, newline excluded
}

func rbDecode(t *testing.T, line []byte) rbMsg {
	t.Helper()
	var m rbMsg
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("line is not JSON: %v: %.300q", err, line)
	}
	m.size = len(line)
	return m
}

// rbAwait reads lines until the response with id; it returns the response
// and the notifications before it.
func rbAwait(t *testing.T, s *harness.Daemon, g *rbGuard, id string) (rbMsg, []rbMsg) {
	t.Helper()
	var notes []rbMsg
	for {
		m := rbDecode(t, rbLine(t, s, g))
		switch {
		case m.Method != "":
			notes = append(notes, m)
		case string(m.ID) == id:
			return m, notes
		default:
			t.Fatalf("unexpected line while waiting for %s: id %s", id, m.ID)
		}
	}
}

// rbPingAfter sends a ping after the call just sent; both must be
// answered, in either order. A daemon that reads its own stdin for the
// call swallows the ping and answers nothing before EOF.
func rbPingAfter(t *testing.T, s *harness.Daemon, callID string) rbMsg {
	t.Helper()
	s.Send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	var call *rbMsg
	pinged := false
	for call == nil || !pinged {
		m := rbDecode(t, rbLine(t, s, nil))
		switch string(m.ID) {
		case `"ping"`:
			pinged = true
		case callID:
			call = &m
		default:
			t.Fatalf("unexpected line: id %s method %q", m.ID, m.Method)
		}
	}
	return *call
}

func rbServer(t *testing.T, name, script string, tools []string, env ...string) (*harness.Daemon, string, rlMark) {
	t.Helper()
	m := rlNewMark(t, name)
	s := harness.Start(t, rlServe(m, script, tools, nil, env...))
	tmp := s.Tmp
	return s, tmp, m
}

// ---------------------------------------------------------------------------
// 26. The content helpers (mcp_image, mcp_audio) take the file's bytes in the
// tool's own process: /dev/stdin is the tool's stdin, a relative path is
// the tool's, a FIFO nobody writes blocks the tool (its cancel applies),
// and /dev/zero is cut at the output cap. The daemon reads only regular
// files of the call's root, without following links, without blocking.

func TestContentHelperReadsInTheTool(t *testing.T) {
	t.Run("stdin and relative paths are the tool's", func(t *testing.T) {
		script := `tool_pipe() { printf 'from\0the tool' | mcp_image /dev/stdin image/x-test; }
tool_rel() { cd "$MCP_CALL_TMPDIR" && printf 'a\0b' >rel.bin && mcp_audio rel.bin audio/x-test; }`
		s, tmp, m := rbServer(t, "rb26a", script, []string{"pipe", "rel"})
		for _, c := range []struct{ tool, kind, mime, data string }{
			{"pipe", "image", "image/x-test", "from\x00the tool"},
			{"rel", "audio", "audio/x-test", "a\x00b"},
		} {
			id := `"` + c.tool + `"`
			s.Send(rlCall(id, c.tool, `{}`))
			r := rbPingAfter(t, s, id)
			if r.Result == nil || r.Result.IsError || len(r.Result.Content) != 1 {
				t.Fatalf("%s: want one %s item: %+v", c.tool, c.kind, r.Result)
			}
			it := r.Result.Content[0]
			got, _ := base64.StdEncoding.DecodeString(it.Data)
			if it.Type != c.kind || it.MimeType != c.mime || string(got) != c.data {
				t.Errorf("%s: got %s %s %q, want %s %s %q", c.tool, it.Type, it.MimeType, got, c.kind, c.mime, c.data)
			}
		}
		rbFinish(t, s, tmp, m)
	})

	t.Run("hostile records and swapped root files", func(t *testing.T) {
		// Records and root files a tool can forge by hand: each names
		// something the daemon must not read (its own stdin, a FIFO, a
		// device, a directory, a file outside the root).
		script := `tool_records() {
    local r=${MCP_BASHD_CONTENT%/*}
    mkfifo "$MCP_CALL_TMPDIR/fifo" "$r/content.1"
    ln -s /dev/stdin "$r/content.0"
    mkdir "$r/content.2"
    ln -s /dev/zero "$r/content.3"
    printf 'image\timage/png\t%s\n' /dev/stdin "$MCP_CALL_TMPDIR/fifo" /dev/zero \
        content.0 content.1 content.2 content.3 ../out >>"$MCP_BASHD_CONTENT"
    echo done
}
tool_swap_content() { rm -f "$MCP_BASHD_CONTENT"; ln -s /dev/stdin "$MCP_BASHD_CONTENT"; echo done; }
tool_swap_out() { local r=${MCP_BASHD_CONTENT%/*}; rm -f "$r/out"; mkfifo "$r/out"; }`
		s, tmp, m := rbServer(t, "rb26b", script, []string{"records", "swap_content", "swap_out"})
		for _, c := range []struct{ tool, text string }{{"records", "done"}, {"swap_content", "done"}, {"swap_out", ""}} {
			id := `"` + c.tool + `"`
			s.Send(rlCall(id, c.tool, `{}`))
			r := rbPingAfter(t, s, id)
			if r.Result == nil || len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" || r.Result.Content[0].Text != c.text {
				t.Errorf("%s: want only the text %q: %+v", c.tool, c.text, r.Result)
			}
		}
		rbFinish(t, s, tmp, m)
	})

	t.Run("a FIFO nobody writes blocks the tool, not the daemon", func(t *testing.T) {
		ctl := t.TempDir()
		fifo := filepath.Join(ctl, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		// A daemon stuck in open(2) on it is released at the end, so a
		// failing run does not hang the cleanup.
		t.Cleanup(func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		})
		script := `tool_fifo() { : >"$RB_CTL/ready"; mcp_image "$RB_CTL/fifo"; }`
		s, tmp, m := rbServer(t, "rb26c", script, []string{"fifo"}, "RB_CTL="+ctl)
		pid := s.Cmd.Process.Pid
		s.Send(rlCall(`"f"`, "fifo", `{}`))
		proctest.WaitUntil(t, harness.Deadline(t), "the tool started", func() (bool, string) {
			_, err := os.Stat(filepath.Join(ctl, "ready"))
			return err == nil, fmt.Sprint(err)
		})
		if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Fatalf("ping while the tool waits on the FIFO: %s", got)
		}
		// The cancel reaches whoever waits on the FIFO: the tool.
		s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"f"}}`)
		rlWaitNoneLeft(t, harness.Deadline(t), m, pid)
		proctest.WaitUntil(t, harness.Deadline(t), "the call's root removed", func() (bool, string) {
			d := rlCallDirs(tmp)
			return len(d) == 0, fmt.Sprint(d)
		})
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit after EOF: %v", ee)
		}
		for line := range s.Lines {
			t.Errorf("line after the cancel: %.300s", line)
		}
	})

	t.Run("/dev/zero is cut at the output cap", func(t *testing.T) {
		script := `tool_zero() { mcp_image /dev/zero; echo after; }`
		s, tmp, m := rbServer(t, "rb26d", script, []string{"zero"})
		g := rbStartGuard(s.Cmd.Process.Pid)
		s.Send(rlCall(`"z"`, "zero", `{}`))
		r, _ := rbAwait(t, s, g, `"z"`)
		g.check(t, "mcp_image /dev/zero")
		if r.Result == nil || r.Result.IsError || len(r.Result.Content) != 1 || r.Result.Content[0].Text != "after" {
			t.Errorf("want only the text \"after\" (the image refused as larger than the cap): %+v", r.Result)
		}
		rbFinish(t, s, tmp, m)
	})
}

// rbFinish ends a daemon at EOF and checks nothing of its calls is left.
func rbFinish(t *testing.T, s *harness.Daemon, tmp string, m rlMark) {
	t.Helper()
	rlWaitNoneLeft(t, harness.Deadline(t), m, s.Cmd.Process.Pid)
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v", ee)
	}
	if d := rlCallDirs(tmp); len(d) != 0 {
		t.Errorf("call roots left: %v", d)
	}
}

// ---------------------------------------------------------------------------
// 27. Output made only of NUL or control bytes: JSON escapes each as six
// bytes (\u0000). The escaped text is cut at the output cap, with the
// usual marker counting the bytes not shown, and the daemon stays under
// the cap + 50 MiB.

func TestControlBytesOutputIsBounded(t *testing.T) {
	const total = 64 << 20
	script := fmt.Sprintf(`tool_nul() { head -c %d /dev/zero; }
tool_ctl() { head -c %d /dev/zero | tr '\0' '\1'; }`, total, total)
	s, tmp, m := rbServer(t, "rb27a", script, []string{"nul", "ctl"})
	for _, c := range []struct {
		tool string
		ch   string
	}{{"nul", "\x00"}, {"ctl", "\x01"}} {
		g := rbStartGuard(s.Cmd.Process.Pid)
		id := `"` + c.tool + `"`
		s.Send(rlCall(id, c.tool, `{}`))
		r, _ := rbAwait(t, s, g, id)
		g.check(t, c.tool)
		kept := rbCap / 6 // each byte is six once escaped
		want := strings.Repeat(c.ch, kept) + fmt.Sprintf("\n[mcp-bashd: output truncated; %d more bytes not shown]", total-kept)
		t.Logf("%s: %d bytes on the wire for %d bytes of output", c.tool, r.size, total)
		if r.Result == nil || len(r.Result.Content) != 1 || r.Result.Content[0].Text != want {
			var got string
			if r.Result != nil && len(r.Result.Content) == 1 {
				got = r.Result.Content[0].Text
			}
			t.Errorf("%s: want %d bytes of %q and the marker %q; got %d bytes ending %q",
				c.tool, kept, c.ch, want[kept:], len(got), got[max(0, len(got)-80):])
		}
		if r.size > rbCap+4096 {
			t.Errorf("%s: response line of %d bytes, want at most the cap (%d) + 4 KiB", c.tool, r.size, rbCap)
		}
	}
	rbFinish(t, s, tmp, m)
}

// ---------------------------------------------------------------------------
// 27. A 32 MiB mcp_log or progress message, and an events line that never
// ends: the message is cut at 64 KiB with a marker, the daemon stays under
// the cap + 50 MiB, and records after the long line still arrive.

func TestNotificationsAreCapped(t *testing.T) {
	const (
		msgCap = 64 << 10
		big    = 32 << 20
	)
	script := fmt.Sprintf(`tool_log() { mcp_log info "$(head -c %d /dev/zero | tr '\0' x)"; echo logged; }
tool_progress() { mcp_progress 1 2 "$(head -c %d /dev/zero | tr '\0' y)"; echo progressed; }
tool_endless() { head -c %d /dev/zero >>"$MCP_BASHD_EVENTS"; printf '\n' >>"$MCP_BASHD_EVENTS"; mcp_log info after; echo ended; }`, big, big, 2*big)
	s, tmp, m := rbServer(t, "rb27b", script, []string{"log", "progress", "endless"})
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"debug"}}`); got != `{"jsonrpc":"2.0","id":"lv","result":{}}` {
		t.Fatalf("logging/setLevel: %s", got)
	}
	cut := func(ch string) string {
		return strings.Repeat(ch, msgCap) + fmt.Sprintf("\n[mcp-bashd: message truncated; %d more bytes not shown]", big-msgCap)
	}
	for _, c := range []struct {
		tool, text string
		note       func(rbMsg) (string, string) // method, text
		want       string
	}{
		{"log", "logged", func(n rbMsg) (string, string) {
			var d string
			json.Unmarshal(n.Params.Data, &d)
			return n.Method, d
		}, cut("x")},
		{"progress", "progressed", func(n rbMsg) (string, string) { return n.Method, n.Params.Message }, cut("y")},
		{"endless", "ended", func(n rbMsg) (string, string) {
			var d string
			json.Unmarshal(n.Params.Data, &d)
			return n.Method, d
		}, "after"},
	} {
		g := rbStartGuard(s.Cmd.Process.Pid)
		id := `"` + c.tool + `"`
		s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"progressToken":"pt"}}}`, id, c.tool))
		r, notes := rbAwait(t, s, g, id)
		g.check(t, c.tool)
		if r.Result == nil || len(r.Result.Content) != 1 || r.Result.Content[0].Text != c.text {
			t.Errorf("%s: result %+v, want the text %q", c.tool, r.Result, c.text)
		}
		if len(notes) != 1 {
			t.Errorf("%s: %d notifications, want 1", c.tool, len(notes))
			continue
		}
		method, text := c.note(notes[0])
		t.Logf("%s: %s of %d bytes on the wire", c.tool, method, notes[0].size)
		if text != c.want {
			t.Errorf("%s: %s text of %d bytes ending %q, want %d bytes ending %q",
				c.tool, method, len(text), text[max(0, len(text)-80):], len(c.want), c.want[max(0, len(c.want)-80):])
		}
	}
	rbFinish(t, s, tmp, m)
}
