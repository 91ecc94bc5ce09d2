package tests

// Issue 23, item 8: a 2025-11-25 client over HTTP that keeps no session
// (no Mcp-Session-Id on its requests) can reach the task it created: by
// its id, from any sessionless request — the id, 128 random bits, is the
// binding the spec asks for when there is no session — while tasks/list
// never shows it and a client with a session cannot reach it.

import (
	"strings"
	"testing"
)

func TestSessionlessTaskIsReachableByID(t *testing.T) {
	c, _ := tkConnectHTTP(t, "2025-11-25")
	c.session = "" // this client keeps no session
	g := c.call(t, "tools/call", "", map[string]any{"name": "greet", "arguments": map[string]any{"name": "S"}, "task": map[string]any{}})
	id, _ := dig(g.Result, "task", "taskId").(string)
	if id == "" {
		t.Fatalf("CreateTaskResult: %s", g.raw)
	}
	if res := c.call(t, "tasks/result", "", map[string]any{"taskId": id}); !strings.Contains(string(res.raw), `"text":"Hello, S!"`) {
		t.Fatalf("tasks/result without a session: %s", res.raw)
	}
	if r := c.call(t, "tasks/get", "", map[string]any{"taskId": id}); r.Result["status"] != "completed" {
		t.Fatalf("tasks/get without a session: %s", r.raw)
	}
	if l := c.call(t, "tasks/list", "", map[string]any{}); strings.Contains(string(l.raw), id) {
		t.Errorf("tasks/list without a session shows a sessionless task: %s", l.raw)
	}
	other := &tkHTTP{url: c.url, rev: c.rev}
	other.call(t, "initialize", "", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "other", "version": "0"}})
	if other.session == "" {
		t.Fatal("no session for the second client")
	}
	if r := other.call(t, "tasks/get", "", map[string]any{"taskId": id}); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("a client with a session reached a sessionless task: %s", r.raw)
	}
}
