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

// decodeCall is tools/call's params decoder (parseCallParams).
func decodeCall(r *request) (callParams, *wire.Error) { return parseCallParams(r.Msg.Params) }

// callTool is what runs a tools/call in its slot: every check that needs
// the tools directory or the tool's declaration runs there (runCall).
func (c *session) callTool(r *request, p callParams) (inFlightRun, *wire.Error) {
	s := c.srv
	return func(tk *ticket, req *transport.Request) (transport.Response, bool) {
		id := req.Msg.ID
		res, err := s.runCall(tk.ctx, toolCall{req: req, p: p, caps: r.caps, tk: tk, conn: c})
		switch {
		case cancelled(err):
			return transport.Response{}, false // cancelled: no response
		case err != nil:
			return transport.Response{ID: id, Err: err}, true
		}
		if req.Era == transport.Modern {
			// The catalog the call read (Fresh published it): no second
			// look at the files for the same request.
			res.modern(s.src.Current().Config.ServerInfo())
		}
		return res.response(id), true
	}, nil
}

// inFlightRun answers one in-flight request: its response, or false when
// it was cancelled and gets none. The slot it takes through tk is kept
// until the answer is written (ticket.answered).
type inFlightRun func(tk *ticket, req *transport.Request) (transport.Response, bool)

// startInFlight admits a request that runs bash (a tools/call, a
// resources/read, a prompts/get, a completion/complete) before returning,
// so a cancellation on the very next line finds it, then runs it
// concurrently with a context cancelled by the client, its departure or
// shutdown.
func (c *session) startInFlight(req *transport.Request, run inFlightRun) {
	tk, refused := c.admit(req)
	if refused != nil {
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: refused})
		return
	}
	go func() {
		defer tk.end()
		if req.Gone != nil {
			// HTTP: a client that drops the connection cancels its call.
			go func() {
				select {
				case <-req.Gone:
					tk.stop(supervisor.ErrCancelled)
				case <-tk.ctx.Done():
				}
			}()
		}
		if r, ok := run(tk, req); ok {
			tk.answered(req.Out, r)
		} else if r, ok := c.srv.endedByShutdown(tk.ctx, req); ok {
			tk.answered(req.Out, r)
		} else {
			req.Out.Finish() // cancelled: no response
		}
	}()
}

// endedByShutdown answers a request that shutdown ended (the drain ran
// out before it finished): it was accepted, so it gets exactly one answer,
// the error saying why — only a client's own cancellation means none —
// and the log names it at WARN.
func (s *Server) endedByShutdown(ctx context.Context, req *transport.Request) (transport.Response, bool) {
	if !errors.Is(context.Cause(ctx), supervisor.ErrShutdown) {
		return transport.Response{}, false
	}
	s.log.Warn("Server is shutting down: a request still running was ended", zap.String("call_id", string(req.Msg.ID)), zap.String("method", req.Msg.Method))
	return transport.Response{ID: req.Msg.ID, Err: errClosing()}, true
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
	p, perr := parseCallParams(params)
	if perr != nil {
		return nil, perr
	}
	req := &transport.Request{Msg: msg, Out: out}
	if out != nil {
		req.Meta.ProgressToken = json.RawMessage(`"call"`)
		req.Session = transport.NewSession()
		req.Session.SetLevel(0)
	}
	res, err := s.runCall(ctx, toolCall{req: req, p: p, tk: &ticket{s: s}, ask: ask})
	if cancelled(err) {
		return nil, nil
	}
	if res != nil {
		res.Body, res.doc = res.JSON(), nil
	}
	return res, err
}

// toolCall is one tools/call on its way through runCall and runTool —
// the call context: the request, its params decoded once, its _meta's
// client capabilities (2026), its admission, and where its tool's asks
// and events go.
type toolCall struct {
	req  *transport.Request
	p    callParams
	caps map[string]json.RawMessage
	// tk is the call's admission: the slot it takes is given back when
	// the tool ends unless the call writes an answer (tk.c is set), which
	// keeps it until then.
	tk *ticket
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
	conn *session
}

// checkToolName refuses a name no tool can have.
func (s *Server) checkToolName(name string, modern bool) *wire.Error {
	if modern && s.SDK2026Dialect() {
		// A leading digit, which that SDK allowed, goes on to the
		// lookup as it did there (tool_1x is a valid function name).
		return sdk2026NameError(name)
	}
	if !catalog.ValidName.MatchString(name) {
		return wire.NewError(wire.CodeInvalidParams, "Invalid tool name: "+name)
	}
	return nil
}

// runCall applies the SDK's checks in its order and runs the tool. A
// protocol error comes back as the error; a refusal the SDK answered with
// an isError result comes back as that result; errCancelled means the
// call was cancelled and gets no answer.
func (s *Server) runCall(ctx context.Context, tc toolCall) (*Result, *wire.Error) {
	modern, cp := tc.req.Era == transport.Modern, tc.p
	// What is validated must be what the tool reads: the validator keeps a
	// repeated key's last value, bash's regex idiom finds its first.
	if path, dup := wire.DuplicateKey(cp.args); dup {
		return nil, wire.InvalidParams("arguments" + path + " is given more than once; duplicate keys are refused because the tool could read either value")
	}
	name := cp.name
	if e := s.checkToolName(name, modern); e != nil {
		return nil, e
	}
	// The SDK answers an unknown tool -32601; the 2026 revision's spec
	// example is -32602, and that era has no SDK servers to keep.
	notFound := wire.NewError(wire.CodeMethodNotFound, "Tool not found: "+name)
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
		if e := checkModernCall(tc, t); e != nil {
			return nil, e
		}
		// A retry's answers (inputResponses, requestState) are checked
		// before anything runs: a tampered state is refused outright.
		mc, e := newMRTR(s.states, cp.rounds, "tools/call", name, cp.args, tc.caps)
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
	asTask, ttl, terr := taskRequested(tc, t)
	if terr != nil {
		return nil, terr
	}
	if asTask {
		return s.startTask(tc, cat.Config, t, snap, toolArgs(cp.args, cat.Config), ttl)
	}
	res, _, err := s.runTool(ctx, tc, cat.Config, t, snap, toolArgs(cp.args, cat.Config))
	if err != nil {
		return nil, err
	}
	if res.IsError {
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

// runTool takes a concurrency slot and runs the tool with the
// declarations the call was checked against (cfg), returning its result
// and how it ended; errCancelled when it was cancelled (no result), the
// busy error for a batch member refused its slot. The slot is given back
// when runTool returns unless tc's ticket writes an answer, which keeps
// it until then.
func (s *Server) runTool(ctx context.Context, tc toolCall, cfg *catalog.Config, t *catalog.Tool, snap *supervisor.Snapshot, args json.RawMessage) (*Result, supervisor.Outcome, *wire.Error) {
	if err := tc.tk.takeSlot(ctx); err != nil {
		if cancelled(err) && errors.Is(context.Cause(ctx), supervisor.ErrCancelled) {
			// Cancelled while it waited for a slot: it never started, so
			// only the SDK's closing line applies.
			id := string(tc.req.Msg.ID)
			s.log.Info(fmt.Sprintf("Cancelled tools/call %s (%s)", id, t.Name), zap.String("call_id", id), zap.String("tool", t.Name), zap.Bool("started", false))
		}
		return nil, supervisor.Outcome{End: supervisor.Cancelled}, err
	}
	if tc.tk.c == nil {
		defer tc.tk.giveSlot()
	}
	timeout := s.opt.DefaultTimeout
	if t.Timeout > 0 {
		timeout = t.Timeout
	}
	s.metrics.Start()
	sdk2026 := cfg.DeclaresSupportedVersions()
	kind := supervisor.ToolFunc
	if t.Exe != "" {
		kind = supervisor.ToolExe
	}
	req := supervisor.Request{
		Kind: kind, ID: string(tc.req.Msg.ID), Tool: t.Name, Args: args, Snapshot: snap, Timeout: timeout,
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
		return res, oc, nil
	}
	// A bash error names the file that defined the function: the
	// snapshot calls source. Point it at the script, as under the SDK.
	oc.Output, oc.HookOutput = snap.MapLocations(oc.Output), snap.MapLocations(oc.HookOutput)
	res := s.toolResult(t, oc, sdk2026)
	outcome := "ok"
	switch {
	case oc.End == supervisor.Cancelled:
		outcome = "cancelled"
	case oc.End == supervisor.TimedOut:
		outcome = "timeout"
	case res.IsError:
		outcome = "error"
	}
	s.metrics.Finish(t.Name, outcome, oc.Duration)
	if oc.End == supervisor.Cancelled {
		return nil, oc, errCancelled
	}
	return res, oc, nil
}

// checkModernCall applies the 2026 checks that need the tool's
// declaration: Mcp-Param-* headers (HTTP) and required client capabilities.
func checkModernCall(tc toolCall, t *catalog.Tool) *wire.Error {
	if tc.req.Headers != nil && len(t.ParamHeaders) > 0 {
		if why := checkParamHeaders(tc.req.Headers, t.ParamHeaders, tc.p.args); why != "" {
			return wire.HeaderMismatch(why)
		}
	}
	if t.Requires != nil {
		if missing := missingCaps(t.Requires, tc.caps); missing != nil {
			return wire.MissingCapability(" for tool "+t.Name, missing)
		}
	}
	return nil
}

// callParams are a tools/call's params, decoded once (parseCallParams)
// and passed down in the call context: the tool's name and arguments,
// 2025-11-25's params.task, and a 2026 retry's rounds.
type callParams struct {
	name string
	args json.RawMessage
	task json.RawMessage // params.task as written; nil when absent
	rounds
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
		return cp, wire.InvalidParams("expected an object")
	}
	ms, err := wire.SplitObject(params)
	if err != nil {
		return cp, wire.InvalidParams("expected an object")
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
		case "task":
			cp.task = m.Val
		case "requestState":
			cp.state = m.Val
		case "inputResponses":
			cp.responses = m.Val
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
func missingCaps(required json.RawMessage, have map[string]json.RawMessage) json.RawMessage {
	var req map[string]json.RawMessage
	if json.Unmarshal(required, &req) != nil {
		return nil
	}
	missing := map[string]json.RawMessage{}
	for k, v := range req {
		if _, ok := have[k]; !ok {
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
