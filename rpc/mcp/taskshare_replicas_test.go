package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/streamhttp"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Two replicas in this process over one shared in-memory store (the
// cluster test in tests/ runs the real Redis and haproxy): a task made on
// A is read, answered and cancelled on B; its cancel hook runs on A. Run
// under -race it checks the record writes, the owner channel and the
// remote waits for data races.
func TestTaskSharedBetweenReplicas(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	must(t, os.WriteFile(script, []byte(`
tool_wait() { mcp_progress 1 2 "waiting"; while [ ! -e "$DIR/go" ]; do sleep 0.02; done; echo waited; }
tool_wait_cancel() { echo cancelled > "$DIR/hook.ran"; }
tool_ask() { local a; a=$(mcp_elicit "Sure?" '{"type":"object","properties":{"ok":{"type":"boolean"}}}') || return; echo "asked: $a"; }
`), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[
{"name":"wait","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"optional"}},
{"name":"ask","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"optional"}}]}`), 0o644))
	t.Setenv("TMPDIR", dir)
	t.Setenv("DIR", dir)
	bash, err := exec.LookPath("bash")
	must(t, err)
	sup, err := supervisor.New(supervisor.Config{Bash: bash, Script: script, Grace: time.Second, HookBudget: 2 * time.Second, Log: zaptest.NewLogger(t)})
	must(t, err)
	t.Cleanup(func() { sup.Close() })
	snap, err := sup.Load(context.Background())
	must(t, err)
	store := sharedMemory{state.NewMemory()}
	replica := func(id string) string {
		src := catalog.NewSource(catalog.Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json")})
		srv := mcp.New(mcp.Options{Catalog: src, Runner: sup, Snapshot: func() *supervisor.Snapshot { return snap },
			Store: store, ReplicaID: id, Log: zaptest.NewLogger(t).Named(id)})
		ts := httptest.NewServer(streamhttp.New(streamhttp.Options{Path: "/mcp", Loopback: true, ModernEnabled: srv.ModernEnabled,
			Stopping: srv.Stopping, Serve: srv.Serve, LegacyVersions: mcp.LegacyVersions()}))
		t.Cleanup(func() { ts.Close(); srv.Stop(0) })
		return ts.URL + "/mcp"
	}
	a, b := replica("A"), replica("B")

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	call := func(url, method, params string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+meta+params+`}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name, ok := strings.CutPrefix(params, `,"name":"`); ok {
			req.Header.Set("Mcp-Name", name[:strings.IndexByte(name, '"')])
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if i := strings.LastIndex(string(body), "data: "); i >= 0 {
			body = body[i+len("data: "):]
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			t.Fatalf("%s: not JSON: %s", method, body)
		}
		return m
	}
	result := func(m map[string]any) map[string]any { r, _ := m["result"].(map[string]any); return r }
	poll := func(what, url, id string, done func(map[string]any) bool) map[string]any {
		t.Helper()
		until := time.Now().Add(30 * time.Second)
		for {
			m := call(url, "tasks/get", `,"taskId":"`+id+`"`)
			if done(result(m)) {
				return result(m)
			}
			if time.Now().After(until) {
				t.Fatalf("%s: %v", what, m)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Read on B while it works on A, then cancelled from B.
	cr := result(call(a, "tools/call", `,"name":"wait","arguments":{}`))
	id, _ := cr["taskId"].(string)
	if id == "" {
		t.Fatalf("CreateTaskResult: %v", cr)
	}
	poll("B to read the progress", b, id, func(r map[string]any) bool { return r["statusMessage"] == "waiting" && r["status"] == "working" })
	if ack := call(b, "tasks/cancel", `,"taskId":"`+id+`"`); ack["error"] != nil || result(ack)["resultType"] != "complete" {
		t.Fatalf("cancel from B: %v", ack)
	}
	// The owner wrote the cancel before it answered B: at once on both.
	for _, url := range []string{a, b} {
		if r := result(call(url, "tasks/get", `,"taskId":"`+id+`"`)); r["status"] != "cancelled" {
			t.Fatalf("after the cancel from B: %v", r)
		}
	}
	for until := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := os.ReadFile(filepath.Join(dir, "hook.ran")); string(got) == "cancelled\n" {
			break
		}
		if time.Now().After(until) {
			t.Fatal("the cancel hook did not run on the owner")
		}
	}

	// Asks on A, answered from B.
	ak := result(call(a, "tools/call", `,"name":"ask","arguments":{}`))
	akID, _ := ak["taskId"].(string)
	ir := poll("B to see input_required", b, akID, func(r map[string]any) bool { return r["status"] == "input_required" })
	reqs, _ := ir["inputRequests"].(map[string]any)
	var key string
	for k := range reqs {
		key = k
	}
	if len(reqs) != 1 {
		t.Fatalf("inputRequests on B: %v", ir)
	}
	if up := call(b, "tasks/update", `,"taskId":"`+akID+`","inputResponses":{"`+key+`":{"action":"accept","content":{"ok":true}}}`); up["error"] != nil {
		t.Fatalf("update from B: %v", up)
	}
	fin := poll("the answered task to complete, read on B", b, akID, func(r map[string]any) bool { return r["status"] == "completed" })
	if b, _ := json.Marshal(fin); !strings.Contains(string(b), `asked: {\"action\":\"accept\",\"content\":{\"ok\":true}}`) {
		t.Errorf("completed on B: %s", b)
	}
	// An unknown id is unknown on both.
	if m := call(b, "tasks/get", `,"taskId":"nope"`); m["error"] == nil {
		t.Errorf("unknown task on B: %v", m)
	}
}
