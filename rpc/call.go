package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// startCall registers the call as in flight before returning, so a
// cancellation on the very next line finds it, then runs it concurrently.
func (s *Server) startCall(id, params json.RawMessage, out sink) {
	key, _ := idKey(id)
	hint := out.hint()
	key = hint.scope + "|" + key
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
		if hint.done != nil {
			// HTTP: a client that drops the connection cancels its call.
			go func() {
				select {
				case <-hint.done:
					cancel(supervisor.ErrCancelled)
				case <-ctx.Done():
				}
			}()
		}
		line := s.call(ctx, id, params, out)
		if line != nil {
			out.respond(line)
		} else {
			out.finish()
		}
	}()
}

// call applies the SDK's checks in its order and runs the tool; nil means
// no response (the call was cancelled).
func (s *Server) call(ctx context.Context, id, params json.RawMessage, out sink) []byte {
	meta := parseMeta(params)
	modern := isModern("tools/call", meta, out.hint()) && s.config.get().modernEnabled()
	cp, perr := parseCallParams(params)
	if perr != nil {
		return ErrorLine(id, perr.code, perr.msg, nil)
	}
	name := cp.name
	if !toolNameRE.MatchString(name) {
		return ErrorLine(id, codeInvalidParams, "Invalid tool name: "+name, nil)
	}
	cat := s.tools.get()
	cfg := s.config.get()
	result := func(body json.RawMessage) []byte {
		if modern {
			body = modernResult(body, cfg.serverInfo(), "")
		}
		if !utf8.Valid(body) {
			// Tool-provided JSON (mcp_result, mcp_structured, a tools-dir
			// result) may hold invalid UTF-8: re-encoding repairs it.
			return ResultLine(id, body)
		}
		return resultLineTrusted(id, body)
	}
	// The SDK answers an unknown tool -32601; the 2026 revision's spec
	// example is -32602, and that era has no SDK servers to keep.
	notFound := func() []byte {
		code := codeMethodNotFound
		if modern {
			code = codeInvalidParams
		}
		return ErrorLine(id, code, "Tool not found: "+name, nil)
	}
	cannot := func(why string) []byte {
		msg := "Cannot validate arguments for " + name + ": " + why
		s.log.Error("tool call rejected", zap.String("tool", name), zap.String("reason", msg))
		return result(textResult(msg, true))
	}
	var decl []*tool
	if s.dir != nil {
		if d := s.dir.get(); d.err == nil && d.byName[name] != nil {
			decl = []*tool{d.byName[name]}
		}
	}
	if decl == nil && (s.dir == nil || s.opt.ToolsFile != "") {
		if cat.err != nil {
			return cannot("the tool list at " + cat.path + " is missing or does not hold one JSON object.")
		}
		if cat.unusable {
			return cannot("the tool list at " + cat.path + " does not hold a usable tools list.")
		}
		decl = cat.declared(name)
	}
	if len(decl) == 0 {
		return notFound()
	}
	if len(decl) > 1 {
		return cannot("the tool list at " + cat.path + " declares it more than once.")
	}
	t := decl[0]
	if !t.hasSchema {
		return cannot("its entry in " + cat.path + " declares no inputSchema.")
	}
	snap := s.opt.Snapshot()
	if t.exe == "" && !snap.HasFunction("tool_"+name) {
		return notFound()
	}
	if h := out.hint(); modern && h.header != nil && len(t.paramHeaders) > 0 {
		if why := checkParamHeaders(h.header, t.paramHeaders, cp.args); why != "" {
			return ErrorLine(id, codeHeaderMismatch, "Header mismatch: "+why, nil)
		}
	}
	if modern && t.requires != nil {
		if missing := missingCaps(t.requires, meta.caps); missing != nil {
			data := []byte(`{"requiredCapabilities":` + string(missing) + `}`)
			return ErrorLine(id, codeMissingCapability, "Missing required client capability for tool "+name, data)
		}
	}
	if t.schemaErr != nil {
		// schema.Compile's error is already the whole user-facing text.
		s.log.Error("tool call rejected", zap.String("tool", name), zap.Error(t.schemaErr))
		return result(textResult(t.schemaErr.Error(), true))
	}
	if err := t.schema.Validate(cp.args); err != nil {
		s.metrics.rejected(name)
		s.log.Info("tool arguments rejected", zap.String("tool", name), zap.String("reason", err.Error()))
		return result(textResult(err.Error(), true))
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
	s.metrics.start()
	oc := s.opt.Runner.Call(ctx, supervisor.Request{
		ID: string(id), Tool: name, Args: cp.args, Snapshot: snap, Timeout: timeout,
		Events: s.eventSink(ctx, meta, modern, cfg, out),
		Exe:    t.exe,
	})
	body, isErr := s.buildResult(name, t, oc)
	outcome := "ok"
	switch {
	case oc.Cancelled:
		outcome = "cancelled"
	case oc.TimedOut:
		outcome = "timeout"
	case isErr:
		outcome = "error"
	}
	s.metrics.finish(name, outcome, oc.Duration)
	if oc.Cancelled {
		return nil
	}
	return result(body)
}

// eventSink turns a tool's mcp_progress/mcp_log records into notifications
// for this request, or returns nil when the request can receive none.
func (s *Server) eventSink(ctx context.Context, meta reqMeta, modern bool, cfg *config, out sink) func(supervisor.Event) {
	threshold := -1
	if modern {
		if meta.hasLogLevel {
			threshold = levelRank(meta.logLevel)
		}
	} else if ss := out.hint().session; ss != nil {
		threshold = ss.threshold(cfg.declaresLogging())
	}
	token := meta.progressToken
	if token == nil && threshold < 0 {
		return nil
	}
	var last *big.Rat
	return func(ev supervisor.Event) {
		if ctx.Err() != nil {
			return // cancelled: nothing more for this request
		}
		switch ev.Kind {
		case "progress":
			if token == nil {
				return
			}
			// "The progress value MUST increase with each notification."
			cur, ok := new(big.Rat).SetString(string(ev.Progress))
			if !ok || (last != nil && cur.Cmp(last) <= 0) {
				s.log.Info("progress not increasing; dropped", zap.ByteString("progress", ev.Progress))
				return
			}
			last = cur
			var b bytes.Buffer
			b.WriteString(`{"progressToken":`)
			b.Write(token)
			b.WriteString(`,"progress":`)
			b.Write(ev.Progress)
			if ev.Total != nil {
				b.WriteString(`,"total":`)
				b.Write(ev.Total)
			}
			if ev.Message != "" {
				msg, _ := validUTF8(ev.Message)
				b.WriteString(`,"message":`)
				b.Write(mustJSON(msg))
			}
			b.WriteByte('}')
			out.notify(NotificationLine("notifications/progress", b.Bytes()))
		case "log":
			rank := levelRank(ev.Level)
			if threshold < 0 || rank < threshold {
				return
			}
			data, _ := validUTF8(ev.Data)
			params := `{"level":` + string(mustJSON(logLevels[rank])) + `,"logger":"mcp-bashd","data":` + string(mustJSON(data)) + `}`
			out.notify(NotificationLine("notifications/message", json.RawMessage(params)))
		}
	}
}
