package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Tasks: a tools/call answered at once with a task, whose tool goes on
// running in its own process group after the request is answered; the
// client polls the task and fetches its result later. Two shapes of the
// same store:
//
//   - 2025-11-25 (experimental tasks): the client asks for a task with
//     params.task on tools/call (any tool whose tools.json entry does not
//     forbid it); CreateTaskResult is {task:{…}}; tasks/get, tasks/result
//     (waits for the end), tasks/list and tasks/cancel; capabilities.tasks.
//   - 2026-07-28 (the io.modelcontextprotocol/tasks extension, SEP-2663):
//     the server decides — a task-capable tool called by a client whose
//     request declares the extension runs as a task; CreateTaskResult is
//     flat, resultType "task"; tasks/get inlines the result or error;
//     tasks/update answers the input the task waits for; tasks/cancel is an
//     empty ack; tasks/result and tasks/list do not exist (-32601).
//
// A task's status comes from its call: working while it runs (its
// statusMessage is the last mcp_progress), input_required while its tool
// waits for answers (2026, tasks/update), then completed (the tool's
// result, isError included), failed (the call produced no result: it timed
// out, died by a signal or never started), or cancelled (tasks/cancel:
// the normal cancellation, TERM, grace, KILL, cancel hook). A finished
// task is kept until its TTL has passed since it was created, and at least
// one TTL after it ended when it ran longer than that; then it is dropped
// and its id is unknown (-32602).

// TasksExtension is the 2026-07-28 tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

const (
	// defaultTaskTTL is how long a task is kept when neither the tool
	// (x-mcp-bashd taskTtl) nor the client (2025-11-25's task.ttl) says.
	defaultTaskTTL = time.Hour
	// maxTaskTTL bounds what a client may ask for.
	maxTaskTTL = 24 * time.Hour
	// taskPollMs is the polling interval suggested to clients.
	taskPollMs = 500
)

// Task statuses.
const (
	taskWorking   = "working"
	taskAwaiting  = "input_required"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// tasksVersion is the legacy revision that has (experimental) tasks.
const tasksVersion = "2025-11-25"

// legacyTasksCapability is 2025-11-25's capabilities.tasks: tasks/list,
// tasks/cancel and task-augmented tools/call.
const legacyTasksCapability = `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

// offersTasks reports whether the tools file has a task-capable tool: the
// tasks capability (or 2026 extension) is advertised then.
func offersTasks(cat *catalog.Catalog) bool { return cat.Tools != nil && cat.Tools.Tasks }

// addCapability adds key to a capabilities object unless config.json
// already declares it (its own value stands).
func addCapability(caps json.RawMessage, key string, val json.RawMessage) json.RawMessage {
	ms, err := wire.SplitObject(caps)
	if err != nil || wire.FirstByte(caps) != '{' {
		return caps
	}
	for _, m := range ms {
		if m.Key == key {
			return caps
		}
	}
	return wire.Object(append(ms, wire.Member{Key: key, Val: val})...)
}

// addExtension adds a 2026 extension to capabilities.extensions.
func addExtension(caps json.RawMessage, ext string) json.RawMessage {
	ms, err := wire.SplitObject(caps)
	if err != nil || wire.FirstByte(caps) != '{' {
		return caps
	}
	entry := wire.Member{Key: ext, Val: json.RawMessage(`{}`)}
	for i, m := range ms {
		if m.Key != "extensions" {
			continue
		}
		inner, err := wire.SplitObject(m.Val)
		if err != nil || wire.FirstByte(m.Val) != '{' {
			return caps
		}
		for _, e := range inner {
			if e.Key == ext {
				return caps
			}
		}
		ms[i].Val = wire.Object(append(inner, entry)...)
		return wire.Object(ms...)
	}
	return wire.Object(append(ms, wire.Member{Key: "extensions", Val: wire.Object(entry)})...)
}

// taskStore holds the server's tasks by id.
type taskStore struct {
	mu sync.Mutex
	m  map[string]*task
	// The bounds (taskbound.go): 0 is the default.
	max     int
	maxB    int64
	bytes   int64 // held by finished tasks' results
	evicted int64
}

// task is one task; its mutable fields change under taskStore.mu.
type task struct {
	id     string
	tool   string
	modern bool
	// session is the 2025-11-25 session that created it (nil in 2026):
	// only that session sees it in tasks/list or reaches it by id — a
	// daemon may serve several clients over HTTP.
	session *transport.Session
	created time.Time
	ttl     time.Duration
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed when the call has ended

	status  string
	message string
	updated time.Time
	result  json.RawMessage // a CallToolResult (completed)
	err     *wire.Error     // failed
	inputs  []*taskInput    // what the tool waits for (input_required)
	size    int64           // bytes of result and error, once ended
	ended   time.Time       // zero while running
}

// taskInput is one request a task's tool waits to have answered.
type taskInput struct {
	key     string
	request json.RawMessage // {"method":…,"params":…}
	answer  chan json.RawMessage
}

// add holds tk, making room by the store's rule; false: it is full of
// running tasks.
func (st *taskStore) add(tk *task) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m == nil {
		st.m = map[string]*task{}
	}
	if !st.room() {
		return false
	}
	st.m[tk.id] = tk
	return true
}

func (st *taskStore) get(id string) *task {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.m[id]
}

func (st *taskStore) drop(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.removeLocked(id)
}

// taskRequested decides whether a tools/call runs as a task: see the top of
// the file. The error is the refusal to answer instead.
func taskRequested(req *transport.Request, t *catalog.Tool, params json.RawMessage) (bool, time.Duration, *wire.Error) {
	if req.Era == transport.Modern {
		if !t.TaskCapable() {
			return false, t.TaskTTL, nil // a legacy params.task is tolerated, never obeyed
		}
		if declaresTasks(req.Meta.Caps) {
			// A tool that gathers its input first (taskAfterInput) runs
			// synchronously until a retry brings inputResponses: that
			// round becomes the task (MRTR, then a task).
			return !t.TaskAfterInput || hasInputResponses(params), t.TaskTTL, nil
		}
		if t.TaskSupport == "required" {
			return false, 0, &wire.Error{Code: wire.CodeMissingCapability,
				Message: "Missing required client capability: tool " + t.Name + " runs only as a task (extension " + TasksExtension + ")",
				Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)}
		}
		return false, 0, nil
	}
	var p struct {
		Task *struct {
			TTL *float64 `json:"ttl"`
		} `json:"task"`
	}
	_ = json.Unmarshal(params, &p)
	switch {
	case p.Task == nil && t.TaskSupport == "required":
		return false, 0, wire.Errorf(wire.CodeMethodNotFound, "Tool "+t.Name+" must be called as a task (params.task)")
	case p.Task == nil:
		return false, 0, nil
	case t.TaskSupport == "forbidden":
		return false, 0, wire.Errorf(wire.CodeMethodNotFound, "Tool "+t.Name+" cannot be called as a task")
	}
	ttl := t.TaskTTL
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = time.Duration(*p.Task.TTL * float64(time.Millisecond))
	}
	return true, ttl, nil
}

// hasInputResponses reports whether a 2026 tools/call is an MRTR retry.
func hasInputResponses(params json.RawMessage) bool {
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	return json.Unmarshal(params, &p) == nil && wire.FirstByte(p.InputResponses) == '{'
}

// declaresTasks reports whether 2026 client capabilities name the tasks
// extension.
func declaresTasks(caps json.RawMessage) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	_, ok := c.Extensions[TasksExtension]
	return ok
}

// startTask registers a task for a validated call and starts its tool; the
// task can be looked up before the CreateTaskResult returned is sent. The
// tool runs under the server's context, not the request's: answering the
// request (or its client leaving) does not stop it; tasks/cancel and
// shutdown do.
func (s *Server) startTask(tc toolCall, cfg *catalog.Config, t *catalog.Tool, snap *supervisor.Snapshot, args json.RawMessage, ttl time.Duration) (*Result, *wire.Error) {
	if ttl <= 0 {
		ttl = defaultTaskTTL
	}
	ttl = min(ttl, maxTaskTTL).Truncate(time.Millisecond)
	if ttl <= 0 {
		ttl = time.Millisecond
	}
	now := time.Now().UTC()
	ctx, cancel := context.WithCancelCause(s.base)
	tk := &task{id: newTaskID(), tool: t.Name, modern: tc.req.Era == transport.Modern, session: tc.req.Session, created: now, ttl: ttl,
		cancel: cancel, done: make(chan struct{}), status: taskWorking, updated: now}
	s.mu.Lock()
	stopping := s.stopping
	if !stopping {
		s.calls.Add(1)
	}
	s.mu.Unlock()
	if stopping {
		cancel(nil)
		return nil, errClosing()
	}
	if !s.tasks.add(tk) {
		cancel(nil)
		s.calls.Done()
		return nil, errTaskStoreFull(s.tasks.maxCount())
	}
	s.log.Info("task created", zap.String("task", tk.id), zap.String("tool", t.Name), zap.Duration("ttl", ttl))
	own := toolCall{req: tc.req, params: tc.params, conn: tc.conn, events: s.taskEvents(tk), ask: s.taskAsk(tk, tc)}
	go func() {
		defer s.calls.Done()
		defer cancel(nil)
		res, oc := s.runTool(ctx, own, cfg, t, snap, args)
		s.finishTask(tk, res, oc, cfg)
	}()
	body := s.taskFields(tk, false)
	if tk.modern {
		return &Result{Body: object(append(body, field{"resultType", json.RawMessage(`"task"`)})...)}, nil
	}
	return &Result{Body: object(field{"task", object(body...)})}, nil
}

func newTaskID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// taskEvents makes a task's mcp_progress its status message.
func (s *Server) taskEvents(tk *task) func(supervisor.Event) {
	return func(ev supervisor.Event) {
		if ev.Kind != "progress" {
			return
		}
		msg := ev.Message
		if msg == "" {
			msg = "progress " + string(ev.Progress)
			if len(ev.Total) > 0 {
				msg += "/" + string(ev.Total)
			}
		}
		s.tasks.mu.Lock()
		if tk.status == taskWorking || tk.status == taskAwaiting {
			tk.message, tk.updated = msg, time.Now().UTC()
		}
		s.tasks.mu.Unlock()
	}
}

// finishTask records how the task's call ended and schedules its removal.
func (s *Server) finishTask(tk *task, res *Result, oc supervisor.Outcome, cfg *catalog.Config) {
	s.tasks.mu.Lock()
	now := time.Now().UTC()
	switch {
	case res == nil || tk.status == taskCancelled:
		tk.status = taskCancelled
	case oc.SetupErr != nil || oc.TimedOut || oc.Signal != 0:
		// The call produced no result of the tool's own: a protocol-level
		// failure, reported as the error the task ends with.
		tk.status = taskFailed
		tk.err = &wire.Error{Code: wire.CodeInternal, Message: "Tool " + tk.tool + " did not complete: " + resultText(res)}
	default:
		tk.status = taskCompleted
		tk.result = res.JSON()
		if tk.modern {
			tk.result = modernResult(tk.result, cfg.ServerInfo(), nil)
		}
	}
	tk.inputs = nil
	tk.updated = now
	if !s.tasks.keep(tk) {
		tk.status, tk.err = taskFailed, tooLargeToKeep(tk.tool, len(tk.result), s.tasks.maxBytes())
		tk.result = nil
		s.tasks.keep(tk)
	}
	keep := tk.created.Add(tk.ttl).Sub(now)
	if keep <= 0 {
		keep = tk.ttl
	}
	status := tk.status
	s.tasks.mu.Unlock()
	close(tk.done)
	s.log.Info("task ended", zap.String("task", tk.id), zap.String("tool", tk.tool), zap.String("status", status), zap.Duration("kept_for", keep))
	id := tk.id // not tk: the timer must not keep an evicted task's result
	time.AfterFunc(keep, func() {
		s.tasks.drop(id)
		s.log.Info("task expired", zap.String("task", id))
	})
}

// resultText is the first text of a result, for a failed task's error.
func resultText(res *Result) string {
	if res == nil {
		return "no result"
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(res.JSON(), &r) == nil && len(r.Content) > 0 && r.Content[0].Text != "" {
		return r.Content[0].Text
	}
	return "no result"
}

// taskFields are the Task members of tk as its shape has them; detailed
// adds, in 2026, the inlined result, error or inputRequests. Called
// without the store's lock.
func (s *Server) taskFields(tk *task, detailed bool) []field {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	ttl := json.RawMessage(fmt.Sprint(tk.ttl.Milliseconds()))
	fs := []field{
		{"taskId", wire.Quote(tk.id)},
		{"status", wire.Quote(tk.status)},
	}
	if tk.message != "" {
		fs = append(fs, field{"statusMessage", wire.Quote(tk.message)})
	}
	fs = append(fs, field{"createdAt", wire.Quote(tk.created.Format(time.RFC3339Nano))},
		field{"lastUpdatedAt", wire.Quote(tk.updated.Format(time.RFC3339Nano))})
	if !tk.modern {
		return append(fs, field{"ttl", ttl}, field{"pollInterval", json.RawMessage(fmt.Sprint(taskPollMs))})
	}
	fs = append(fs, field{"ttlMs", ttl}, field{"pollIntervalMs", json.RawMessage(fmt.Sprint(taskPollMs))})
	if !detailed {
		return fs
	}
	switch tk.status {
	case taskCompleted:
		fs = append(fs, field{"result", tk.result})
	case taskFailed:
		fs = append(fs, field{"error", object(field{"code", json.RawMessage(fmt.Sprint(tk.err.Code))}, field{"message", wire.Quote(tk.err.Message)})})
	case taskAwaiting:
		ms := make([]wire.Member, len(tk.inputs))
		for i, in := range tk.inputs {
			ms[i] = wire.Member{Key: in.key, Val: in.request}
		}
		fs = append(fs, field{"inputRequests", wire.Object(ms...)})
	}
	return fs
}
