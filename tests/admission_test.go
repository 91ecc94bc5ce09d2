package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// Admission: everything that runs bash or waits for a concurrency slot —
// plain calls, tasks, batch members — is admitted by one bound, so the
// busy answer ("Server busy … retry later") holds for all of them and no
// client can queue work, or answers, beyond it.

const admScript = `
# hold waits until the test ends (its cleanup writes the release file).
tool_hold() { while [ ! -e "$ADM_DIR/release" ]; do sleep 0.05; done; echo held; }
tool_quick() { echo quick; }
# big answers with 1 MiB of text.
tool_big() { head -c 1048576 /dev/zero | tr '\0' a; }
`

const admTools = `{"tools":[
 {"name":"hold","description":"waits for the test","inputSchema":{"type":"object"}},
 {"name":"quick","description":"answers at once","inputSchema":{"type":"object"}},
 {"name":"big","description":"1 MiB of text","inputSchema":{"type":"object"}}]}`

// admServer is the server, with flags; its tools find their directory as
// $ADM_DIR.
func admServer(flags ...string) harness.Options {
	return harness.Options{Files: map[string]string{"server.sh": admScript, "tools.json": admTools}, DirEnv: "ADM_DIR", Flags: flags}
}

// admRelease ends every hold when the test ends, before the daemon is
// stopped.
func admRelease(t *testing.T, dir string) {
	t.Cleanup(func() { os.WriteFile(filepath.Join(dir, "release"), nil, 0o644) })
}

// admResp is one JSON-RPC response as these tests read it.
type admResp struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r admResp) busy() bool {
	return r.Error != nil && strings.HasPrefix(r.Error.Message, "Server busy")
}

// admHTTP is one 2025-11-25 HTTP session.
type admHTTP struct {
	url, session string
}

// post sends one request and returns its response (an SSE stream's last
// event), or an error when no answer came before the deadline.
func (c *admHTTP) post(t *testing.T, client *http.Client, id int, method string, params any) (admResp, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := client.Do(req)
	if err != nil {
		return admResp{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return admResp{}, err
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		last := ""
		for _, l := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				last = d
			}
		}
		body = []byte(last)
	}
	var r admResp
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("not a JSON-RPC response (HTTP %d): %q", resp.StatusCode, body)
	}
	return r, nil
}

func (c *admHTTP) initialize(t *testing.T) {
	t.Helper()
	r, err := c.post(t, http.DefaultClient, 0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "adm", "version": "0"}})
	if err != nil || r.Error != nil || c.session == "" {
		t.Fatalf("initialize: %v %+v", err, r)
	}
}

// With --max-concurrency 1 (so at most 64 requests running or waiting),
// one client asks for 300 tasks of a tool that runs until the test ends,
// and another client makes a plain call: the tasks beyond the bound are
// refused with the busy error instead of each waiting for the slot, and
// the plain call is answered (a result or the busy error) instead of
// queueing behind them.
func TestTasksCountAgainstTheBusyBound(t *testing.T) {
	d := harness.StartHTTP(t, admServer("--max-concurrency", "1"))
	admRelease(t, d.Dir)
	stderr := d.Stderr
	a, b := &admHTTP{url: d.URL}, &admHTTP{url: d.URL}
	a.initialize(t)
	b.initialize(t)

	const tasks = 300
	created, busy := 0, 0
	for i := 1; i <= tasks; i++ {
		r, err := a.post(t, http.DefaultClient, i, "tools/call", map[string]any{"name": "hold", "arguments": map[string]any{}, "task": map[string]any{}})
		switch {
		case err != nil:
			t.Fatalf("task call %d: %v", i, err)
		case r.busy():
			busy++
		case r.Error == nil && strings.Contains(string(r.Result), `"taskId"`):
			created++
		default:
			t.Fatalf("task call %d answered %+v", i, r)
		}
	}
	t.Logf("%d tasks created, %d refused busy", created, busy)
	if busy == 0 || created+busy != tasks {
		t.Errorf("with --max-concurrency 1, %d of %d tasks were created and %d refused busy; want the tasks beyond the bound refused", created, tasks, busy)
	}
	// The plain call gets an answer well before the deadline; without
	// one, the client's own bound ends the wait.
	client := &http.Client{Timeout: time.Until(harness.Deadline(t))}
	r, err := b.post(t, client, 1, "tools/call", map[string]any{"name": "quick", "arguments": map[string]any{}})
	switch {
	case err != nil:
		t.Fatalf("the other client's plain call got no answer: %v\nstderr tail:\n%s", err, tail(stderr.String(), 2000))
	case r.busy():
	case r.Error == nil && strings.Contains(string(r.Result), `"text":"quick`):
	default:
		t.Errorf("the plain call answered %+v, want its result or the busy error", r)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// procStatusKiB reads a kB field (VmRSS, VmHWM) of /proc/PID/status.
func procStatusKiB(pid int, field string) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// A 2025-03-26 batch of 100 calls each answering 1 MiB, on a daemon with
// --max-concurrency 1 and a 2 MiB output cap: the answers the batch holds
// until its array is written count against the one slot, so the daemon's
// RSS (VmRSS sampled while the batch runs, and VmHWM after) stays under
// the output cap plus 50 MiB for the slot, instead of holding every
// member's megabyte (twice: the answers, then the array).
func TestBatchAnswersCountAgainstTheSlots(t *testing.T) {
	const outputCap = 2 << 20
	const slots = 1
	const limitKiB = (outputCap + slots*50<<20) >> 10
	s := harness.Start(t, admServer("--max-concurrency", strconv.Itoa(slots), "--output-cap", strconv.Itoa(outputCap)))
	admRelease(t, s.Dir)
	if r := s.RoundTrip(btInit("2025-03-26")); !strings.Contains(r, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize: %s", r)
	}
	pid := s.Cmd.Process.Pid
	var peak int64
	var mu sync.Mutex
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if kib, err := proctest.RSSKiB(pid); err == nil {
				mu.Lock()
				peak = max(peak, kib)
				mu.Unlock()
				if kib > 1<<20 { // past 1 GiB: stop it before it takes the host
					s.Cmd.Process.Kill()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	const members = 100
	parts := make([]string, members)
	for i := range parts {
		parts[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"big","arguments":{}}}`
	}
	s.Send("[" + strings.Join(parts, ",") + "]")
	var line []byte
	select {
	case l, ok := <-s.Lines:
		if !ok {
			t.Fatalf("the daemon closed stdout (peak VmRSS %d KiB); stderr:\n%s", peak, tail(s.Stderr.String(), 2000))
		}
		line = l
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("no answer to the batch before the deadline")
	}
	hwm, err := procStatusKiB(pid, "VmHWM")
	close(stop)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	var answers []admResp
	if err := json.Unmarshal(line, &answers); err != nil {
		t.Fatalf("the batch's answer is not an array: %.200s", line)
	}
	results, busy := 0, 0
	for _, a := range answers {
		switch {
		case a.busy():
			busy++
		case a.Error == nil && len(a.Result) > 1<<20:
			results++
		default:
			t.Errorf("a member answered %+v", a.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d answers: %d results, %d busy; peak VmRSS %.1f MiB, VmHWM %.1f MiB (bound %d MiB)",
		len(answers), results, busy, float64(peak)/1024, float64(hwm)/1024, limitKiB>>10)
	if len(answers) != members || results == 0 {
		t.Errorf("%d answers (%d results), want %d with at least one result", len(answers), results, members)
	}
	if peak >= limitKiB || hwm >= limitKiB {
		t.Errorf("daemon RSS peaked at %.1f MiB (VmHWM %.1f MiB), want < output cap + 50 MiB per slot = %d MiB",
			float64(peak)/1024, float64(hwm)/1024, limitKiB>>10)
	}
}
