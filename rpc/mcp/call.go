package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Result is a finished tools/call: the CallToolResult object and whether
// it is an error result, known from how it was built (never re-parsed).
type Result struct {
	// Body is the CallToolResult when it was built whole (a tool's own
	// result, mcp-bashd call's answer); nil while doc holds it.
	Body    json.RawMessage
	IsError bool
	// doc is a result the server assembled (text, rich content), rendered
	// only into the line that answers the call.
	doc *body
}

// JSON is the CallToolResult as one JSON text.
func (r *Result) JSON() json.RawMessage {
	if r.doc != nil {
		return r.doc.AppendTo(make([]byte, 0, r.doc.Len()))
	}
	return r.Body
}

// response is the result as the answer to id. Tool-provided JSON (mcp_result,
// mcp_structured, a tools-dir result) may hold invalid UTF-8: such a result
// is re-printed, which repairs it.
func (r *Result) response(id json.RawMessage) transport.Response {
	switch {
	case r.doc != nil && r.doc.validUTF8():
		return transport.Response{ID: id, Body: r.doc}
	case r.doc != nil:
		return transport.Response{ID: id, Result: r.JSON()}
	}
	if utf8.Valid(r.Body) {
		return transport.Response{ID: id, Body: wire.Raw(r.Body)}
	}
	return transport.Response{ID: id, Result: r.Body}
}

// modern adds what every 2026 result carries (modernResult).
func (r *Result) modern(info json.RawMessage) {
	if r.doc == nil {
		r.Body = modernResult(r.Body, info, nil)
		return
	}
	// An assembled result never carries resultType or _meta of its own.
	m := modernMembers(nil, info, nil)
	r.doc.insertMembers(m[1 : len(m)-1])
}

// startCall starts a tools/call (startInFlight).
func (s *Server) startCall(c *conn, req *transport.Request) {
	s.startInFlight(c, req, func(ctx context.Context, req *transport.Request, held *bool) (transport.Response, bool) {
		id := req.Msg.ID
		res, err := s.runCall(ctx, toolCall{req: req, params: req.Msg.Params, held: held, conn: c})
		switch {
		case err != nil:
			return transport.Response{ID: id, Err: err}, true
		case res == nil:
			return transport.Response{}, false // cancelled: no response
		}
		if req.Era == transport.Modern {
			// The catalog the call read (Fresh published it): no second
			// look at the files for the same request.
			res.modern(s.src.Current().Config.ServerInfo())
		}
		return res.response(id), true
	})
}

// inFlightRun answers one in-flight request: its response, or false when
// it was cancelled and gets none. held, when run sets it, keeps the
// concurrency slot run took until the answer is written (slotStream).
type inFlightRun func(ctx context.Context, req *transport.Request, held *bool) (transport.Response, bool)

// startInFlight registers a request that runs bash (a tools/call, a
// resources/read, a prompts/get, a completion/complete) as in flight
// before returning, so a cancellation on the very next line finds it,
// then runs it concurrently with a context cancelled by the client, its
// departure or shutdown.
func (s *Server) startInFlight(c *conn, req *transport.Request, run inFlightRun) {
	id := req.Msg.ID
	key, _ := idKey(id)
	var ctx context.Context
	var cancel context.CancelCauseFunc
	var refused *wire.Error
	c.update(func(st *connState) {
		switch {
		case st.inflight[key] != nil:
			refused = wire.Errorf(wire.CodeInvalidRequest, "Invalid Request: id "+string(id)+" is already in flight")
		case s.pending.Load() >= int64(s.opt.MaxPending):
			refused = wire.Errorf(wire.CodeInternal, fmt.Sprintf("Server busy: %d tool calls are already running or waiting (%d per --max-concurrency slot; --max-concurrency is %d); retry later, or start mcp-bashd with a higher --max-concurrency",
				s.opt.MaxPending, s.opt.MaxPending/s.opt.MaxConcurrent, s.opt.MaxConcurrent))
		case !s.enter(c):
			refused = errClosing()
		default:
			ctx, cancel = context.WithCancelCause(s.base)
			st.inflight[key] = cancel
			s.pending.Add(1)
		}
	})
	if refused != nil {
		req.Out.Respond(transport.Response{ID: id, Err: refused})
		return
	}
	s.goEntered(c, func() {
		// The call keeps its concurrency slot until its answer is written
		// (or given up on): see slotStream.
		held := false
		own := *req
		own.Out = slotStream{Stream: req.Out, s: s, held: &held}
		req := &own
		defer func() {
			if held {
				<-s.sem
			}
			c.update(func(st *connState) { delete(st.inflight, key) })
			cancel(nil)
			s.pending.Add(-1)
		}()
		if req.Gone != nil {
			// HTTP: a client that drops the connection cancels its call.
			go func() {
				select {
				case <-req.Gone:
					cancel(supervisor.ErrCancelled)
				case <-ctx.Done():
				}
			}()
		}
		if r, ok := run(ctx, req, &held); ok {
			req.Out.Respond(r)
		} else {
			req.Out.Finish() // cancelled: no response
		}
	})
}

// Call runs one tool from Go, as a legacy-era tools/call (mcp-bashd
// call). When out is not nil it receives the tool's progress and every log
// record as notifications. A nil Result and nil error mean the call was
// cancelled.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage, out transport.Stream) (*Result, *wire.Error) {
	return s.CallAsking(ctx, name, args, out, nil)
}

// CallAsking is Call with the tool's questions (mcp_elicit, mcp_ask…)
// answered by ask — the command line's person at the terminal — instead
// of refused for want of a client (ask nil: Call).
func (s *Server) CallAsking(ctx context.Context, name string, args json.RawMessage, out transport.Stream,
	ask func(context.Context, []supervisor.AskItem) ([]json.RawMessage, error)) (*Result, *wire.Error) {
	params := object(field{"name", wire.Quote(name)}, field{"arguments", args})
	msg := &wire.Message{ID: json.RawMessage("1"), HasID: true, Method: "tools/call", Params: params}
	req := &transport.Request{Msg: msg, Out: out}
	if out != nil {
		req.Meta.ProgressToken = json.RawMessage(`"call"`)
		req.Session = transport.NewSession()
		req.Session.SetLevel(0)
	}
	res, err := s.runCall(ctx, toolCall{req: req, params: params, ask: ask})
	if res != nil {
		res.Body, res.doc = res.JSON(), nil
	}
	return res, err
}

// toolCall is one tools/call on its way through runCall.
type toolCall struct {
	req    *transport.Request
	params json.RawMessage
	// held, when set, keeps the concurrency slot run takes: run sets it,
	// and the caller gives the slot back once the answer is written.
	held *bool
	// mrtr answers the tool's asks in a 2026 request (mrtr.go); nil in
	// the session eras.
	mrtr *mrtrCall
	// events, when set, takes the tool's mcp_progress/mcp_log records
	// instead of the request's notifications (a task's, tasks.go).
	events func(supervisor.Event)
	// ask, when set, answers the tool's asks instead (a task's, tasks.go).
	ask func(ctx context.Context, reqs []supervisor.AskItem) ([]json.RawMessage, error)
	// conn is the connection the request came on (nil for Server.Call):
	// where what no longer fits on the request's own stream may go.
	conn *conn
}

// slotStream is the output of a call that may keep its slot until its
// answer is written, so the answers a slow client has not taken never
// outnumber the slots: once every slot waits for the client, no further
// call starts (and the reader, answering the calls refused beyond
// MaxPending, stops reading) until it reads. That moment is logged each
// time it comes.
type slotStream struct {
	transport.Stream
	s    *Server
	held *bool
}

// Unwrap is the stream under o (transport.RequesterOf).
func (o slotStream) Unwrap() transport.Stream { return o.Stream }

func (o slotStream) Respond(r transport.Response) {
	if !*o.held {
		o.Stream.Respond(r)
		return
	}
	if n := o.s.answering.Add(1); n == int64(cap(o.s.sem)) {
		o.s.log.Warn("every call slot waits for the client to read an answer", zap.Int64("slots", n))
	}
	o.Stream.Respond(r)
	o.s.answering.Add(-1)
}

// runCall applies the SDK's checks in its order and runs the tool. A
// protocol error comes back as the error; a refusal the SDK answered with
// an isError result comes back as that result; nil, nil means the call
// was cancelled.
// checkToolName refuses a name no tool can have.
func (s *Server) checkToolName(name string, modern bool) *wire.Error {
	if modern && s.SDK2026Dialect() {
		// A leading digit, which that SDK allowed, goes on to the
		// lookup as it did there (tool_1x is a valid function name).
		return sdk2026NameError(name)
	}
	if !catalog.ValidName.MatchString(name) {
		return wire.Errorf(wire.CodeInvalidParams, "Invalid tool name: "+name)
	}
	return nil
}

func (s *Server) runCall(ctx context.Context, tc toolCall) (*Result, *wire.Error) {
	modern := tc.req.Era == transport.Modern
	cp, perr := parseCallParams(tc.params)
	if perr != nil {
		return nil, perr
	}
	// What is validated must be what the tool reads: the validator keeps a
	// repeated key's last value, bash's regex idiom finds its first.
	if path, dup := wire.DuplicateKey(cp.args); dup {
		return nil, wire.Errorf(wire.CodeInvalidParams, "Invalid params: arguments"+path+" is given more than once; duplicate keys are refused because the tool could read either value")
	}
	name := cp.name
	if e := s.checkToolName(name, modern); e != nil {
		return nil, e
	}
	// The SDK answers an unknown tool -32601; the 2026 revision's spec
	// example is -32602, and that era has no SDK servers to keep.
	notFound := wire.Errorf(wire.CodeMethodNotFound, "Tool not found: "+name)
	if modern {
		notFound.Code = wire.CodeInvalidParams
	}
	cannot := func(why string) (*Result, *wire.Error) {
		msg := "Cannot validate arguments for " + name + ": " + why
		s.log.Error(validationFailed(name, msg), zap.String("tool", name), zap.String("reason", msg))
		return errorResult(msg), nil
	}
	cat := s.src.Fresh(ctx)
	t, found, why := cat.Lookup(name)
	switch {
	case !found:
		return nil, notFound
	case why != "":
		return cannot(why)
	case !t.HasSchema:
		return cannot("its entry in " + cat.Tools.Path + " declares no inputSchema.")
	}
	snap := s.opt.Snapshot()
	if t.Exe == "" && !snap.HasFunction("tool_"+name) {
		return nil, notFound
	}
	if modern {
		if e := checkModernCall(tc.req, t, cp.args); e != nil {
			return nil, e
		}
		// A retry's answers (inputResponses, requestState) are checked
		// before anything runs: a tampered state is refused outright.
		mc, e := newMRTR(s.states, tc.params, "tools/call", name, cp.args, tc.req.Meta.Caps)
		if e != nil {
			return nil, e
		}
		tc.mrtr = mc
	}
	if t.SandboxErr != nil {
		s.log.Error("tool call rejected: its limits are unusable", zap.String("tool", name), zap.Error(t.SandboxErr))
		return errorResult("Cannot run " + name + ": its " + catalog.SettingsKey + " entry is invalid: " + t.SandboxErr.Error() + "."), nil
	}
	if t.SchemaErr != nil {
		// schema.Compile's error is already the whole user-facing text.
		s.log.Error(validationFailed(name, t.SchemaErr.Error()), zap.String("tool", name), zap.Error(t.SchemaErr))
		return errorResult(t.SchemaErr.Error()), nil
	}
	if err := t.Schema.Validate(cp.args); err != nil {
		s.metrics.Rejected(name)
		s.log.Info(validationFailed(name, err.Error()), zap.String("tool", name), zap.String("reason", err.Error()))
		return errorResult(err.Error()), nil
	}
	asTask, ttl, terr := taskRequested(tc.req, t, tc.params)
	if terr != nil {
		return nil, terr
	}
	if asTask {
		return s.startTask(tc, cat.Config, t, snap, toolArgs(cp.args, cat.Config), ttl)
	}
	res := s.run(ctx, tc, cat.Config, t, snap, toolArgs(cp.args, cat.Config))
	if res != nil && res.IsError {
		if e := tc.mrtr.missingCapability("tool " + name); e != nil {
			return nil, e
		}
	}
	return res, nil
}

// toolArgs is the arguments JSON the tool receives in $1 (its before-tool
// hook and cancel hook too): the text the server's SDK handed it, which
// its jq had printed — compact, escapes decoded and numbers in jq's
// spelling (1e2 is 1E+2), so a tool that matches $1 as text sees what it
// saw there. bash-mcp-sdk's went through jq twice (`.params` then
// `.arguments`), the 2026 SDK's once (tojson). Arguments already in that
// form, the usual case, are passed on as they are, without a copy.
func toolArgs(args json.RawMessage, cfg *catalog.Config) json.RawMessage {
	passes := 2
	if cfg.DeclaresSupportedVersions() {
		passes = 1
	}
	return wire.Reprint(args, passes)
}

// run takes a concurrency slot and runs the tool with the declarations the
// call was checked against (cfg); nil when cancelled. The slot is given
// back when run returns, unless tc.held asks to keep it.
func (s *Server) run(ctx context.Context, tc toolCall, cfg *catalog.Config, t *catalog.Tool, snap *supervisor.Snapshot, args json.RawMessage) *Result {
	res, _ := s.runTool(ctx, tc, cfg, t, snap, args)
	return res
}

// runTool is run that also returns how the call ended.
func (s *Server) runTool(ctx context.Context, tc toolCall, cfg *catalog.Config, t *catalog.Tool, snap *supervisor.Snapshot, args json.RawMessage) (*Result, supervisor.Outcome) {
	if !s.takeSlot(ctx, tc) {
		if errors.Is(context.Cause(ctx), supervisor.ErrCancelled) {
			// Cancelled while it waited for a slot: it never started, so
			// only the SDK's closing line applies.
			id := string(tc.req.Msg.ID)
			s.log.Info(fmt.Sprintf("Cancelled tools/call %s (%s)", id, t.Name), zap.String("call_id", id), zap.String("tool", t.Name), zap.Bool("started", false))
		}
		return nil, supervisor.Outcome{Cancelled: true}
	}
	defer s.giveSlot(tc)
	timeout := s.opt.DefaultTimeout
	if t.Timeout > 0 {
		timeout = t.Timeout
	}
	s.metrics.Start()
	sdk2026 := cfg.DeclaresSupportedVersions()
	req := supervisor.Request{
		ID: string(tc.req.Msg.ID), Tool: t.Name, Args: args, Snapshot: snap, Timeout: timeout,
		Events: tc.events, Exe: t.Exe, Limits: t.Sandbox,
		Ask: s.callAsk(tc),
	}
	if req.Events == nil {
		req.Events = s.eventSink(ctx, tc.req, cfg)
	}
	if sdk2026 {
		req.Stderr = s.opt.ToolStderr
	}
	oc := s.opt.Runner.Call(ctx, req)
	if res, ok := tc.mrtr.ended(oc); ok {
		s.metrics.Finish(t.Name, "input_required", oc.Duration)
		return res, oc
	}
	// A bash error names the file that defined the function: the
	// snapshot calls source. Point it at the script, as under the SDK.
	oc.Output, oc.HookOutput = snap.MapLocations(oc.Output), snap.MapLocations(oc.HookOutput)
	res := s.toolResult(t, oc, sdk2026)
	outcome := "ok"
	switch {
	case oc.Cancelled:
		outcome = "cancelled"
	case oc.TimedOut:
		outcome = "timeout"
	case res.IsError:
		outcome = "error"
	}
	s.metrics.Finish(t.Name, outcome, oc.Duration)
	if oc.Cancelled {
		return nil, oc
	}
	return res, oc
}

// takeSlot takes a concurrency slot for tc; false when ctx ended first.
// When tc.held is set the slot is the caller's to give back once the
// answer is written (slotStream); otherwise giveSlot gives it back.
func (s *Server) takeSlot(ctx context.Context, tc toolCall) bool {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if tc.held != nil {
		*tc.held = true
	}
	return true
}

func (s *Server) giveSlot(tc toolCall) {
	if tc.held == nil {
		<-s.sem
	}
}

// checkModernCall applies the 2026 checks that need the tool's
// declaration: Mcp-Param-* headers (HTTP) and required client capabilities.
func checkModernCall(req *transport.Request, t *catalog.Tool, args json.RawMessage) *wire.Error {
	if req.Headers != nil && len(t.ParamHeaders) > 0 {
		if why := checkParamHeaders(req.Headers, t.ParamHeaders, args); why != "" {
			return wire.Errorf(wire.CodeHeaderMismatch, "Header mismatch: "+why)
		}
	}
	if t.Requires != nil {
		if missing := missingCaps(t.Requires, req.Meta.Caps); missing != nil {
			return &wire.Error{Code: wire.CodeMissingCapability, Message: "Missing required client capability for tool " + t.Name,
				Data: object(field{"requiredCapabilities", missing})}
		}
	}
	return nil
}

// callParams is a tools/call's params after the SDK's gates.
type callParams struct {
	name string
	args json.RawMessage
}

// parseCallParams applies the SDK's params rules: absent, null and false
// params count as {}; any other non-object is -32602.
func parseCallParams(params json.RawMessage) (callParams, *wire.Error) {
	cp := callParams{args: json.RawMessage(`{}`)} // "arguments" absent means {}
	switch wire.FirstByte(params) {
	case 0, 'n', 'f':
		return cp, nil
	case '{':
	default:
		return cp, wire.Errorf(wire.CodeInvalidParams, "Invalid params: expected an object")
	}
	ms, err := wire.SplitObject(params)
	if err != nil {
		return cp, wire.Errorf(wire.CodeInvalidParams, "Invalid params: expected an object")
	}
	for _, m := range ms {
		switch m.Key {
		case "name":
			var s string
			if json.Unmarshal(m.Val, &s) == nil {
				cp.name = s
			} else if b := wire.FirstByte(m.Val); b != 'n' && b != 'f' {
				cp.name = string(m.Val) // rendered as jq -r would: the JSON text
			}
		case "arguments":
			cp.args = m.Val // present null/false/... is validated, never coerced
		}
	}
	return cp, nil
}

// checkParamHeaders compares the Mcp-Param-<Name> headers of a 2026 HTTP
// tools/call with the arguments their schema marks with x-mcp-header:
// present argument ⇔ present header, and equal values (numbers compared
// numerically).
func checkParamHeaders(hd transport.Headers, headers map[string]string, args json.RawMessage) string {
	var argv map[string]json.RawMessage
	_ = json.Unmarshal(args, &argv)
	for prop, name := range headers {
		raw, present := argv[prop]
		if present && wire.FirstByte(raw) == 'n' {
			present = false
		}
		got, hasHeader := hd.Param(name)
		switch {
		case !present && !hasHeader:
			continue
		case !hasHeader:
			return "missing Mcp-Param-" + name + " header"
		case !present:
			return "Mcp-Param-" + name + " header given for an absent argument " + prop
		}
		if !paramMatches(got, raw) {
			return "Mcp-Param-" + name + " header does not match argument " + prop
		}
	}
	return ""
}

func paramMatches(header string, raw json.RawMessage) bool {
	switch wire.FirstByte(raw) {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil && s == header
	case 't', 'f':
		return string(wire.Compact(raw)) == header
	default:
		a, ok1 := new(big.Rat).SetString(header)
		b, ok2 := new(big.Rat).SetString(string(wire.Compact(raw)))
		return ok1 && ok2 && a.Cmp(b) == 0
	}
}

// missingCaps returns the client capabilities a tool requires that the
// request's clientCapabilities lack, as a ClientCapabilities object, or nil.
func missingCaps(required, have json.RawMessage) json.RawMessage {
	var req, got map[string]json.RawMessage
	if json.Unmarshal(required, &req) != nil {
		return nil
	}
	_ = json.Unmarshal(have, &got)
	missing := map[string]json.RawMessage{}
	for k, v := range req {
		if _, ok := got[k]; !ok {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return wire.Marshal(missing)
}

// validationFailed is the SDK's log sentence for arguments refused before
// the tool ran (operators grep it); the reason is also a field.
func validationFailed(tool, reason string) string {
	return "Tool " + tool + " argument validation failed: " + reason
}
