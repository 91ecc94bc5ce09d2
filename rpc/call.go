package rpc

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// startCall registers the call as in flight before returning, so a
// cancellation on the very next line finds it, then runs it concurrently.
func (s *Server) startCall(id, params json.RawMessage, out sink) {
	key, _ := idKey(id)
	s.mu.Lock()
	if _, dup := s.inflight[key]; dup {
		s.mu.Unlock()
		out.respond(ErrorLine(id, codeInvalidRequest, "Invalid Request: id "+string(id)+" is already in flight", nil))
		return
	}
	if s.pending.Load() >= int64(s.opt.MaxPending) {
		s.mu.Unlock()
		out.respond(ErrorLine(id, codeInternal, "Server busy: too many tool calls in flight", nil))
		return
	}
	ctx, cancel := context.WithCancelCause(s.base)
	s.inflight[key] = cancel
	s.pending.Add(1)
	s.calls.Add(1)
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.inflight, key)
			s.mu.Unlock()
			cancel(nil)
			s.pending.Add(-1)
			s.calls.Done()
		}()
		line := s.call(ctx, id, params, out)
		if line != nil {
			out.respond(line)
		}
	}()
}

// call applies the SDK's checks in its order and runs the tool; nil means
// no response (the call was cancelled).
func (s *Server) call(ctx context.Context, id, params json.RawMessage, out sink) []byte {
	cp, perr := parseCallParams(params)
	if perr != nil {
		return ErrorLine(id, perr.code, perr.msg, nil)
	}
	name := cp.name
	if !toolNameRE.MatchString(name) {
		return ErrorLine(id, codeInvalidParams, "Invalid tool name: "+name, nil)
	}
	cat := s.tools.get()
	cannot := func(why string) []byte {
		msg := "Cannot validate arguments for " + name + ": " + why
		s.log.Error("tool call rejected", zap.String("tool", name), zap.String("reason", msg))
		return ResultLine(id, textResult(msg, true))
	}
	if cat.err != nil {
		return cannot("the tool list at " + cat.path + " is missing or does not hold one JSON object.")
	}
	if cat.unusable {
		return cannot("the tool list at " + cat.path + " does not hold a usable tools list.")
	}
	decl := cat.declared(name)
	if len(decl) == 0 {
		return ErrorLine(id, codeMethodNotFound, "Tool not found: "+name, nil)
	}
	if len(decl) > 1 {
		return cannot("the tool list at " + cat.path + " declares it more than once.")
	}
	t := decl[0]
	if !t.hasSchema {
		return cannot("its entry in " + cat.path + " declares no inputSchema.")
	}
	snap := s.opt.Snapshot()
	if !snap.HasFunction("tool_" + name) {
		return ErrorLine(id, codeMethodNotFound, "Tool not found: "+name, nil)
	}
	if t.schemaErr != nil {
		return cannot("its inputSchema does not compile: " + t.schemaErr.Error())
	}
	if err := t.schema.Validate(cp.args); err != nil {
		s.log.Info("tool arguments rejected", zap.String("tool", name), zap.String("reason", err.Error()))
		return ResultLine(id, textResult(err.Error(), true))
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	defer func() { <-s.sem }()
	timeout := s.opt.DefaultTimeout
	if t.timeout > 0 {
		timeout = t.timeout
	}
	oc := s.opt.Runner.Call(ctx, supervisor.Request{
		ID: string(id), Tool: name, Args: cp.args, Snapshot: snap, Timeout: timeout,
	})
	if oc.Cancelled {
		return nil
	}
	text, isErr := oc.Result(name)
	text, fixed := validUTF8(text)
	if fixed {
		s.log.Warn("tool output is not valid UTF-8; invalid bytes replaced by U+FFFD", zap.String("tool", name))
	}
	return ResultLine(id, textResult(text, isErr))
}
