package tests

// Issue 23, items 3 and 4: what a tool can make the daemon ask, and what
// it costs. A flood of ask records is refused before anything is started
// for them (no goroutine, nothing polling a FIFO nobody reads), and an
// mcp_ask_all unit counts its requests against the same bound: at most 16
// requests of one call wait for the client at once (README).

import (
	"encoding/json"
	"fmt"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// askRequests reads the daemon's lines until the response to id, and
// counts the requests it sent the client meanwhile.
func askRequests(t *testing.T, d *harness.Daemon, id string) (int, harness.Response) {
	t.Helper()
	n := 0
	for {
		line := d.Recv()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(line, &m)
		if m.Method != "" && m.ID != nil {
			n++
			continue
		}
		if string(m.ID) == id {
			return n, harness.Parse(t, string(line))
		}
	}
}

// 20,000 ask records naming one FIFO nobody reads: 16 become requests to
// the client (which never answers), the rest are refused at once. The
// tool's own mcp_ask after them is refused with the bound in its message.
// Then, with the call still running, the daemon's goroutines are counted.
func TestAskFloodIsRefusedBeforeAnythingStarts(t *testing.T) {
	d := harness.Start(t, rfServer(`
tool_flood() {
    mkfifo "$MCP_BASHD_EVENTS.0"
    local i rec=$'ask\tevents.0\tone\tping\t'
    for ((i = 0; i < 20000; i++)); do printf '%s\n' "$rec"; done >>"$MCP_BASHD_EVENTS"
    mcp_ask ping 2>"$RF_DIR/refused.Tmp"; mv "$RF_DIR/refused.Tmp" "$RF_DIR/refused"
    rf_gate release
}
`, []string{"flood"}, nil))
	pid := d.Cmd.Process.Pid
	before := vmRSSKiB(t, pid)
	d.Send(rfCall(`"f"`, "flood", `{}`))
	proctest.WaitUntil(t, harness.Deadline(t), "the tool's own mcp_ask to be refused", func() (bool, string) {
		_, err := os.Stat(filepath.Join(d.Dir, "refused"))
		return err == nil, ""
	})
	b, _ := os.ReadFile(filepath.Join(d.Dir, "refused"))
	if want := "mcp_ask: this call already has 16 questions waiting for the client\n"; string(b) != want {
		t.Errorf("the helper after the flood printed %q, want %q", b, want)
	}
	after := vmRSSKiB(t, pid)
	// What reached the client: the 16 the bound lets wait.
	asked := 0
	for done := false; !done; {
		select {
		case line := <-d.Lines:
			if strings.Contains(string(line), `"method":"ping"`) {
				asked++
			}
		case <-time.After(100 * time.Millisecond):
			done = asked >= 16
			if !time.Now().Before(harness.Deadline(t)) {
				done = true
			}
		}
	}
	total, byFunc := rlGoroutines(t, d)
	t.Logf("daemon VmRSS %d → %d KiB; %d goroutines of the daemon's code with the flood's call running; %d requests reached the client", before, after, total, asked)
	if asked != 16 {
		t.Errorf("%d ping requests reached the client, want 16", asked)
	}
	if total > 200 {
		t.Errorf("%d goroutines with the flood's call running (before the fix: one per refused record, ~20,000): %v", total, byFunc)
	}
}

// A unit of 3,000 keys is refused as a whole, at once, saying the bound;
// no request of it reaches the client.
func TestAskAllUnitIsBounded(t *testing.T) {
	var unit strings.Builder
	unit.WriteString("{")
	for i := 0; i < 3000; i++ {
		if i > 0 {
			unit.WriteString(",")
		}
		fmt.Fprintf(&unit, `"k%d":{"method":"ping"}`, i)
	}
	unit.WriteString("}")
	d := harness.Start(t, rfServer(`
tool_all() { mcp_ask_all "$(<"$RF_DIR/unit")" 2>&1; echo "status $?"; }
`, []string{"all"}, nil))
	if err := os.WriteFile(filepath.Join(d.Dir, "unit"), []byte(unit.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Send(rfCall(`"a"`, "all", `{}`))
	n, r := askRequests(t, d, `"a"`)
	if want := "mcp_ask_all: at most 16 requests can wait for the client at once, and this asks 3000\nstatus 1"; n != 0 || r.First() != want {
		t.Fatalf("%d requests reached the client; the tool printed %q, want 0 and %q", n, r.First(), want)
	}
}

// vmRSSKiB is pid's VmRSS.
func vmRSSKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kib int64
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			fmt.Sscan(v, &kib)
		}
	}
	return kib
}
