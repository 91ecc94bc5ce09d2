package tests

// Issue 23, item 10: SIGTERM answers every accepted call exactly once.
// A call still running when the drain ends gets the JSON-RPC error
// "Server is shutting down" (-32004), a call that finishes within the
// drain gets its result, and the log names the calls shutdown ended at
// WARN. Before, over stdio the running call got no response at all, and
// over HTTP its client saw the stream end without one.

import (
	"encoding/json"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

const shutdownBody = `
tool_stuck() { rf_note stuck.started; sleep 1000; }
tool_late() { rf_note late.started; rf_gate late.go; echo finished; }
`

func TestShutdownAnswersEveryCall(t *testing.T) {
	d := harness.Start(t, rfServer(shutdownBody, []string{"stuck", "late"}, []string{"--drain", "3s"}))
	d.Send(rfCall(`"stuck"`, "stuck", `{}`))
	d.Send(rfCall(`"late"`, "late", `{}`))
	for _, f := range []string{"stuck.started", "late.started"} {
		proctest.WaitUntil(t, harness.Deadline(t), f, func() (bool, string) {
			_, err := os.Stat(filepath.Join(d.Dir, f))
			return err == nil, ""
		})
	}
	d.Cmd.Process.Signal(syscall.SIGTERM)
	// Within the drain, one call finishes.
	os.WriteFile(filepath.Join(d.Dir, "late.go"), nil, 0o644)
	answers := map[string][]string{}
	for _, line := range d.Drain(t) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &m)
		answers[string(m.ID)] = append(answers[string(m.ID)], string(line))
	}
	if got := answers[`"late"`]; len(got) != 1 || !strings.Contains(got[0], `"text":"finished"`) {
		t.Errorf("the call that finished within the drain: %q", got)
	}
	want := `{"jsonrpc":"2.0","id":"stuck","error":{"code":-32004,"message":"Server is shutting down"}}`
	if got := answers[`"stuck"`]; len(got) != 1 || got[0] != want {
		t.Errorf("the call shutdown ended: %q, want one %s", got, want)
	}
	b, _ := os.ReadFile(d.Log)
	log := string(b)
	if !strings.Contains(log, `"level":"warn"`) || !strings.Contains(log, "a request still running was ended") || !strings.Contains(log, `"call_id":"\"stuck\""`) {
		t.Errorf("no WARN naming the ended call:\n%s", log)
	}
}

func TestShutdownAnswersEveryCallOverHTTP(t *testing.T) {
	h := harness.StartHTTP(t, scServer(shutdownBody, []string{"stuck", "late"}, "--drain", "1s"))
	init := h.Post(t, &http.Client{}, "application/json, text/event-stream", harness.InitLine)
	init.Body.Close()
	session := init.Header.Get("Mcp-Session-Id")
	got := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(rfCall(`"stuck"`, "stuck", `{}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	proctest.WaitUntil(t, harness.Deadline(t), "the call to start", func() (bool, string) {
		_, err := os.Stat(filepath.Join(h.Dir, "stuck.started"))
		return err == nil, ""
	})
	h.Cmd.Process.Signal(syscall.SIGTERM)
	var body string
	select {
	case body = <-got:
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("no end of the POST")
	}
	if !strings.Contains(body, `{"jsonrpc":"2.0","id":"stuck","error":{"code":-32004,"message":"Server is shutting down"}}`) {
		t.Fatalf("the POST of the call shutdown ended: %q", body)
	}
}
