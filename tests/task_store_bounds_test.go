package tests

// Issue 23, item 5: the task store is bounded by count and bytes, whatever
// clients ask for as TTLs. 40 finished 3 MiB tasks held the daemon at
// 134 MiB for their TTL; now the finished tasks past --task-store-bytes
// (64 MiB by default) are dropped oldest first, and with --task-store-max
// tasks running a new one is refused saying so.

import (
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tsScript = `tool_big() { head -c 3145728 /dev/zero | tr '\0' a; }
tool_wait() { while [ ! -e "$TK_DIR/go" ]; do sleep 0.01; done; echo waited; }
`

const tsTools = `{"tools":[{"name":"big","description":"3 MiB","inputSchema":{"type":"object"}},{"name":"wait","description":"waits","inputSchema":{"type":"object"}}]}`

func tsStart(t *testing.T, flags ...string) (*tkStdio, string) {
	t.Helper()
	dir := harness.WriteFiles(t, map[string]string{"server.sh": tsScript, "tools.json": tsTools})
	s := harness.Start(t, harness.Options{Dir: dir, Flags: flags, Env: []string{"TK_DIR=" + dir}})
	c := &tkStdio{s: s, rev: "2025-11-25"}
	c.call(t, "initialize", "", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "ts", "version": "0"}})
	return c, dir
}

func tsTask(t *testing.T, c *tkStdio, tool string) (string, tkResp) {
	t.Helper()
	r := c.call(t, "tools/call", "", map[string]any{"name": tool, "arguments": map[string]any{}, "task": map[string]any{"ttl": 86400000}})
	id, _ := dig(r.Result, "task", "taskId").(string)
	return id, r
}

func TestTaskStoreBoundedByBytes(t *testing.T) {
	c, _ := tsStart(t)
	pid := c.s.Cmd.Process.Pid
	var ids []string
	for i := 0; i < 40; i++ {
		id, r := tsTask(t, c, "big")
		if id == "" {
			t.Fatalf("task %d: %s", i, r.raw)
		}
		if res := c.call(t, "tasks/result", "", map[string]any{"taskId": id}); !strings.Contains(string(res.raw), strings.Repeat("a", 1000)) {
			t.Fatalf("task %d's result: %.200s", i, res.raw)
		}
		ids = append(ids, id)
	}
	rss := vmRSSKiB(t, pid)
	lst := c.call(t, "tasks/list", "", map[string]any{})
	tasks, _ := lst.Result["tasks"].([]any)
	held := len(tasks)
	t.Logf("after 40 finished 3 MiB tasks: %d held, daemon VmRSS %.1f MiB", held, float64(rss)/1024)
	// 64 MiB holds 21 results of 3 MiB (and their JSON).
	if held < 1 || held > 21 {
		t.Errorf("%d tasks held, want at most 21 (64 MiB of 3 MiB results)", held)
	}
	if r := c.call(t, "tasks/get", "", map[string]any{"taskId": ids[0]}); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("the oldest finished task is still held: %.200s", r.raw)
	}
	if r := c.call(t, "tasks/get", "", map[string]any{"taskId": ids[39]}); r.Result["status"] != "completed" {
		t.Errorf("the newest task: %.200s", r.raw)
	}
}

func TestTaskStoreBoundedByCount(t *testing.T) {
	c, dir := tsStart(t, "--task-store-max", "3")
	defer os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	for i := 0; i < 3; i++ {
		if id, r := tsTask(t, c, "wait"); id == "" {
			t.Fatalf("task %d: %s", i, r.raw)
		}
	}
	id, r := tsTask(t, c, "wait")
	if id != "" || r.Err == nil || !strings.Contains(r.Err.Message, "Task store full: 3 tasks are running") {
		t.Fatalf("a 4th task with 3 running: %s", r.raw)
	}
}
