package tests

// Reliability scenarios 15–19 (bad input) of RELIABILITY.md, end to end
// through the binary. Package-level names here start with ri (this file's
// prefix); the process and response helpers come from
// reliability_load_test.go (rl).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// riPingAfter sends a ping right after whatever was just sent and checks
// the lines that come back: first want (unless it is empty: the line was
// dropped), then the ping's answer. Ordering is the assertion — requests
// that run no tool are answered in arrival order — not a timer; the time
// until the ping's answer is returned for the log.
func riPingAfter(t *testing.T, s *harness.Daemon, n int, sent time.Time, want string) time.Duration {
	t.Helper()
	id := fmt.Sprintf(`"after-%d"`, n)
	s.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	if want != "" {
		if got := string(s.Recv()); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	pong := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
	if got := string(s.Recv()); got != pong {
		t.Fatalf("the ping after it: got %s\nwant %s", got, pong)
	}
	return time.Since(sent)
}

// riRaw writes bytes to the daemon's stdin as they are (send adds a
// newline and is for text lines).
func riRaw(t *testing.T, s *harness.Daemon, b []byte) {
	t.Helper()
	if _, err := s.Stdin.Write(b); err != nil {
		t.Fatalf("write to the daemon: %v", err)
	}
}

// ---------------------------------------------------------------------------
// 15. Malformed JSON, wrong jsonrpc, odd id types, batches, client-sent
// responses, duplicate in-flight ids: the documented error or drop; a
// following ping answered.
//
// The expected bytes are the ones rpc/gates_test.go pins for Parse (the
// bash SDK's own answers, and the documented deliberate differences), here
// checked through the binary.
func TestBadRequestsThenPing(t *testing.T) {
	const (
		invalidJSON = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}`
		notOneDoc   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Expected exactly one JSON document per line"}}`
		notObject   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}}`
		badIDType   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or an integer"}}`
		badVersion  = `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be 2.0"}}`
	)
	cases := []struct{ name, line, want string }{
		// Malformed JSON.
		{"not json", `hello`, invalidJSON},
		{"truncated object", `{"jsonrpc":"2.0","id":1`, invalidJSON},
		{"single quotes", `{'a':1}`, invalidJSON},
		{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"ping",}`, invalidJSON},
		{"valid then garbage", `{"a":1} garbage`, invalidJSON},
		{"unterminated string", `"abc`, invalidJSON},
		{"raw tab in a string", "{\"a\":\"tab\there\"}", invalidJSON},
		{"lone high surrogate", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, invalidJSON},
		{"two documents", `{"jsonrpc":"2.0","id":1601,"method":"ping"}{"jsonrpc":"2.0","id":1602,"method":"ping"}`, notOneDoc},
		{"whitespace only", "   ", notOneDoc},
		// Not an object.
		{"false", `false`, notObject},
		{"null", `null`, notObject},
		{"number", `5`, notObject},
		{"string", `"x"`, notObject},
		// Batches are not supported: the SDK's answer for any array.
		{"batch of two pings", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, notObject},
		{"empty batch", `[]`, notObject},
		{"array of numbers", `[1,2]`, notObject},
		// Wrong jsonrpc: the id is echoed only when it is a string or an integer.
		{"version 1.0 integer id", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, fmt.Sprintf(badVersion, `5`)},
		{"no version string id", `{"id":"7","method":"ping"}`, fmt.Sprintf(badVersion, `"7"`)},
		{"version 1.0 fractional id", `{"jsonrpc":"1.0","id":1.5,"method":"ping"}`, fmt.Sprintf(badVersion, `null`)},
		{"version 1.0 boolean id", `{"jsonrpc":"1.0","id":false,"method":"ping"}`, fmt.Sprintf(badVersion, `null`)},
		{"version 1.0 object id", `{"jsonrpc":"1.0","id":{"a":1},"method":"ping"}`, fmt.Sprintf(badVersion, `null`)},
		{"version 1.0 exponent id", `{"jsonrpc":"1.0","id":1e2,"method":"ping"}`, fmt.Sprintf(badVersion, `1E+2`)},
		{"version number 2", `{"jsonrpc":2,"id":1,"method":"ping"}`, fmt.Sprintf(badVersion, `1`)},
		{"version array", `{"jsonrpc":["2.0"],"id":1,"method":"ping"}`, fmt.Sprintf(badVersion, `1`)},
		{"empty object", `{}`, fmt.Sprintf(badVersion, `null`)},
		{"version missing on a notification", `{"method":"notifications/cancelled","params":{"requestId":473}}`, fmt.Sprintf(badVersion, `null`)},
		// Odd id types.
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, badIDType},
		{"true id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, badIDType},
		{"false id", `{"jsonrpc":"2.0","id":false,"method":"ping"}`, badIDType},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, badIDType},
		{"array id", `{"jsonrpc":"2.0","id":[],"method":"ping"}`, badIDType},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, badIDType},
		{"tiny fraction id", `{"jsonrpc":"2.0","id":1e-7,"method":"ping"}`, badIDType},
		{"exponent integer id", `{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, `{"jsonrpc":"2.0","id":1E+2,"result":{}}`},
		{"1.0 id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.0,"result":{}}`},
		{"-0 id", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, `{"jsonrpc":"2.0","id":-0,"result":{}}`},
		{"2^53+1 id", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`},
		{"huge id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}`},
		{"numeric string id", `{"jsonrpc":"2.0","id":"7","method":"ping"}`, `{"jsonrpc":"2.0","id":"7","result":{}}`},
		{"empty string id", `{"jsonrpc":"2.0","id":"","method":"ping"}`, `{"jsonrpc":"2.0","id":"","result":{}}`},
		{"escaped string id", `{"jsonrpc":"2.0","id":"\ud83d\ude00\u0041","method":"ping"}`, `{"jsonrpc":"2.0","id":"😀A","result":{}}`},
		// Client-sent responses are dropped, never answered.
		{"response with result", `{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
		{"response with error", `{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}`, ""},
		{"response with error and null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}`, ""},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, ""},
		// Notifications are never answered, even unknown ones.
		{"ping as a notification", `{"jsonrpc":"2.0","method":"ping"}`, ""},
		{"cancel for an unknown id", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":101}}`, ""},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/whatever"}`, ""},
		// Unknown methods.
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"foo"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: foo"}}`},
		{"missing method", `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: "}}`},
	}

	m := rlNewMark(t, "ri15")
	ctl := t.TempDir()
	script := `tool_hold() { while [ ! -e "$RI_CTL/gate" ]; do sleep 0.01; done; printf 'held %s' "$1"; }`
	s := harness.Start(t, rlServe(m, script, []string{"hold"}, nil, "RI_CTL="+ctl))
	pid := s.Cmd.Process.Pid

	var worst time.Duration
	n := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n++
			start := time.Now()
			s.Send(c.line)
			worst = max(worst, riPingAfter(t, s, n, start, c.want))
		})
	}

	t.Run("duplicate in-flight ids", func(t *testing.T) {
		// running waits until n held calls run (each is a group leader).
		running := func(n int) {
			t.Helper()
			proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("%d held calls running", n), func() (bool, string) {
				left, err := rlLeft(m, pid)
				if err != nil {
					return false, err.Error()
				}
				leaders := 0
				for _, p := range left {
					if p.PID == p.PGID {
						leaders++
					}
				}
				return leaders == n, rlDescribe(left)
			})
		}
		s.Send(rlCall(`42`, "hold", `{"n":1}`))
		s.Send(rlCall(`"h"`, "hold", `{"n":2}`))
		running(2)
		// The same ids again while the first calls run: refused with an
		// error carrying the id as written.
		dups := []struct{ line, want string }{
			{rlCall(`42`, "hold", `{"n":3}`), `{"jsonrpc":"2.0","id":42,"error":{"code":-32600,"message":"Invalid Request: id 42 is already in flight"}}`},
			// 42.0 is the same integer id.
			{rlCall(`42.0`, "hold", `{"n":4}`), `{"jsonrpc":"2.0","id":42.0,"error":{"code":-32600,"message":"Invalid Request: id 42.0 is already in flight"}}`},
			{rlCall(`"h"`, "hold", `{"n":5}`), `{"jsonrpc":"2.0","id":"h","error":{"code":-32600,"message":"Invalid Request: id \"h\" is already in flight"}}`},
		}
		for _, d := range dups {
			n++
			start := time.Now()
			s.Send(d.line)
			worst = max(worst, riPingAfter(t, s, n, start, d.want))
		}
		// "42" is a string, a different id from 42: it runs.
		s.Send(rlCall(`"42"`, "hold", `{"n":6}`))
		n++
		worst = max(worst, riPingAfter(t, s, n, time.Now(), ""))
		running(3)
		if err := os.WriteFile(filepath.Join(ctl, "gate"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{`42`: `held {"n":1}`, `"h"`: `held {"n":2}`, `"42"`: `held {"n":6}`}
		for range 3 {
			resp := harness.Parse(t, string(s.Recv()))
			text, ok := resp.TextItem()
			w, known := want[string(resp.ID)]
			if !known || !ok || resp.Result.IsError || text != w {
				t.Fatalf("unexpected answer %+v (text %q); still waiting for %v", resp, text, want)
			}
			delete(want, string(resp.ID))
		}
		// Each first call was answered once: the next line is this ping's.
		n++
		worst = max(worst, riPingAfter(t, s, n, time.Now(), ""))
	})
	t.Logf("%d bad or odd lines, each followed by a ping; slowest ping answer %v", n, worst.Round(time.Microsecond))
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v\n%s", ee, s.Stderr)
	}
}

// ---------------------------------------------------------------------------
// 16. A 64 MiB line and an endless line: rejected past a limit, parsing
// resumes at the next newline, memory bounded (< 100 MiB).
//
// The ping after the newline is written in the same write as the newline,
// so the reader must pick up a request that shares a chunk with the end
// of the line it discarded.
func TestOverlongLines(t *testing.T) {
	const rssBound = 100 << 10 // KiB
	tooLong := func(limit int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: line longer than the %d-byte limit"}}`, limit)
	}
	// pingLine is a ping of exactly n bytes, padded inside params.
	pingLine := func(id string, n int) string {
		head := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"pad":"`
		tail := `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	const (
		ping64  = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`
		pingEnd = `{"jsonrpc":"2.0","id":1,"method":"ping","params":"`
	)
	for _, c := range []struct {
		name  string
		limit int
		flags []string
		body  func(t *testing.T, s *harness.Daemon, limit int)
		// rejected are the lengths of the refused lines, as logged: the
		// proof that each was consumed whole, up to its own newline.
		rejected []int64
	}{
		{"64 MiB line at the default 16 MiB limit", 16 << 20, nil, func(t *testing.T, s *harness.Daemon, limit int) {
			line := make([]byte, 0, 64<<20+200)
			line = append(line, ping64...)
			line = append(line, bytes.Repeat([]byte("y"), 64<<20)...)
			line = append(line, "\"}}\n"...)
			line = append(line, `{"jsonrpc":"2.0","id":"next","method":"ping"}`+"\n"...)
			s.Methods.Store(`"next"`, "ping")
			riRaw(t, s, line)
			if got := string(s.Recv()); got != tooLong(limit) {
				t.Fatalf("64 MiB line: %s", got)
			}
			if got := string(s.Recv()); got != `{"jsonrpc":"2.0","id":"next","result":{}}` {
				t.Fatalf("the ping after it: %s", got)
			}
		}, []int64{int64(len(ping64)) + 64<<20 + 3}},
		{"endless line of 200 MiB at a 1 MiB limit", 1 << 20, []string{"--max-line", "1048576"}, func(t *testing.T, s *harness.Daemon, limit int) {
			chunk := bytes.Repeat([]byte("z"), 1<<20)
			riRaw(t, s, []byte(pingEnd))
			for i := 0; i < 200; i++ {
				riRaw(t, s, chunk)
			}
			s.Methods.Store(`"next"`, "ping")
			riRaw(t, s, []byte("\"}\n"+`{"jsonrpc":"2.0","id":"next","method":"ping"}`+"\n"))
			if got := string(s.Recv()); got != tooLong(limit) {
				t.Fatalf("endless line: %s", got)
			}
			if got := string(s.Recv()); got != `{"jsonrpc":"2.0","id":"next","result":{}}` {
				t.Fatalf("the ping after it: %s", got)
			}
			// The limit itself: exactly limit bytes pass, one more does not.
			if got := s.RoundTrip(pingLine(`"at"`, limit)); got != `{"jsonrpc":"2.0","id":"at","result":{}}` {
				t.Fatalf("a line of exactly the limit: %.200s", got)
			}
			if got := s.RoundTrip(pingLine(`"over"`, limit+1)); got != tooLong(limit) {
				t.Fatalf("a line one byte over the limit: %.200s", got)
			}
		}, []int64{int64(len(pingEnd)) + 200<<20 + 2, 1<<20 + 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := rlNewMark(t, "ri16")
			logFile := filepath.Join(t.TempDir(), "daemon.log")
			s := harness.Start(t, rlServe(m, `tool_x() { :; }`, []string{"x"}, c.flags, "MCP_LOG_FILE="+logFile))
			pid := s.Cmd.Process.Pid
			before := rlMustSample(t, pid)
			sampler := rlStartSampler(pid)
			start := time.Now()
			c.body(t, s, c.limit)
			took := time.Since(start)
			peak, samples := sampler.finish()
			after := rlMustSample(t, pid)
			t.Logf("before %v; peak VmRSS %.1f MiB over %d samples; after %v; took %v",
				before, float64(peak.rssKiB)/1024, samples, after, took.Round(time.Millisecond))
			if after.hwmKiB >= rssBound || peak.rssKiB >= rssBound {
				t.Errorf("daemon RSS peaked at %.1f MiB (VmHWM %.1f MiB), want < 100 MiB",
					float64(peak.rssKiB)/1024, float64(after.hwmKiB)/1024)
			}
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"last","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"last","result":{}}` {
				t.Fatalf("ping at the end: %s", got)
			}
			if ee := s.CloseAndWait(); ee != nil {
				t.Fatalf("exit after EOF: %v", ee)
			}
			log, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			var lens []int64
			for _, l := range strings.Split(string(log), "\n") {
				var e struct {
					Msg, Reason string
					Bytes       int64
				}
				if json.Unmarshal([]byte(l), &e) == nil && e.Msg == "request line rejected" && e.Reason == "too_long" {
					lens = append(lens, e.Bytes)
				}
			}
			if fmt.Sprint(lens) != fmt.Sprint(c.rejected) {
				t.Errorf("logged lengths of the refused lines: %v, want %v", lens, c.rejected)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 17. Invalid UTF-8 in requests and in tool output: never silently
// mangled; every line written is valid UTF-8 JSON.
//
// A request line with invalid UTF-8 is refused whole (encoding/json would
// have turned the bad bytes into U+FFFD and run the call with changed
// arguments); tool output with invalid UTF-8 is repaired because a JSON
// string cannot carry it, and the repair is logged.
func TestInvalidUTF8(t *testing.T) {
	const notUTF8 = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON (the line is not valid UTF-8)"}}`
	m := rlNewMark(t, "ri17")
	ctl := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	script := `tool_echo() { : >"$RI_CTL/echo-ran"; printf '%s' "$1"; }
tool_bad() { printf '\xff\xfe ok'; }
tool_badfail() { printf 'x\xc3\x28y' >&2; return 3; }
tool_mixed() { printf 'caf\xc3\xa9 \xe2\x82 \xed\xa0\x80 \xf0\x9f\x98\x80'; }`
	s := harness.Start(t, rlServe(m, script, []string{"echo", "bad", "badfail", "mixed"}, nil, "RI_CTL="+ctl, "MCP_LOG_FILE="+logFile))

	var lines [][]byte
	recv := func() []byte {
		t.Helper()
		l := s.Recv()
		lines = append(lines, l)
		return l
	}
	n := 0
	t.Run("requests", func(t *testing.T) {
		for _, c := range []struct{ name, line string }{
			{"lone 0xff in params", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}"},
			{"bad byte in a tool's arguments", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"s\":\"a\xc3\x28b\"}}}"},
			{"overlong slash", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"s\":\"\xc0\xaf\"}}}"},
			{"UTF-16 surrogate as UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"s\":\"\xed\xa0\x80\"}}"},
			{"sequence cut short at the end of a string", "{\"jsonrpc\":\"2.0\",\"id\":\"\xe2\x82\",\"method\":\"ping\"}"},
			{"Latin-1 text", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{\"s\":\"caf\xe9\"}}"},
		} {
			t.Run(c.name, func(t *testing.T) {
				n++
				start := time.Now()
				riRaw(t, s, []byte(c.line+"\n"))
				id := fmt.Sprintf(`"after-%d"`, n)
				s.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
				if got := string(recv()); got != notUTF8 {
					t.Errorf("got  %s\nwant %s", got, notUTF8)
				}
				if got := string(recv()); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
					t.Fatalf("the ping after it: %s", got)
				}
				t.Logf("ping answered %v after the bad line", time.Since(start).Round(time.Microsecond))
			})
		}
		if _, err := os.Stat(filepath.Join(ctl, "echo-ran")); err == nil {
			t.Errorf("a tool ran with arguments that were not valid UTF-8")
		}
		// Valid multi-byte text is untouched (the escape is decoded, as
		// the SDK's jq decoded it).
		args := `{"s":"café ✓ 😀 \u00e9"}`
		resp := harness.Parse(t, s.RoundTrip(rlCall("7", "echo", args)))
		if text, ok := resp.TextItem(); !ok || resp.Result.IsError || text != `{"s":"café ✓ 😀 é"}` {
			t.Errorf("valid UTF-8 arguments: %+v", resp)
		}
	})
	t.Run("tool output", func(t *testing.T) {
		for _, c := range []struct {
			tool    string
			isError bool
			// sdk is the text the bash SDK answered (jq: one U+FFFD per
			// invalid byte or cut-short sequence).
			sdk string
		}{
			{"bad", false, "\ufffd\ufffd ok"},
			{"badfail", true, "Error executing badfail: x\ufffd(y"},
			{"mixed", false, "café \ufffd \ufffd 😀"},
		} {
			t.Run(c.tool, func(t *testing.T) {
				s.Send(rlCall(`"`+c.tool+`"`, c.tool, `{}`))
				line := recv()
				resp := harness.Parse(t, string(line))
				text, ok := resp.TextItem()
				if !ok || resp.Result.IsError != c.isError {
					t.Fatalf("%s: %s", c.tool, line)
				}
				if !strings.Contains(text, "\ufffd") {
					t.Errorf("%s: invalid bytes neither refused nor marked: %q", c.tool, text)
				}
				if text != c.sdk {
					t.Errorf("%s: text %q, want %q: as the bash SDK (jq) repaired it, one U+FFFD per invalid byte", c.tool, text, c.sdk)
				}
			})
		}
	})
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"last","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"last","result":{}}` {
		t.Fatalf("ping at the end: %s", got)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v", ee)
	}
	for _, l := range lines {
		if !utf8.Valid(l) || !json.Valid(l) {
			t.Errorf("the daemon wrote a line that is not valid UTF-8 JSON: %q", l)
		}
	}
	// Not silent: the log says what was refused and what was repaired.
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var rejected int
	repaired := map[string]bool{}
	for _, l := range strings.Split(string(log), "\n") {
		var e struct {
			Msg, Reason, Tool string
		}
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		if e.Msg == "request line rejected" && e.Reason == "invalid_utf8" {
			rejected++
		}
		if strings.Contains(e.Msg, "not valid UTF-8") && strings.Contains(e.Msg, "replaced") {
			repaired[e.Tool] = true
		}
	}
	if rejected != 6 {
		t.Errorf("the log records %d request lines refused as invalid UTF-8, want 6", rejected)
	}
	for _, tool := range []string{"bad", "badfail", "mixed"} {
		if !repaired[tool] {
			t.Errorf("the log does not say that the output of %s was repaired:\n%s", tool, log)
		}
	}
}

// ---------------------------------------------------------------------------
// 18. 100,000 levels of nesting: an error, no crash.
func TestDeepNesting(t *testing.T) {
	const depth = 100_000
	m := rlNewMark(t, "ri18")
	s := harness.Start(t, rlServe(m, `tool_echo() { printf '%s' "$1"; }`, []string{"echo"}, nil))
	pid := s.Cmd.Process.Pid
	const invalidJSON = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}`
	nest := func(open, closer string, n int, inner string) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(closer, n)
	}
	n := 0
	for _, c := range []struct{ name, line, want string }{
		{"arrays in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + nest("[", "]", depth, "") + `}`, invalidJSON},
		{"objects in params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":` + nest(`{"a":`, "}", depth, "1") + `}`, invalidJSON},
		{"objects in a tool's arguments", rlCall("3", "echo", nest(`{"a":`, "}", depth, "1")), invalidJSON},
		{"arrays in a tool's arguments", rlCall("4", "echo", `{"a":`+nest("[", "]", depth, "")+`}`), invalidJSON},
		{"arrays as the id", `{"jsonrpc":"2.0","id":` + nest("[", "]", depth, "") + `,"method":"ping"}`, invalidJSON},
		{"unclosed arrays", strings.Repeat("[", depth), invalidJSON},
		{"unclosed objects", strings.Repeat(`{"a":`, depth), invalidJSON},
	} {
		t.Run(c.name, func(t *testing.T) {
			n++
			start := time.Now()
			s.Send(c.line)
			d := riPingAfter(t, s, n, start, c.want)
			t.Logf("%d KiB line; ping answered %v after it", len(c.line)>>10, d.Round(time.Microsecond))
		})
	}
	// Deep, but within the documented limit (10,000 levels): the call runs
	// and its arguments come back unchanged.
	t.Run("9,000 levels within the limit", func(t *testing.T) {
		args := `{"a":` + nest("[", "]", 9000, "1") + `}`
		line := s.RoundTrip(rlCall("5", "echo", args))
		resp := harness.Parse(t, line)
		if text, ok := resp.TextItem(); !ok || resp.Result.IsError || text != args {
			t.Fatalf("9,000 levels: %.300s", line)
		}
	})
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"last","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"last","result":{}}` {
		t.Fatalf("ping at the end: %s", got)
	}
	if s.Cmd.Process.Pid != pid {
		t.Fatal("the daemon changed")
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v\n%s", ee, s.Stderr)
	}
}

// ---------------------------------------------------------------------------
// 19. Arguments with $(…), backticks, quotes, newlines, 10 MiB strings:
// round-trip byte for byte through an echo tool; nothing is ever evaluated
// by the daemon's own bash code.
//
// Every command substitution in the payload would create a file in a
// canary directory; so would the same text in the request id, in the
// server's directory name and in the server script's own arguments. The
// payload also goes through mcp_before_tool_call and, on a cancelled call,
// through the tool's cancel hook, which must receive it unchanged.
func TestArgumentsRoundTrip(t *testing.T) {
	canary := t.TempDir()
	ctl := t.TempDir()
	evil := func(tag string) string {
		return fmt.Sprintf("$(touch %[1]s/%[2]s-subst) `touch %[1]s/%[2]s-tick` $(<%[1]s/none) ${IFS} $((6*7)) ';touch %[1]s/%[2]s-semi;' \" \\ \\\" %%s%%n !! * ? ~ $HOME $0 $1 <(touch %[1]s/%[2]s-proc) | & ; \x01 \t\r\n end", canary, tag)
	}
	// jsonString encodes s with only the escapes JSON requires (no HTML
	// escaping), so the client's compact text is what the tool must get.
	jsonString := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}

	m := rlNewMark(t, "ri19")
	weird := filepath.Join(t.TempDir(), "srv "+evil("dir"))
	weird = strings.NewReplacer("\n", "_", "\r", "_", "\x01", "_").Replace(weird)
	weird = weird[:min(len(weird), 250)]
	if err := os.MkdirAll(weird, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `mcp_before_tool_call() { :; }
tool_echo() { printf '%s' "$1"; }
tool_hold() { : >"$RI_CTL/started"; while :; do sleep 0.01; done; }
tool_hold_cancel() { printf '%s' "$1" >"$RI_CTL/cancel-args"; }`
	for name, body := range map[string]string{"server.sh": script, "tools.json": harness.ToolsJSON("echo", "hold")} {
		if err := os.WriteFile(filepath.Join(weird, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := harness.Start(t, harness.Options{
		Args: []string{filepath.Join(weird, "server.sh"), evil("argv1"), "`touch " + canary + "/argv2`"},
		Env:  []string{"TMPDIR=" + t.TempDir(), m.env(), "RI_CTL=" + ctl},
	})
	s.RoundTrip(harness.InitLine)

	// noCanary fails if any command substitution in a payload ran.
	noCanary := func(t *testing.T) {
		t.Helper()
		ents, err := os.ReadDir(canary)
		if err != nil || len(ents) != 0 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("something was evaluated: the canary directory holds %v (%v)", names, err)
		}
	}
	// roundTrip sends args and wants them back as the tool got them: the
	// client's compact text, but for numbers jq spells otherwise (want,
	// when not "").
	roundTrip := func(t *testing.T, id, args, want string) {
		t.Helper()
		defer noCanary(t)
		start := time.Now()
		line := s.RoundTrip(rlCall(id, "echo", args))
		resp := harness.Parse(t, line)
		text, ok := resp.TextItem()
		if !ok || resp.Result.IsError {
			t.Fatalf("echo: %.500s", line)
		}
		if want != "" {
			args = want
		}
		if text != args {
			i := 0
			for i < len(text) && i < len(args) && text[i] == args[i] {
				i++
			}
			t.Fatalf("arguments changed in transit (%d bytes sent, %d back); first difference at byte %d: sent %.40q, got %.40q",
				len(args), len(text), i, args[i:], text[min(i, len(text)):])
		}
		t.Logf("%d bytes of arguments round-tripped in %v", len(args), time.Since(start).Round(time.Millisecond))
	}
	t.Run("shell syntax", func(t *testing.T) {
		sent := `{"s":` + jsonString(evil("args")) + `,` + jsonString(evil("key")) + `:[1,2.50,1e2,-0,null,true,"$(touch ` + canary + `/nested)"]}`
		roundTrip(t, jsonString(evil("id")), sent, strings.Replace(sent, ",1e2,", ",1E+2,", 1))
	})
	t.Run("newlines only", func(t *testing.T) {
		roundTrip(t, "2", `{"s":"\n\n\n","t":"a\nb\n"}`, "")
	})
	t.Run("10 MiB", func(t *testing.T) {
		unit := evil("big")
		big := strings.Repeat(unit, (10<<20)/len(unit)+1)
		roundTrip(t, "3", `{"s":`+jsonString(big)+`}`, "")
	})
	t.Run("cancel hook gets the arguments", func(t *testing.T) {
		args := `{"s":` + jsonString(evil("cancel")) + `}`
		s.Send(rlCall(`"hold"`, "hold", args))
		proctest.WaitUntil(t, harness.Deadline(t), "the held call has started", func() (bool, string) {
			_, err := os.Stat(filepath.Join(ctl, "started"))
			return err == nil, fmt.Sprint(err)
		})
		s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"hold"}}`)
		var got []byte
		proctest.WaitUntil(t, harness.Deadline(t), "the cancel hook has written its arguments", func() (bool, string) {
			b, err := os.ReadFile(filepath.Join(ctl, "cancel-args"))
			got = b
			return err == nil && len(b) == len(args), fmt.Sprintf("%d bytes %v", len(b), err)
		})
		noCanary(t)
		if string(got) != args {
			t.Fatalf("the cancel hook got %q\nwant %q", got, args)
		}
		// The cancelled call is not answered: the next line is the ping's.
		riPingAfter(t, s, 1, time.Now(), "")
	})
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v\n%s", ee, s.Stderr)
	}
	noCanary(t)
}
