package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// Tasks end to end, over stdio and HTTP, in both shapes: the 2026-07-28
// tasks extension (server-directed, flat CreateTaskResult, tasks/get
// inlines the result) and 2025-11-25's experimental tasks (the client
// asks with params.task; tasks/get, tasks/result, tasks/list,
// tasks/cancel). The tools are real bash; the test steers them with files
// (a tool waits for a "go" file), never with sleeps.

const tkScript = `
tk_wait() { while [ ! -e "$TK_DIR/$1" ]; do sleep 0.02; done; }
tool_greet() { printf 'Hello, %s!' "$(jq -r .name <<<"$1")"; }
# slow: reports progress, records its pid and a child's, then waits for
# the test's go file (named by its label) and answers.
tool_slow() {
	local label
	label=$(jq -r .label <<<"$1")
	mcp_progress 1 2 "step one of $label"
	sleep 600 & echo $! >"$TK_DIR/$label.child"
	echo $$ >"$TK_DIR/$label.pid"
	tk_wait "$label.go"
	kill $! 2>/dev/null
	echo "done $label"
}
tool_slow_cancel() { echo cancelled >"$TK_DIR/hook.ran"; }
tool_quick() { echo "quick $(jq -r .n <<<"$1")"; }
tool_broken() { echo "it broke" >&2; return 2; }
tool_crash() { kill -KILL $$; }
# confirm: asks the user from inside the task, then answers with the reply.
tool_confirm() {
	local answer
	answer=$(mcp_elicit "Delete it?" '{"type":"object","properties":{"confirm":{"type":"boolean"}}}') || return
	echo "answer: $answer"
}
# after: asks first (input_required rounds), becomes a task on the retry.
tool_after() {
	local answer
	answer=$(mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string"}}}') || return
	echo "after: $answer"
}
`

const tkTools = `{"tools":[
 {"name":"greet","description":"sync","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}},
 {"name":"slow","description":"a task","inputSchema":{"type":"object","properties":{"label":{"type":"string"}}},"x-mcp-bashd":{"task":"optional"}},
 {"name":"quick","description":"short-lived task","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"optional","taskTtl":0.2}},
 {"name":"broken","description":"tool error","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"required"}},
 {"name":"crash","description":"dies by a signal","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"optional"}},
 {"name":"confirm","description":"asks","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"optional"}},
 {"name":"after","description":"asks, then a task","inputSchema":{"type":"object"},"x-mcp-bashd":{"task":"required","taskAfterInput":true}}]}`

// tkClient sends one request and returns the response's result or error,
// after checking the whole response against the revision's schema.
type tkClient interface {
	call(t *testing.T, method, schemaMethod string, params map[string]any) tkResp
}

type tkResp struct {
	Result map[string]any
	Err    *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	raw []byte
}

func tkParse(t *testing.T, rev, schemaMethod string, line []byte) tkResp {
	t.Helper()
	if err := mcpschema.Check(rev, schemaMethod, line); err != nil {
		t.Errorf("response not valid for %s (%q): %v\n%s", rev, schemaMethod, err, line)
	}
	var m struct {
		Result map[string]any `json:"result"`
		Error  json.RawMessage
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not JSON: %s", line)
	}
	r := tkResp{Result: m.Result, raw: line}
	if m.Error != nil {
		json.Unmarshal(m.Error, &r.Err)
	}
	return r
}

// ---- stdio ----

type tkStdio struct {
	s   *harness.Daemon
	rev string
	id  atomic.Int64
}

func (c *tkStdio) call(t *testing.T, method, schemaMethod string, params map[string]any) tkResp {
	t.Helper()
	id := c.id.Add(1)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.s.Send(string(b))
	for {
		select {
		case line, ok := <-c.s.Lines:
			if !ok {
				t.Fatalf("server closed stdout; stderr:\n%s", c.s.Stderr.String())
			}
			if !strings.Contains(string(line), `"id":`+strconv.FormatInt(id, 10)+`,`) {
				continue // a notification
			}
			return tkParse(t, c.rev, schemaMethod, line)
		case <-time.After(time.Until(harness.Deadline(t))):
			t.Fatalf("no answer to %s; stderr:\n%s", method, c.s.Stderr.String())
		}
	}
}

// ---- HTTP ----

type tkHTTP struct {
	url, session, rev string
	id                atomic.Int64
	hdr               map[string]string // extra headers for the next call
}

func (c *tkHTTP) call(t *testing.T, method, schemaMethod string, params map[string]any) tkResp {
	t.Helper()
	id := c.id.Add(1)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.rev == "2026-07-28" {
		req.Header.Set("MCP-Protocol-Version", c.rev)
		req.Header.Set("Mcp-Method", method)
		if n, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", n)
		}
	} else if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", c.rev)
	}
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	c.hdr = nil
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last string
		for _, l := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				last = d
			}
		}
		body = []byte(last)
	}
	return tkParse(t, c.rev, schemaMethod, body)
}

// ---- the servers ----

// tkServer is the tasks server; its tools find their directory as $TK_DIR.
var tkServer = harness.Options{Files: map[string]string{"server.sh": tkScript, "tools.json": tkTools}, DirEnv: "TK_DIR"}

func tkConnectStdio(t *testing.T, rev string) (*tkStdio, string) {
	s := harness.Start(t, tkServer)
	c := &tkStdio{s: s, rev: rev}
	if rev != "2026-07-28" {
		r := c.call(t, "initialize", "initialize", map[string]any{"protocolVersion": rev, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tk", "version": "0"}})
		tkCheckLegacyCaps(t, r)
	}
	return c, s.Dir
}

func tkConnectHTTP(t *testing.T, rev string) (*tkHTTP, string) {
	d := harness.StartHTTP(t, tkServer)
	c := &tkHTTP{url: d.URL, rev: rev}
	if rev != "2026-07-28" {
		r := c.call(t, "initialize", "initialize", map[string]any{"protocolVersion": rev, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tk", "version": "0"}})
		tkCheckLegacyCaps(t, r)
	}
	return c, d.Dir
}

func tkCheckLegacyCaps(t *testing.T, r tkResp) {
	t.Helper()
	caps, _ := r.Result["capabilities"].(map[string]any)
	tasks, _ := caps["tasks"].(map[string]any)
	if tasks == nil || dig(tasks, "requests", "tools", "call") == nil || tasks["list"] == nil || tasks["cancel"] == nil {
		t.Errorf("2025-11-25 initialize does not advertise tasks (list, cancel, requests.tools.call): %s", r.raw)
	}
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// tkWaitFile waits for a file the tool writes and returns its content.
func tkWaitFile(t *testing.T, path string) string {
	t.Helper()
	var got string
	proctest.WaitUntil(t, harness.Deadline(t), path+" to appear", func() (bool, string) {
		b, err := os.ReadFile(path)
		got = strings.TrimSpace(string(b))
		return err == nil && strings.HasSuffix(string(b), "\n"), fmt.Sprintf("%q %v", b, err)
	})
	return got
}

// tkPoll calls get until done says the answer is the one awaited.
func tkPoll(t *testing.T, what string, get func() tkResp, done func(tkResp) bool) tkResp {
	t.Helper()
	var r tkResp
	proctest.WaitUntil(t, harness.Deadline(t), what, func() (bool, string) {
		r = get()
		return done(r), string(r.raw)
	})
	return r
}

// tkGone waits until the process group pgid and the process child are gone.
func tkGone(t *testing.T, pgid, child int) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("process group %d and child %d to be gone after the task was cancelled", pgid, child), func() (bool, string) {
		left, err := proctest.InGroup(pgid)
		if err != nil {
			t.Fatal(err)
		}
		_, childErr := os.Stat(fmt.Sprintf("/proc/%d", child))
		return len(left) == 0 && os.IsNotExist(childErr), harness.List(left)
	})
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ---- 2026-07-28: the tasks extension ----

func tkMeta(ext bool) map[string]any {
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}
}

func tkParams(ext bool, kv ...any) map[string]any {
	p := map[string]any{"_meta": tkMeta(ext)}
	for i := 0; i < len(kv); i += 2 {
		p[kv[i].(string)] = kv[i+1]
	}
	return p
}

func tkModern(t *testing.T, c tkClient, dir string) {
	// Advertised under capabilities.extensions.
	d := c.call(t, "server/discover", "server/discover", tkParams(false))
	if dig(d.Result, "capabilities", "extensions", "io.modelcontextprotocol/tasks") == nil || dig(d.Result, "capabilities", "tasks") != nil {
		t.Errorf("server/discover does not advertise the tasks extension (only): %s", d.raw)
	}
	// A sync tool stays sync, even with the extension and a legacy task hint.
	g := c.call(t, "tools/call", "tools/call", tkParams(true, "name", "greet", "arguments", map[string]any{"name": "W"}, "task", map[string]any{"ttl": 1000}))
	if g.Result["resultType"] != "complete" || g.Result["taskId"] != nil || dig(g.Result, "content") == nil {
		t.Errorf("sync tool: %s", g.raw)
	}
	// Without the extension a task-capable tool runs synchronously.
	q := c.call(t, "tools/call", "tools/call", tkParams(false, "name", "quick", "arguments", map[string]any{"n": 1}))
	if q.Result["resultType"] != "complete" || q.Result["taskId"] != nil {
		t.Errorf("task-capable tool without the extension: %s", q.raw)
	}
	// ... and a task-required one is refused with -32021 naming the extension.
	r := c.call(t, "tools/call", "", tkParams(false, "name", "broken", "arguments", map[string]any{}))
	if r.Err == nil || r.Err.Code != -32021 || !strings.Contains(string(r.Err.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("required task tool without the extension: %s", r.raw)
	}
	// The tasks methods need the extension too.
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if r := c.call(t, m, "", tkParams(false, "taskId", "x", "inputResponses", map[string]any{})); r.Err == nil || r.Err.Code != -32021 {
			t.Errorf("%s without the extension: %s", m, r.raw)
		}
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if r := c.call(t, m, "", tkParams(true, "taskId", "x")); r.Err == nil || r.Err.Code != -32601 {
			t.Errorf("%s (removed in the extension): %s", m, r.raw)
		}
	}
	if r := c.call(t, "tasks/get", "", tkParams(true, "taskId", "no-such-task")); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("unknown task: %s", r.raw)
	}

	// A task: created at once, working (with its progress) until the tool
	// is let go, then completed with the result inlined.
	ta := mcpschema.TaskAugmented
	cr := c.call(t, "tools/call", ta, tkParams(true, "name", "slow", "arguments", map[string]any{"label": "a"}))
	id, _ := cr.Result["taskId"].(string)
	if cr.Result["resultType"] != "task" || id == "" || cr.Result["status"] != "working" || cr.Result["task"] != nil ||
		cr.Result["ttlMs"] == nil || cr.Result["createdAt"] == nil || cr.Result["lastUpdatedAt"] == nil || cr.Result["result"] != nil {
		t.Fatalf("CreateTaskResult: %s", cr.raw)
	}
	get := func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", id)) }
	w := tkPoll(t, "the task's progress", get, func(r tkResp) bool { return r.Result["statusMessage"] == "step one of a" })
	if w.Result["status"] != "working" || w.Result["result"] != nil || w.Result["resultType"] != "complete" {
		t.Errorf("working task: %s", w.raw)
	}
	os.WriteFile(filepath.Join(dir, "a.go"), nil, 0o644)
	done := tkPoll(t, "completion", get, func(r tkResp) bool { return r.Result["status"] != "working" })
	if done.Result["status"] != "completed" || dig(done.Result, "result", "content") == nil ||
		!strings.Contains(string(done.raw), `"text":"done a"`) || dig(done.Result, "result", "_meta", "io.modelcontextprotocol/related-task") != nil {
		t.Errorf("completed task: %s", done.raw)
	}
	// A tool error is a completed task with isError; a call that produced
	// no result (its shell killed by a signal) is a failed one.
	br := c.call(t, "tools/call", ta, tkParams(true, "name", "broken", "arguments", map[string]any{}))
	bid, _ := br.Result["taskId"].(string)
	b := tkPoll(t, "broken to end", func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", bid)) },
		func(r tkResp) bool { return r.Result["status"] != "working" })
	if b.Result["status"] != "completed" || dig(b.Result, "result", "isError") != true {
		t.Errorf("tool error task: %s", b.raw)
	}
	cx := c.call(t, "tools/call", ta, tkParams(true, "name", "crash", "arguments", map[string]any{}))
	cid, _ := cx.Result["taskId"].(string)
	f := tkPoll(t, "crash to end", func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", cid)) },
		func(r tkResp) bool { return r.Result["status"] != "working" })
	if f.Result["status"] != "failed" || f.Result["result"] != nil || dig(f.Result, "error", "code") == nil || dig(f.Result, "error", "message") == nil {
		t.Errorf("failed task: %s", f.raw)
	}

	// tasks/cancel: an empty ack, the normal cancellation (cancel hook),
	// the whole process group gone, status cancelled; idempotent.
	c.call(t, "tools/call", ta, tkParams(true, "name", "slow", "arguments", map[string]any{"label": "b"}))
	pid := atoi(t, tkWaitFile(t, filepath.Join(dir, "b.pid")))
	child := atoi(t, tkWaitFile(t, filepath.Join(dir, "b.child")))
	bTask := tkLast(t)
	ack := c.call(t, "tasks/cancel", "", tkParams(true, "taskId", bTask))
	if ack.Err != nil || ack.Result["resultType"] != "complete" || ack.Result["taskId"] != nil || ack.Result["status"] != nil {
		t.Errorf("cancel ack: %s", ack.raw)
	}
	tkGone(t, pid, child)
	if tkWaitFile(t, filepath.Join(dir, "hook.ran")) != "cancelled" {
		t.Error("cancel hook did not run")
	}
	cc := tkPoll(t, "cancelled", func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", bTask)) },
		func(r tkResp) bool { return r.Result["status"] == "cancelled" })
	if cc.Result["result"] != nil {
		t.Errorf("cancelled task carries a result: %s", cc.raw)
	}
	if again := c.call(t, "tasks/cancel", "", tkParams(true, "taskId", bTask)); again.Err != nil || again.Result["resultType"] != "complete" {
		t.Errorf("cancel of an ended task: %s", again.raw)
	}

	// A task whose tool asks: input_required with the request, until
	// tasks/update answers it; an unknown key is ignored; then completed
	// with the answer the tool read.
	ak := c.call(t, "tools/call", ta, tkParams(true, "name", "confirm", "arguments", map[string]any{}))
	akID, _ := ak.Result["taskId"].(string)
	getAk := func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", akID)) }
	ir := tkPoll(t, "input_required", getAk, func(r tkResp) bool { return r.Result["status"] == "input_required" })
	reqs, _ := ir.Result["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("inputRequests: %s", ir.raw)
	}
	var key string
	for k, v := range reqs {
		key = k
		if dig(v, "method") != "elicitation/create" || dig(v, "params", "message") != "Delete it?" {
			t.Errorf("input request %s: %v", k, v)
		}
	}
	if up := c.call(t, "tasks/update", "", tkParams(true, "taskId", akID, "inputResponses", map[string]any{"other": map[string]any{"action": "decline"}})); up.Err != nil || up.Result["resultType"] != "complete" || up.Result["status"] != nil {
		t.Errorf("tasks/update ack: %s", up.raw)
	}
	if r := getAk(); r.Result["status"] != "input_required" {
		t.Errorf("an unknown key answered the task: %s", r.raw)
	}
	c.call(t, "tasks/update", "", tkParams(true, "taskId", akID, "inputResponses", map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}))
	fin := tkPoll(t, "the asking task to end", getAk, func(r tkResp) bool { return r.Result["status"] != "input_required" && r.Result["status"] != "working" })
	if fin.Result["status"] != "completed" || !strings.Contains(string(fin.raw), `answer: {\"action\":\"accept\",\"content\":{\"confirm\":true}}`) {
		t.Errorf("asking task after tasks/update: %s", fin.raw)
	}

	// taskAfterInput: the first round is an MRTR input_required result (no
	// task); the retry with the answer becomes the task, whose result has
	// the answer.
	r1 := c.call(t, "tools/call", "tools/call", tkParams(true, "name", "after", "arguments", map[string]any{}))
	irs, _ := r1.Result["inputRequests"].(map[string]any)
	if r1.Result["resultType"] != "input_required" || r1.Result["taskId"] != nil || len(irs) != 1 {
		t.Fatalf("round 1: %s", r1.raw)
	}
	retry := tkParams(true, "name", "after", "arguments", map[string]any{})
	for k := range irs {
		retry["inputResponses"] = map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}
	}
	if st, ok := r1.Result["requestState"]; ok {
		retry["requestState"] = st
	}
	r2 := c.call(t, "tools/call", ta, retry)
	afterID, _ := r2.Result["taskId"].(string)
	if r2.Result["resultType"] != "task" || afterID == "" || r2.Result["requestState"] != nil || r2.Result["inputRequests"] != nil {
		t.Fatalf("round 2: %s", r2.raw)
	}
	af := tkPoll(t, "the task after input", func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", afterID)) },
		func(r tkResp) bool { return r.Result["status"] != "working" })
	if af.Result["status"] != "completed" || !strings.Contains(string(af.raw), `Alice`) {
		t.Errorf("task after input: %s", af.raw)
	}

	// TTL: quick's tasks are kept 200 ms from creation, then dropped.
	qt := c.call(t, "tools/call", ta, tkParams(true, "name", "quick", "arguments", map[string]any{"n": 2}))
	qid, _ := qt.Result["taskId"].(string)
	if qt.Result["ttlMs"] != float64(200) {
		t.Errorf("quick's ttlMs: %s", qt.raw)
	}
	tkPoll(t, "the task to expire", func() tkResp { return c.call(t, "tasks/get", "", tkParams(true, "taskId", qid)) },
		func(r tkResp) bool { return r.Err != nil && r.Err.Code == -32602 })
}

// tkLast is the task the last tools/call created (tkRecorder).
func tkLast(t *testing.T) string {
	t.Helper()
	id := lastTask.Load()
	if id == nil {
		t.Fatal("no task created")
	}
	return id.(string)
}

var lastTask atomic.Value

func TestTasks2026Stdio(t *testing.T) {
	c, dir := tkConnectStdio(t, "2026-07-28")
	tkModern(t, &tkRecorder{c}, dir)
}

func TestTasks2026HTTP(t *testing.T) {
	c, dir := tkConnectHTTP(t, "2026-07-28")
	tkModern(t, &tkRecorder{c}, dir)
	// The tasks methods' Mcp-Name must match params.taskId.
	cr := c.call(t, "tools/call", mcpschema.TaskAugmented, tkParams(true, "name", "quick", "arguments", map[string]any{"n": 3}))
	id, _ := cr.Result["taskId"].(string)
	c.hdr = map[string]string{"Mcp-Name": id}
	if r := c.call(t, "tasks/get", "", tkParams(true, "taskId", id)); r.Err != nil {
		t.Errorf("tasks/get with a matching Mcp-Name: %s", r.raw)
	}
	c.hdr = map[string]string{"Mcp-Name": "another"}
	if r := c.call(t, "tasks/get", "", tkParams(true, "taskId", id)); r.Err == nil || r.Err.Code != -32020 {
		t.Errorf("tasks/get with a mismatched Mcp-Name: %s", r.raw)
	}
}

// tkRecorder remembers the last task id a tools/call created.
type tkRecorder struct{ c tkClient }

func (r *tkRecorder) call(t *testing.T, method, schemaMethod string, params map[string]any) tkResp {
	t.Helper()
	resp := r.c.call(t, method, schemaMethod, params)
	if method == "tools/call" {
		if id, ok := resp.Result["taskId"].(string); ok {
			lastTask.Store(id)
		} else if id, ok := dig(resp.Result, "task", "taskId").(string); ok {
			lastTask.Store(id)
		}
	}
	return resp
}

// ---- 2025-11-25: experimental tasks ----

func tkLegacy(t *testing.T, c tkClient, dir string) {
	ta := mcpschema.TaskAugmented
	// tools/list shows the declared task support.
	l := c.call(t, "tools/list", "tools/list", map[string]any{})
	if !strings.Contains(string(l.raw), `"name":"slow","description":"a task","inputSchema":{"type":"object","properties":{"label":{"type":"string"}}},"execution":{"taskSupport":"optional"}`) {
		t.Errorf("tools/list does not carry execution.taskSupport: %s", l.raw)
	}
	// Without params.task a call is a call; a required-task tool is refused.
	if r := c.call(t, "tools/call", "tools/call", map[string]any{"name": "quick", "arguments": map[string]any{"n": 1}}); r.Result["task"] != nil || dig(r.Result, "content") == nil {
		t.Errorf("plain call: %s", r.raw)
	}
	if r := c.call(t, "tools/call", "", map[string]any{"name": "broken", "arguments": map[string]any{}}); r.Err == nil || r.Err.Code != -32601 {
		t.Errorf("required-task tool called plainly: %s", r.raw)
	}
	// Any other tool runs as a task when the client asks.
	g := c.call(t, "tools/call", ta, map[string]any{"name": "greet", "arguments": map[string]any{"name": "T"}, "task": map[string]any{}})
	gid, _ := dig(g.Result, "task", "taskId").(string)
	if gid == "" || dig(g.Result, "task", "status") != "working" {
		t.Fatalf("CreateTaskResult: %s", g.raw)
	}
	// tasks/result waits for the end and returns the tool's result.
	res := c.call(t, "tasks/result", "tasks/result", map[string]any{"taskId": gid})
	if !strings.Contains(string(res.raw), `"text":"Hello, T!"`) || dig(res.Result, "_meta", "io.modelcontextprotocol/related-task", "taskId") != gid {
		t.Errorf("tasks/result: %s", res.raw)
	}
	if r := c.call(t, "tasks/get", "tasks/get", map[string]any{"taskId": gid}); r.Result["status"] != "completed" || r.Result["ttl"] == nil {
		t.Errorf("tasks/get after the end: %s", r.raw)
	}

	// A running task: status message from mcp_progress, listed, cancelled.
	c.call(t, "tools/call", ta, map[string]any{"name": "slow", "arguments": map[string]any{"label": "c"}, "task": map[string]any{"ttl": 60000}})
	cid := tkLast(t)
	pid := atoi(t, tkWaitFile(t, filepath.Join(dir, "c.pid")))
	child := atoi(t, tkWaitFile(t, filepath.Join(dir, "c.child")))
	w := tkPoll(t, "progress", func() tkResp { return c.call(t, "tasks/get", "tasks/get", map[string]any{"taskId": cid}) },
		func(r tkResp) bool { return r.Result["statusMessage"] == "step one of c" })
	if w.Result["status"] != "working" || w.Result["ttl"] != float64(60000) {
		t.Errorf("working task: %s", w.raw)
	}
	lst := c.call(t, "tasks/list", "tasks/list", map[string]any{})
	if !strings.Contains(string(lst.raw), `"taskId":"`+cid+`"`) || !strings.Contains(string(lst.raw), `"taskId":"`+gid+`"`) {
		t.Errorf("tasks/list: %s", lst.raw)
	}
	cr := c.call(t, "tasks/cancel", "tasks/cancel", map[string]any{"taskId": cid})
	if cr.Result["status"] != "cancelled" || cr.Result["taskId"] != cid {
		t.Errorf("tasks/cancel: %s", cr.raw)
	}
	tkGone(t, pid, child)
	if tkWaitFile(t, filepath.Join(dir, "hook.ran")) != "cancelled" {
		t.Error("cancel hook did not run")
	}
	if r := c.call(t, "tasks/cancel", "", map[string]any{"taskId": cid}); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("cancel of an ended task: %s", r.raw)
	}
	if r := c.call(t, "tasks/result", "", map[string]any{"taskId": cid}); r.Err == nil {
		t.Errorf("tasks/result of a cancelled task: %s", r.raw)
	}
	// TTL: the client asks for 100 ms; the task is dropped after it.
	q := c.call(t, "tools/call", ta, map[string]any{"name": "quick", "arguments": map[string]any{"n": 4}, "task": map[string]any{"ttl": 100}})
	qid, _ := dig(q.Result, "task", "taskId").(string)
	if dig(q.Result, "task", "ttl") != float64(100) {
		t.Errorf("ttl not as asked: %s", q.raw)
	}
	tkPoll(t, "the task to expire", func() tkResp { return c.call(t, "tasks/get", "", map[string]any{"taskId": qid}) },
		func(r tkResp) bool { return r.Err != nil && r.Err.Code == -32602 })
}

func TestTasks2025_11_25Stdio(t *testing.T) {
	c, dir := tkConnectStdio(t, "2025-11-25")
	tkLegacy(t, &tkRecorder{c}, dir)
}

func TestTasks2025_11_25HTTP(t *testing.T) {
	c, dir := tkConnectHTTP(t, "2025-11-25")
	tkLegacy(t, &tkRecorder{c}, dir)
}

// A daemon serving several HTTP clients keeps each 2025-11-25 session's
// tasks to that session: another session neither lists them nor reaches
// one by its id.
func TestTasks2025_11_25SessionsAreApart(t *testing.T) {
	a, _ := tkConnectHTTP(t, "2025-11-25")
	b := &tkHTTP{url: a.url, rev: "2025-11-25"}
	b.call(t, "initialize", "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "other", "version": "0"}})
	if a.session == "" || b.session == "" || a.session == b.session {
		t.Fatalf("two sessions wanted: %q %q", a.session, b.session)
	}
	g := a.call(t, "tools/call", mcpschema.TaskAugmented, map[string]any{"name": "greet", "arguments": map[string]any{"name": "A"}, "task": map[string]any{}})
	id, _ := dig(g.Result, "task", "taskId").(string)
	if id == "" {
		t.Fatalf("CreateTaskResult: %s", g.raw)
	}
	if l := a.call(t, "tasks/list", "tasks/list", map[string]any{}); !strings.Contains(string(l.raw), id) {
		t.Errorf("the creating session does not list its task: %s", l.raw)
	}
	if l := b.call(t, "tasks/list", "tasks/list", map[string]any{}); strings.Contains(string(l.raw), id) {
		t.Errorf("another session lists it: %s", l.raw)
	}
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if r := b.call(t, m, "", map[string]any{"taskId": id}); r.Err == nil || r.Err.Code != -32602 {
			t.Errorf("%s from another session: %s, want -32602", m, r.raw)
		}
	}
	if r := a.call(t, "tasks/result", "tasks/result", map[string]any{"taskId": id}); !strings.Contains(string(r.raw), `"text":"Hello, A!"`) {
		t.Errorf("tasks/result from its session: %s", r.raw)
	}
}
