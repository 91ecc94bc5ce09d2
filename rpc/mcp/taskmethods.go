package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// The tasks/* methods over the store of tasks.go.

// taskParams are the params of tasks/get, cancel, update and result.
type taskParams struct {
	id        string
	responses map[string]json.RawMessage // tasks/update's inputResponses
}

func decodeTask(r *request) (taskParams, *wire.Error) {
	var p struct {
		TaskID         *string                    `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(r.Msg.Params, &p) != nil || p.TaskID == nil {
		return taskParams{}, wire.InvalidParams("taskId is required and must be a string")
	}
	return taskParams{id: *p.TaskID, responses: p.InputResponses}, nil
}

// task is the task p names, when it is the request's to reach: of its
// shape and, in 2025-11-25, of its session; nil after answering -32602.
// With a shared store, a task this replica does not hold is remote's to
// answer from its record (taskshare.go), and task returns nil.
func (c *session) task(r *request, p taskParams, remote func(*request, taskParams)) *task {
	tk := c.srv.tasks.get(p.id)
	if tk == nil && c.srv.tasks.share != nil {
		remote(r, p)
		return nil
	}
	if tk == nil || tk.modern != r.modern() || !sameTaskOwner(tk.session, r.Session) {
		r.fail(wire.InvalidParams("unknown task " + p.id))
		return nil
	}
	return tk
}

// sameTaskOwner reports whether a request of session b may reach a task
// of session a: its own session's, or — for a client that keeps no
// session (each of its HTTP requests stands alone) — any task created
// without one, by its id alone. The 2025-11-25 spec binds a task to the
// requestor's context; without a session the 128-bit random id is that
// context (as the reference SDK does for stateless servers), and
// tasks/list, which has no id to go by, never shows such a task. One
// Mcp-Session-Id is one session, whichever replica made the value that
// holds it (issue 26 shares sessions); within one replica the same id is
// the same value.
func sameTaskOwner(a, b *transport.Session) bool {
	return a == b || (a.Standalone() && b.Standalone()) || (a.ID() != "" && !a.Standalone() && !b.Standalone() && a.ID() == b.ID())
}

// taskReply answers a tasks/* request with a Task's fields.
func (c *session) taskReply(r *request, fs []field) {
	res := object(fs...)
	if r.modern() {
		res = modernResult(res, c.srv.src.Config().ServerInfo(), nil)
	}
	r.reply(res)
}

func (c *session) getTask(r *request, p taskParams) {
	if tk := c.task(r, p, c.remoteGet); tk != nil {
		c.taskReply(r, c.srv.tasks.fields(tk, true))
	}
}

func (c *session) updateTask(r *request, p taskParams) {
	if tk := c.task(r, p, c.remoteUpdate); tk != nil {
		c.srv.tasks.answer(tk, p.responses)
		c.taskReply(r, nil)
	}
}

func (c *session) cancelTaskReq(r *request, p taskParams) {
	tk := c.task(r, p, c.remoteCancel)
	if tk == nil {
		return
	}
	switch {
	case !c.srv.tasks.cancel(tk) && !r.modern():
		r.fail(wire.InvalidParams("task " + tk.id + " has already ended"))
	case r.modern():
		c.taskReply(r, nil) // an empty ack; the status is for tasks/get
	default:
		c.taskReply(r, c.srv.tasks.fields(tk, false))
	}
}

func (c *session) listTasks(r *request, _ struct{}) {
	if c.srv.tasks.share != nil && r.Session.ID() != "" && !r.Session.Standalone() {
		c.remoteList(r) // the session's requests may have reached other replicas
		return
	}
	c.taskReply(r, []field{{"tasks", c.srv.tasks.list(r.Session)}})
}

// cancel stops a running task's call (the normal cancellation: TERM,
// grace, KILL, cancel hook); false when it had already ended.
func (st *taskStore) cancel(tk *task) bool {
	st.mu.Lock()
	running := tk.status == taskWorking || tk.status == taskAwaiting
	if running {
		tk.status, tk.updated, tk.inputs = taskCancelled, time.Now().UTC(), nil
	}
	st.mu.Unlock()
	if running {
		st.log.Info("task cancelled", zap.String("task", tk.id), zap.String("tool", tk.tool))
		tk.cancel(supervisor.ErrCancelled)
		if st.share != nil {
			st.share.write(tk)
		}
	}
	return running
}

// taskResult answers 2025-11-25's tasks/result once the task has ended:
// its tool's result, with the related-task _meta; a failed or cancelled
// task's error. The wait runs on its own goroutine.
func (c *session) taskResult(r *request, p taskParams) {
	s, req := c.srv, r.Request
	tk := c.task(r, p, c.remoteResult)
	if tk == nil {
		return
	}
	answer := func() {
		select {
		case <-tk.done:
		case <-s.base.Done():
			req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
			return
		case <-req.Gone:
			req.Out.Finish()
			return
		}
		s.tasks.mu.Lock()
		status, result, terr := tk.status, tk.result, tk.err
		s.tasks.mu.Unlock()
		req.Out.Respond(taskResultResponse(req, tk.id, status, result, terr))
	}
	if c.enter() {
		c.goEntered(answer)
	} else {
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
	}
}

// taskResultResponse is tasks/result's answer for an ended task: its
// tool's result with the related-task _meta; a failed or cancelled
// task's error.
func taskResultResponse(req *transport.Request, id, status string, result json.RawMessage, terr *wire.Error) transport.Response {
	switch status {
	case taskCompleted:
		related := object(field{"io.modelcontextprotocol/related-task", object(field{"taskId", wire.Quote(id)})})
		res, err := withMeta(result, related)
		if err != nil {
			res = result
		}
		return transport.Response{ID: req.Msg.ID, Result: res}
	case taskFailed:
		return transport.Response{ID: req.Msg.ID, Err: terr}
	}
	return transport.Response{ID: req.Msg.ID, Err: wire.Internal("Task " + id + " was cancelled")}
}

// withMeta adds members to a result's _meta (made when absent).
func withMeta(result, meta json.RawMessage) (json.RawMessage, error) {
	ms, err := wire.SplitObject(result)
	if err != nil {
		return nil, err
	}
	add, _ := wire.SplitObject(meta)
	for i, m := range ms {
		if m.Key == "_meta" && wire.FirstByte(m.Val) == '{' {
			inner, err := wire.SplitObject(m.Val)
			if err != nil {
				return nil, err
			}
			ms[i].Val = wire.Object(lastValues(append(inner, add...))...)
			return wire.Object(ms...), nil
		}
	}
	return wire.Object(append(ms, wire.Member{Key: "_meta", Val: meta})...), nil
}

// list is 2025-11-25's tasks/list: the session's tasks kept, oldest first.
func (st *taskStore) list(session *transport.Session) json.RawMessage {
	all := st.localRecords(session, "")
	items := make([]json.RawMessage, len(all))
	for i := range all {
		items[i] = object(all[i].fields(false)...)
	}
	return wire.Marshal(items)
}

// localRecords are the session's 2025-11-25 tasks held here, oldest
// first.
func (st *taskStore) localRecords(session *transport.Session, owner string) []taskRecord {
	st.mu.Lock()
	all := make([]taskRecord, 0, len(st.m))
	for _, tk := range st.m {
		if !tk.modern && !tk.session.Standalone() && sameTaskOwner(tk.session, session) {
			all = append(all, st.recordLocked(tk, owner))
		}
	}
	st.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Created.Before(all[j].Created) })
	return all
}

// taskAsk is the Ask of a task's call. In 2026 an ask the creating
// request's own inputResponses answer (an MRTR round that became a task)
// gets that answer; otherwise the requests become the task's
// inputRequests, its status input_required, until tasks/update has
// answered every one of them (or the call ends). 2025-11-25's tasks have
// no way to ask: the session's own mechanism (askFor) is used, on the
// stream of the request that created the task while it is open.
func (s *Server) taskAsk(tk *task, tc toolCall) func(ctx context.Context, reqs []supervisor.AskItem) ([]json.RawMessage, error) {
	if !tk.modern {
		return s.askFor(tc)
	}
	return func(ctx context.Context, reqs []supervisor.AskItem) ([]json.RawMessage, error) {
		if tc.mrtr != nil {
			out, err := tc.mrtr.Ask(ctx, reqs)
			if !errors.Is(err, supervisor.ErrEndCall) {
				return out, err // answered, or refused (a capability the client lacks)
			}
		}
		ins := make([]*taskInput, len(reqs))
		s.tasks.mu.Lock()
		if tk.status != taskWorking && tk.status != taskAwaiting {
			s.tasks.mu.Unlock()
			return nil, fmt.Errorf("task %s has ended", tk.id)
		}
		for i, r := range reqs {
			key := r.Key
			if key == "" {
				key = askKey(r.Method, r.Params)
			}
			ins[i] = &taskInput{key: key, request: object(field{"method", wire.Quote(r.Method)}, field{"params", r.Params}), answer: make(chan json.RawMessage, 1)}
		}
		tk.inputs = append(tk.inputs, ins...)
		tk.status, tk.updated = taskAwaiting, time.Now().UTC()
		s.tasks.mu.Unlock()
		if s.tasks.share != nil {
			s.tasks.share.write(tk)
		}
		out := make([]json.RawMessage, len(ins))
		for i, in := range ins {
			select {
			case out[i] = <-in.answer:
			case <-ctx.Done():
				return nil, fmt.Errorf("the task ended while it waited for %s", in.key)
			}
		}
		return out, nil
	}
}

// answer hands tasks/update's inputResponses to the inputs they name;
// keys the task does not wait for are ignored. The task is working again
// once nothing is left to answer.
func (st *taskStore) answer(tk *task, responses map[string]json.RawMessage) {
	st.mu.Lock()
	defer func() {
		st.mu.Unlock()
		if st.share != nil {
			st.share.write(tk)
		}
	}()
	left := tk.inputs[:0:0]
	for _, in := range tk.inputs {
		if r, ok := responses[in.key]; ok {
			in.answer <- r
			continue
		}
		left = append(left, in)
	}
	tk.inputs = left
	if tk.status == taskAwaiting && len(left) == 0 {
		tk.status = taskWorking
	}
	tk.updated = time.Now().UTC()
}
