package tests

// Issue 26, tasks: three replicas sharing a real redis-server behind a
// real haproxy (round-robin, no affinity). A task lives on the replica
// that created it; every other replica answers tasks/get, tasks/result
// and tasks/list from its record in the store, and sends tasks/update and
// tasks/cancel to the owner. On main (no shared tasks) two requests in
// three reach a replica that answers "unknown task".

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// soScript's tools steer by files in $SO_DIR, one directory for every
// replica, so the test finds a tool's pids whichever replica runs it.
const soScript = `#!/usr/bin/env bash
so_wait() { while [ ! -e "$SO_DIR/$1" ]; do sleep 0.02; done; }
tool_greet() { printf 'Hello, %s!' "$(jq -r .name <<<"$1")"; }
tool_slow() {
	local label
	label=$(jq -r .label <<<"$1")
	mcp_progress 1 2 "step one of $label"
	sleep 600 & echo $! >"$SO_DIR/$label.child"
	echo $$ >"$SO_DIR/$label.pid"
	so_wait "$label.go"
	kill $! 2>/dev/null
	echo "done $label"
}
tool_slow_cancel() { echo cancelled >"$SO_DIR/hook.ran"; }
tool_confirm() {
	local answer
	answer=$(mcp_elicit "Delete it?" '{"type":"object","properties":{"confirm":{"type":"boolean"}}}') || return
	echo "answer: $answer"
}
`

const soTools = `{"tools":[
 {"name":"greet","description":"sync","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}},
 {"name":"slow","description":"a task","inputSchema":{"type":"object","properties":{"label":{"type":"string"}}},"x-mcp-bashd":{"task":"optional"}},
 {"name":"confirm","description":"asks","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"optional"}}]}`

// soCluster starts the three replicas; dir is the tools' shared $SO_DIR.
func soCluster(t *testing.T) (c *harness.Cluster, dir string) {
	dir = t.TempDir()
	c = harness.StartCluster(t, 3, harness.Options{Files: map[string]string{"server.sh": soScript, "tools.json": soTools},
		Env: []string{"SO_DIR=" + dir}, Mark: "scaleout-tasks", Log: true})
	return c, dir
}

// soOwner is the replica that created task id (its log says so).
func soOwner(t *testing.T, c *harness.Cluster, id string) int {
	t.Helper()
	owner := -1
	proctest.WaitUntil(t, harness.Deadline(t), "a replica to log the creation of task "+id, func() (bool, string) {
		for i, r := range c.Replicas {
			b, _ := os.ReadFile(r.Log)
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "task created") && strings.Contains(l, id) {
					owner = i
					return true, ""
				}
			}
		}
		return false, "no replica logged it"
	})
	return owner
}

// soVia is a 2026 client of replica i alone.
func soVia(c *harness.Cluster, i int) *tkHTTP {
	return &tkHTTP{url: c.Replicas[i].URL, rev: "2026-07-28"}
}

func soGet(t *testing.T, c tkClient, id string) tkResp {
	t.Helper()
	return c.call(t, "tasks/get", "", tkParams(true, "taskId", id))
}

// TestScaleOutTask2026: a task created through the balancer is read 20
// times through it while it works and while it waits for input, updated
// and cancelled through it, and its end is read from every replica.
func TestScaleOutTask2026(t *testing.T) {
	c, dir := soCluster(t)
	lb := &tkHTTP{url: c.URL, rev: "2026-07-28"}
	ta := mcpschema.TaskAugmented

	cr := lb.call(t, "tools/call", ta, tkParams(true, "name", "slow", "arguments", map[string]any{"label": "a"}))
	id, _ := cr.Result["taskId"].(string)
	if cr.Result["resultType"] != "task" || id == "" {
		t.Fatalf("CreateTaskResult: %s", cr.raw)
	}
	// The owner has the progress message at once, the others from the
	// record a moment later (progress writes are coalesced).
	for i := range c.Replicas {
		tkPoll(t, fmt.Sprintf("the task's progress on replica %d", i), func() tkResp { return soGet(t, soVia(c, i), id) },
			func(r tkResp) bool { return r.Result["statusMessage"] == "step one of a" })
	}
	for i := 0; i < 20; i++ {
		r := soGet(t, lb, id)
		if r.Err != nil || r.Result["status"] != "working" || r.Result["statusMessage"] != "step one of a" ||
			r.Result["taskId"] != id || r.Result["ttlMs"] == nil || r.Result["result"] != nil {
			t.Fatalf("tasks/get %d through the balancer: %s", i, r.raw)
		}
	}

	// A task that asks: input_required with its request on every replica,
	// answered by tasks/update through the balancer.
	ak := lb.call(t, "tools/call", ta, tkParams(true, "name", "confirm", "arguments", map[string]any{}))
	akID, _ := ak.Result["taskId"].(string)
	ir := tkPoll(t, "input_required through the balancer", func() tkResp { return soGet(t, lb, akID) },
		func(r tkResp) bool { return r.Result["status"] == "input_required" })
	reqs, _ := ir.Result["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("inputRequests: %s", ir.raw)
	}
	var key string
	for k, v := range reqs {
		key = k
		if dig(v, "method") != "elicitation/create" || dig(v, "params", "message") != "Delete it?" {
			t.Fatalf("input request %s: %v", k, v)
		}
	}
	for i := 0; i < 20; i++ {
		r := soGet(t, lb, akID)
		got, _ := r.Result["inputRequests"].(map[string]any)
		if r.Err != nil || r.Result["status"] != "input_required" || got[key] == nil {
			t.Fatalf("tasks/get %d of the asking task through the balancer: %s", i, r.raw)
		}
	}
	// An unknown key, sent to each replica in turn, answers nothing.
	for i := 0; i < 3; i++ {
		if up := lb.call(t, "tasks/update", "", tkParams(true, "taskId", akID, "inputResponses", map[string]any{"other": map[string]any{"action": "decline"}})); up.Err != nil || up.Result["resultType"] != "complete" {
			t.Fatalf("tasks/update with an unknown key: %s", up.raw)
		}
	}
	if r := soGet(t, lb, akID); r.Result["status"] != "input_required" {
		t.Fatalf("an unknown key answered the task: %s", r.raw)
	}
	up := lb.call(t, "tasks/update", "", tkParams(true, "taskId", akID, "inputResponses", map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}))
	if up.Err != nil || up.Result["resultType"] != "complete" || up.Result["status"] != nil {
		t.Fatalf("tasks/update ack: %s", up.raw)
	}
	want := `answer: {\"action\":\"accept\",\"content\":{\"confirm\":true}}`
	for i := range c.Replicas {
		fin := tkPoll(t, fmt.Sprintf("the answered task to complete, read from replica %d", i), func() tkResp { return soGet(t, soVia(c, i), akID) },
			func(r tkResp) bool { return r.Result["status"] != "input_required" && r.Result["status"] != "working" })
		if fin.Result["status"] != "completed" || !strings.Contains(string(fin.raw), want) {
			t.Fatalf("the completed task read from replica %d: %s", i, fin.raw)
		}
	}

	// Cancel through the balancer: an empty ack, the owner's process group
	// and the tool's child gone, the cancel hook run, cancelled everywhere.
	pid := atoi(t, tkWaitFile(t, filepath.Join(dir, "a.pid")))
	child := atoi(t, tkWaitFile(t, filepath.Join(dir, "a.child")))
	ack := lb.call(t, "tasks/cancel", "", tkParams(true, "taskId", id))
	if ack.Err != nil || ack.Result["resultType"] != "complete" || ack.Result["status"] != nil {
		t.Fatalf("cancel ack: %s", ack.raw)
	}
	tkGone(t, pid, child)
	if tkWaitFile(t, filepath.Join(dir, "hook.ran")) != "cancelled" {
		t.Error("cancel hook did not run")
	}
	for i := range c.Replicas {
		if r := soGet(t, soVia(c, i), id); r.Result["status"] != "cancelled" || r.Result["result"] != nil {
			t.Errorf("the cancelled task read from replica %d: %s", i, r.raw)
		}
	}
	for i := 0; i < 3; i++ {
		if again := lb.call(t, "tasks/cancel", "", tkParams(true, "taskId", id)); again.Err != nil || again.Result["resultType"] != "complete" {
			t.Errorf("cancel of an ended task through the balancer: %s", again.raw)
		}
	}
	if r := soGet(t, lb, "no-such-task"); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("unknown task through the balancer: %s", r.raw)
	}
}

// TestScaleOutTaskLegacySessionless: a 2025-11-25 client that keeps no
// session reaches its task from every replica by id: tasks/get and
// tasks/result (waiting on a replica that does not run it), tasks/cancel
// from another replica; tasks/list never shows it.
func TestScaleOutTaskLegacySessionless(t *testing.T) {
	c, dir := soCluster(t)
	via := func(i int) *tkHTTP { return &tkHTTP{url: c.Replicas[i].URL, rev: "2025-11-25"} }
	lb := &tkHTTP{url: c.URL, rev: "2025-11-25"}
	lb.call(t, "initialize", "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "so", "version": "0"}})
	lb.session = "" // this client keeps no session
	ta := mcpschema.TaskAugmented

	g := lb.call(t, "tools/call", ta, map[string]any{"name": "greet", "arguments": map[string]any{"name": "S"}, "task": map[string]any{}})
	gid, _ := dig(g.Result, "task", "taskId").(string)
	if gid == "" {
		t.Fatalf("CreateTaskResult: %s", g.raw)
	}
	for i := range c.Replicas {
		res := via(i).call(t, "tasks/result", "tasks/result", map[string]any{"taskId": gid})
		if !strings.Contains(string(res.raw), `"text":"Hello, S!"`) || dig(res.Result, "_meta", "io.modelcontextprotocol/related-task", "taskId") != gid {
			t.Errorf("tasks/result from replica %d: %s", i, res.raw)
		}
		if r := via(i).call(t, "tasks/get", "tasks/get", map[string]any{"taskId": gid}); r.Result["status"] != "completed" || r.Result["ttl"] == nil {
			t.Errorf("tasks/get from replica %d: %s", i, r.raw)
		}
		if l := via(i).call(t, "tasks/list", "tasks/list", map[string]any{}); l.Err != nil || strings.Contains(string(l.raw), gid) {
			t.Errorf("tasks/list without a session, replica %d: %s", i, l.raw)
		}
	}

	// tasks/result waits on every replica, the two that do not run the
	// task included, and each gets the result once the tool ends.
	s := lb.call(t, "tools/call", ta, map[string]any{"name": "slow", "arguments": map[string]any{"label": "w"}, "task": map[string]any{"ttl": 60000}})
	sid, _ := dig(s.Result, "task", "taskId").(string)
	tkWaitFile(t, filepath.Join(dir, "w.pid"))
	results := make([]tkResp, len(c.Replicas))
	var wg sync.WaitGroup
	for i := range c.Replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = via(i).call(t, "tasks/result", "tasks/result", map[string]any{"taskId": sid})
		}()
	}
	for i := range c.Replicas {
		if r := via(i).call(t, "tasks/get", "tasks/get", map[string]any{"taskId": sid}); r.Result["status"] != "working" {
			t.Errorf("the running task from replica %d: %s", i, r.raw)
		}
	}
	os.WriteFile(filepath.Join(dir, "w.go"), nil, 0o644)
	wg.Wait()
	for i, res := range results {
		if !strings.Contains(string(res.raw), `"text":"done w`) || dig(res.Result, "_meta", "io.modelcontextprotocol/related-task", "taskId") != sid {
			t.Errorf("tasks/result waited on replica %d: %s", i, res.raw)
		}
	}

	// Cancel from a replica that does not run it: the task's fields,
	// cancelled; then "has already ended" from every replica.
	k := lb.call(t, "tools/call", ta, map[string]any{"name": "slow", "arguments": map[string]any{"label": "k"}, "task": map[string]any{"ttl": 60000}})
	kid, _ := dig(k.Result, "task", "taskId").(string)
	pid := atoi(t, tkWaitFile(t, filepath.Join(dir, "k.pid")))
	child := atoi(t, tkWaitFile(t, filepath.Join(dir, "k.child")))
	other := (soOwner(t, c, kid) + 1) % len(c.Replicas)
	cr := via(other).call(t, "tasks/cancel", "tasks/cancel", map[string]any{"taskId": kid})
	if cr.Result["status"] != "cancelled" || cr.Result["taskId"] != kid || cr.Result["ttl"] != float64(60000) {
		t.Fatalf("tasks/cancel from replica %d (not the owner): %s", other, cr.raw)
	}
	tkGone(t, pid, child)
	for i := range c.Replicas {
		if r := via(i).call(t, "tasks/cancel", "", map[string]any{"taskId": kid}); r.Err == nil || r.Err.Code != -32602 || !strings.Contains(r.Err.Message, "has already ended") {
			t.Errorf("cancel of an ended task from replica %d: %s", i, r.raw)
		}
		if r := via(i).call(t, "tasks/result", "", map[string]any{"taskId": kid}); r.Err == nil || !strings.Contains(r.Err.Message, "was cancelled") {
			t.Errorf("tasks/result of the cancelled task from replica %d: %s", i, r.raw)
		}
	}
}

// TestScaleOutTaskOwnerKilled: the replica running a task dies (SIGKILL);
// within the presence TTL the task reads as failed, with the reason,
// through the balancer — not "unknown", not working forever.
func TestScaleOutTaskOwnerKilled(t *testing.T) {
	c, dir := soCluster(t)
	lb := &tkHTTP{url: c.URL, rev: "2026-07-28"}
	cr := lb.call(t, "tools/call", mcpschema.TaskAugmented, tkParams(true, "name", "slow", "arguments", map[string]any{"label": "x"}))
	id, _ := cr.Result["taskId"].(string)
	if id == "" {
		t.Fatalf("CreateTaskResult: %s", cr.raw)
	}
	tkWaitFile(t, filepath.Join(dir, "x.pid"))
	owner := soOwner(t, c, id)
	c.KillReplica(t, owner)
	// The bound is the presence key's: it runs out at most PresenceTTL
	// (15 s) after the kill, its last renewal having come before it.
	presence := fmt.Sprintf("mcp-bashd:presence:r%d", owner)
	if ttl := soStoreTTL(t, c, presence); ttl > 15 {
		t.Fatalf("the dead replica's presence key has %d s left, beyond the 15 s presence TTL", ttl)
	}
	// While it stands the task reads as running; once it is gone, the
	// next tasks/get through the balancer reads failed.
	proctest.WaitUntil(t, harness.Deadline(t), "the dead replica's presence key to run out", func() (bool, string) {
		r, ok := soTryGet(t, c.URL, id)
		if ok && r.Result["status"] != "working" && soStoreGet(t, c, presence) != "" {
			t.Fatalf("the task read %s while its owner's presence key stood", r.raw)
		}
		return soStoreGet(t, c, presence) == "", "key still there"
	})
	var last string
	proctest.WaitUntil(t, harness.Deadline(t), "a replica behind the balancer to answer tasks/get", func() (bool, string) {
		r, ok := soTryGet(t, c.URL, id)
		if !ok {
			return false, last // haproxy's 503 for the dead replica
		}
		last = string(r.raw)
		if r.Err != nil || r.Result["status"] != "failed" || r.Result["statusMessage"] != "the replica running this task stopped" ||
			dig(r.Result, "error", "message") != "the replica running this task stopped" {
			t.Fatalf("the orphaned task once its owner's presence ran out: %s", r.raw)
		}
		return true, ""
	})
	for i := range c.Replicas {
		if i == owner {
			continue
		}
		if r := soGet(t, soVia(c, i), id); r.Result["status"] != "failed" {
			t.Errorf("replica %d after the failure was written back: %s", i, r.raw)
		}
	}
	harness.KillMarked(c.Replicas[owner].Mark) // the dead replica's tool
}

// soTryGet is tasks/get through the balancer, false for an answer that
// is not JSON-RPC (haproxy's 503 when it picked the dead replica).
func soTryGet(t *testing.T, url, id string) (tkResp, bool) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": tkParams(true, "taskId", id)})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tasks/get")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return tkResp{}, false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") {
		return tkResp{}, false // a JSON-RPC error has a 4xx status, but a JSON body
	}
	if strings.HasPrefix(ct, "text/event-stream") {
		for _, l := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				body = []byte(d)
			}
		}
	}
	return tkParse(t, "2026-07-28", "", body), true
}

// TestScaleOutTaskStoreDown: with Redis gone, a replica that does not hold
// a task answers a clear error naming the store while the owner still
// answers it and everything else is served; once Redis is back (empty),
// the owner writes its tasks again and every replica reads them.
func TestScaleOutTaskStoreDown(t *testing.T) {
	c, dir := soCluster(t)
	lb := &tkHTTP{url: c.URL, rev: "2026-07-28"}
	cr := lb.call(t, "tools/call", mcpschema.TaskAugmented, tkParams(true, "name", "slow", "arguments", map[string]any{"label": "d"}))
	id, _ := cr.Result["taskId"].(string)
	if id == "" {
		t.Fatalf("CreateTaskResult: %s", cr.raw)
	}
	owner := soOwner(t, c, id)
	other := (owner + 1) % len(c.Replicas)
	tkPoll(t, "the task to work, read from another replica", func() tkResp { return soGet(t, soVia(c, other), id) },
		func(r tkResp) bool { return r.Result["status"] == "working" })

	c.StopRedis(t)
	r := soGet(t, soVia(c, other), id)
	if r.Err == nil || r.Err.Code != -32603 || !strings.Contains(r.Err.Message, "state store unavailable") || !strings.Contains(r.Err.Message, id) {
		t.Fatalf("tasks/get of another replica's task while the store is down: %s", r.raw)
	}
	if r := soGet(t, soVia(c, owner), id); r.Err != nil || r.Result["status"] != "working" {
		t.Errorf("the owner's tasks/get while the store is down: %s", r.raw)
	}
	if g := soVia(c, other).call(t, "tools/call", "tools/call", tkParams(true, "name", "greet", "arguments", map[string]any{"name": "R"})); !strings.Contains(string(g.raw), "Hello, R!") {
		t.Errorf("a tool call while the store is down: %s", g.raw)
	}
	// A task made while the store is down runs on its replica, and is
	// shared once the store is back.
	late := soVia(c, owner).call(t, "tools/call", mcpschema.TaskAugmented, tkParams(true, "name", "slow", "arguments", map[string]any{"label": "e"}))
	lateID, _ := late.Result["taskId"].(string)
	if lateID == "" || late.Result["status"] != "working" {
		t.Fatalf("a task created while the store is down: %s", late.raw)
	}

	// A restarted Redis is empty: the task reads as unknown elsewhere
	// until the owner's next presence renewal writes it again.
	c.StartRedis(t)
	tkPoll(t, "the task to be read from another replica after Redis came back", func() tkResp { return soGet(t, soVia(c, other), id) },
		func(r tkResp) bool {
			if r.Err != nil && r.Err.Code == -32602 || r.Err != nil && strings.Contains(r.Err.Message, "state store unavailable") {
				return false // not yet written again / not yet reconnected
			}
			if r.Err != nil || r.Result["status"] != "working" {
				t.Fatalf("the task after Redis came back: %s", r.raw)
			}
			return true
		})
	tkPoll(t, "the task made while the store was down, read from another replica", func() tkResp { return soGet(t, soVia(c, other), lateID) },
		func(r tkResp) bool { return r.Result["status"] == "working" })
	os.WriteFile(filepath.Join(dir, "d.go"), nil, 0o644)
	done := tkPoll(t, "the task to complete, read from another replica", func() tkResp { return soGet(t, soVia(c, other), id) },
		func(r tkResp) bool { return r.Result["status"] != "working" })
	if done.Result["status"] != "completed" || !strings.Contains(string(done.raw), `"text":"done d`) {
		t.Errorf("completed task after the store came back: %s", done.raw)
	}
	os.WriteFile(filepath.Join(dir, "e.go"), nil, 0o644)
	tkPoll(t, "the task made while the store was down to complete, read from another replica", func() tkResp { return soGet(t, soVia(c, other), lateID) },
		func(r tkResp) bool { return r.Result["status"] == "completed" })
}

// TestScaleOutTaskLegacySession: a 2025-11-25 task made in an
// Mcp-Session-Id session through the balancer belongs to that session on
// every replica: tasks/list and tasks/get of the session show it from
// each replica, another session sees neither, and tasks/cancel from a
// replica that does not run it stops its process group.
func TestScaleOutTaskLegacySession(t *testing.T) {
	c, dir := soCluster(t)
	initialize := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "so", "version": "0"}}
	lb := &tkHTTP{url: c.URL, rev: "2025-11-25"}
	lb.call(t, "initialize", "initialize", initialize)
	if lb.session == "" {
		t.Fatal("initialize through the balancer: no Mcp-Session-Id")
	}
	stranger := &tkHTTP{url: c.URL, rev: "2025-11-25"}
	stranger.call(t, "initialize", "initialize", initialize)
	in := func(i int, session string) *tkHTTP {
		return &tkHTTP{url: c.Replicas[i].URL, rev: "2025-11-25", session: session}
	}

	k := lb.call(t, "tools/call", mcpschema.TaskAugmented, map[string]any{"name": "slow", "arguments": map[string]any{"label": "s"}, "task": map[string]any{"ttl": 60000}})
	kid, _ := dig(k.Result, "task", "taskId").(string)
	if kid == "" {
		t.Fatalf("CreateTaskResult: %s", k.raw)
	}
	pid := atoi(t, tkWaitFile(t, filepath.Join(dir, "s.pid")))
	child := atoi(t, tkWaitFile(t, filepath.Join(dir, "s.child")))
	for i := range c.Replicas {
		if l := in(i, lb.session).call(t, "tasks/list", "tasks/list", map[string]any{}); l.Err != nil || !strings.Contains(string(l.raw), `"taskId":"`+kid+`"`) {
			t.Errorf("tasks/list of the session, replica %d: %s", i, l.raw)
		}
		if r := in(i, lb.session).call(t, "tasks/get", "tasks/get", map[string]any{"taskId": kid}); r.Result["status"] != "working" {
			t.Errorf("tasks/get of the session, replica %d: %s", i, r.raw)
		}
		if l := in(i, stranger.session).call(t, "tasks/list", "tasks/list", map[string]any{}); l.Err != nil || strings.Contains(string(l.raw), kid) {
			t.Errorf("tasks/list of another session, replica %d: %s", i, l.raw)
		}
		if r := in(i, stranger.session).call(t, "tasks/get", "", map[string]any{"taskId": kid}); r.Err == nil || r.Err.Code != -32602 {
			t.Errorf("tasks/get from another session, replica %d: %s", i, r.raw)
		}
	}
	other := (soOwner(t, c, kid) + 1) % len(c.Replicas)
	if cr := in(other, lb.session).call(t, "tasks/cancel", "tasks/cancel", map[string]any{"taskId": kid}); cr.Result["status"] != "cancelled" {
		t.Fatalf("tasks/cancel from replica %d (not the owner): %s", other, cr.raw)
	}
	tkGone(t, pid, child)
	for i := range c.Replicas {
		if r := in(i, lb.session).call(t, "tasks/get", "tasks/get", map[string]any{"taskId": kid}); r.Result["status"] != "cancelled" {
			t.Errorf("tasks/get after the cancel, replica %d: %s", i, r.raw)
		}
	}
}
