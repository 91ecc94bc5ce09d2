package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
	log *zap.Logger
	mu  sync.Mutex
	m   map[string]*task
	// The bounds (taskbound.go): 0 is the default.
	max     int
	maxB    int64
	bytes   int64 // held by finished tasks' results
	evicted int64
	// share writes the tasks to a shared store (taskshare.go); nil
	// without one.
	share *taskShare
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
	expires time.Time       // when it is dropped, once ended

	// With a shared store (taskshare.go): wmu orders the writes of its
	// record; writeSoon, progress writes are being coalesced, writeAgain
	// one more is due; recExpires, when the record last written runs out.
	wmu        sync.Mutex
	writeSoon  bool
	writeAgain bool
	recExpires time.Time
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
func taskRequested(tc toolCall, t *catalog.Tool) (bool, time.Duration, *wire.Error) {
	if tc.req.Era == transport.Modern {
		if !t.TaskCapable() {
			return false, t.TaskTTL, nil // a legacy params.task is tolerated, never obeyed
		}
		if declaresTasks(tc.caps) {
			// A tool that gathers its input first (taskAfterInput) runs
			// synchronously until a retry brings inputResponses: that
			// round becomes the task (MRTR, then a task).
			return !t.TaskAfterInput || wire.FirstByte(tc.p.responses) == '{', t.TaskTTL, nil
		}
		if t.TaskSupport == "required" {
			return false, 0, wire.MissingExtension(": tool "+t.Name+" runs only as a task (extension "+TasksExtension+")", TasksExtension)
		}
		return false, 0, nil
	}
	asked := wire.FirstByte(tc.p.task) == '{'
	switch {
	case !asked && t.TaskSupport == "required":
		return false, 0, wire.NewError(wire.CodeMethodNotFound, "Tool "+t.Name+" must be called as a task (params.task)")
	case !asked:
		return false, 0, nil
	case t.TaskSupport == "forbidden":
		return false, 0, wire.NewError(wire.CodeMethodNotFound, "Tool "+t.Name+" cannot be called as a task")
	}
	var task struct {
		TTL *float64 `json:"ttl"`
	}
	_ = json.Unmarshal(tc.p.task, &task)
	ttl := t.TaskTTL
	if task.TTL != nil && *task.TTL > 0 {
		ttl = time.Duration(*task.TTL * float64(time.Millisecond))
	}
	return true, ttl, nil
}

// declaresTasks reports whether 2026 client capabilities name the tasks
// extension.
func declaresTasks(caps map[string]json.RawMessage) bool {
	var ext map[string]json.RawMessage
	if json.Unmarshal(caps["extensions"], &ext) != nil {
		return false
	}
	_, ok := ext[TasksExtension]
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
	// The task takes over the call's admission: it counts against the
	// busy bound until its tool ends, as the call would have.
	own, ok := tc.tk.toTask()
	if !ok {
		return nil, errClosing()
	}
	now := time.Now().UTC()
	tk := &task{id: newTaskID(), tool: t.Name, modern: tc.req.Era == transport.Modern, session: tc.req.Session, created: now, ttl: ttl,
		cancel: own.stop, done: make(chan struct{}), status: taskWorking, updated: now}
	if !s.tasks.add(tk) {
		own.end()
		return nil, errTaskStoreFull(s.tasks.maxCount())
	}
	s.log.Info("task created", zap.String("task", tk.id), zap.String("tool", t.Name), zap.Duration("ttl", ttl))
	if s.tasks.share != nil {
		// Before the CreateTaskResult: the client's next request may
		// reach another replica.
		s.tasks.share.write(tk)
	}
	run := toolCall{req: tc.req, p: tc.p, caps: tc.caps, conn: tc.conn, tk: own, events: s.tasks.events(tk), ask: s.taskAsk(tk, tc)}
	go func() {
		defer own.end()
		res, oc, _ := s.runTool(own.ctx, run, cfg, t, snap, args)
		s.tasks.finish(tk, res, oc, cfg)
	}()
	body := s.tasks.fields(tk, false)
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

// events makes a task's mcp_progress its status message.
func (st *taskStore) events(tk *task) func(supervisor.Event) {
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
		st.mu.Lock()
		changed := (tk.status == taskWorking || tk.status == taskAwaiting) && tk.message != msg
		if tk.status == taskWorking || tk.status == taskAwaiting {
			tk.message, tk.updated = msg, time.Now().UTC()
		}
		st.mu.Unlock()
		if changed && st.share != nil {
			st.share.soon(tk)
		}
	}
}

// finish records how the task's call ended and schedules its removal.
func (st *taskStore) finish(tk *task, res *Result, oc supervisor.Outcome, cfg *catalog.Config) {
	st.mu.Lock()
	now := time.Now().UTC()
	switch {
	case res == nil || tk.status == taskCancelled:
		tk.status = taskCancelled
	case oc.End == supervisor.NotRun || oc.End == supervisor.TimedOut || oc.Signal != 0:
		// The call produced no result of the tool's own: a protocol-level
		// failure, reported as the error the task ends with.
		tk.status = taskFailed
		tk.err = wire.Internal("Tool " + tk.tool + " did not complete: " + resultText(res))
	default:
		tk.status = taskCompleted
		tk.result = res.JSON()
		if tk.modern {
			tk.result = modernResult(tk.result, cfg.ServerInfo(), nil)
		}
	}
	tk.inputs = nil
	tk.updated = now
	if !st.keep(tk) {
		tk.status, tk.err = taskFailed, tooLargeToKeep(tk.tool, len(tk.result), st.maxBytes())
		tk.result = nil
		st.keep(tk)
	}
	keep := tk.created.Add(tk.ttl).Sub(now)
	if keep <= 0 {
		keep = tk.ttl
	}
	status := tk.status
	tk.expires = now.Add(keep)
	st.mu.Unlock()
	if st.share != nil {
		st.share.write(tk)
	}
	close(tk.done)
	st.log.Info("task ended", zap.String("task", tk.id), zap.String("tool", tk.tool), zap.String("status", status), zap.Duration("kept_for", keep))
	id := tk.id // not tk: the timer must not keep an evicted task's result
	time.AfterFunc(keep, func() {
		st.drop(id)
		st.log.Info("task expired", zap.String("task", id))
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

// fields are the Task members of tk as its shape has them; detailed
// adds, in 2026, the inlined result, error or inputRequests. Called
// without the store's lock.
func (st *taskStore) fields(tk *task, detailed bool) []field {
	st.mu.Lock()
	rec := st.recordLocked(tk, "")
	st.mu.Unlock()
	return rec.fields(detailed)
}
