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

// serveTasks answers the tasks/* methods; false for another method (or one
// the request's revision does not have).
func (s *Server) serveTasks(c *conn, req *transport.Request) bool {
	modern := req.Era == transport.Modern
	switch req.Msg.Method {
	case "tasks/get", "tasks/cancel":
	case "tasks/update":
		if !modern {
			return false
		}
	case "tasks/result", "tasks/list":
		if modern {
			return false // removed by the 2026 extension: -32601
		}
	default:
		return false
	}
	id := req.Msg.ID
	fail := func(e *wire.Error) { req.Out.Respond(transport.Response{ID: id, Err: e}) }
	respond := func(fs []field) {
		r := object(fs...)
		if modern {
			r = modernResult(r, s.src.Config().ServerInfo(), nil)
		}
		req.Out.Respond(transport.Response{ID: id, Result: r})
	}
	if modern && !declaresTasks(req.Meta.Caps) {
		fail(&wire.Error{Code: wire.CodeMissingCapability, Message: "Missing required client capability: " + req.Msg.Method + " needs the " + TasksExtension + " extension",
			Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)})
		return true
	}
	if req.Msg.Method == "tasks/list" {
		respond([]field{{"tasks", s.taskList(req.Session)}})
		return true
	}
	var p struct {
		TaskID         *string                    `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(req.Msg.Params, &p) != nil || p.TaskID == nil {
		fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: taskId is required and must be a string"))
		return true
	}
	tk := s.tasks.get(*p.TaskID)
	if tk == nil || tk.modern != modern || !sameTaskOwner(tk.session, req.Session) {
		fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: unknown task "+*p.TaskID))
		return true
	}
	switch req.Msg.Method {
	case "tasks/get":
		respond(s.taskFields(tk, true))
	case "tasks/update":
		s.answerTask(tk, p.InputResponses)
		respond(nil)
	case "tasks/cancel":
		if !s.cancelTask(tk) && !modern {
			fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: task "+tk.id+" has already ended"))
			return true
		}
		if modern {
			respond(nil) // an empty ack; the status is for tasks/get
			return true
		}
		respond(s.taskFields(tk, false))
	case "tasks/result":
		s.taskResult(c, req, tk)
	}
	return true
}

// cancelTask stops a running task's call (the normal cancellation: TERM,
// grace, KILL, cancel hook); false when it had already ended.
func (s *Server) cancelTask(tk *task) bool {
	s.tasks.mu.Lock()
	running := tk.status == taskWorking || tk.status == taskAwaiting
	if running {
		tk.status, tk.updated, tk.inputs = taskCancelled, time.Now().UTC(), nil
	}
	s.tasks.mu.Unlock()
	if running {
		s.log.Info("task cancelled", zap.String("task", tk.id), zap.String("tool", tk.tool))
		tk.cancel(supervisor.ErrCancelled)
	}
	return running
}

// taskResult answers 2025-11-25's tasks/result once the task has ended:
// its tool's result, with the related-task _meta; a failed or cancelled
// task's error. The wait runs on its own goroutine.
func (s *Server) taskResult(c *conn, req *transport.Request, tk *task) {
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
		switch status {
		case taskCompleted:
			related := object(field{"io.modelcontextprotocol/related-task", object(field{"taskId", wire.Quote(tk.id)})})
			res, err := withMeta(result, related)
			if err != nil {
				res = result
			}
			req.Out.Respond(transport.Response{ID: req.Msg.ID, Result: res})
		case taskFailed:
			req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: terr})
		default:
			req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: wire.Errorf(wire.CodeInternal, "Task "+tk.id+" was cancelled")})
		}
	}
	if s.enter(c) {
		s.goEntered(c, answer)
	} else {
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
	}
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

// sameTaskOwner reports whether a request of session b may reach a task
// of session a: its own session's, or — for a client that keeps no
// session (each of its HTTP requests stands alone) — any task created
// without one, by its id alone. The 2025-11-25 spec binds a task to the
// requestor's context; without a session the 128-bit random id is that
// context (as the reference SDK does for stateless servers), and
// tasks/list, which has no id to go by, never shows such a task.
func sameTaskOwner(a, b *transport.Session) bool {
	return a == b || (a.Standalone() && b.Standalone())
}

// taskList is 2025-11-25's tasks/list: the session's tasks kept, oldest first.
func (s *Server) taskList(session *transport.Session) json.RawMessage {
	s.tasks.mu.Lock()
	all := make([]*task, 0, len(s.tasks.m))
	for _, tk := range s.tasks.m {
		if !tk.modern && tk.session == session {
			all = append(all, tk)
		}
	}
	s.tasks.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].created.Before(all[j].created) })
	items := make([]json.RawMessage, len(all))
	for i, tk := range all {
		items[i] = object(s.taskFields(tk, false)...)
	}
	return wire.Marshal(items)
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

// answerTask hands tasks/update's inputResponses to the inputs they name;
// keys the task does not wait for are ignored. The task is working again
// once nothing is left to answer.
func (s *Server) answerTask(tk *task, responses map[string]json.RawMessage) {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
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
