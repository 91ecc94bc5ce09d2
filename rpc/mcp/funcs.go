package mcp

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// funcCall is one run of a resource, prompt or completion function:
// resource_NAME URI VARS_JSON, prompt_NAME ARGS_JSON, or complete_NAME
// ARGUMENT VALUE CONTEXT_JSON. It runs exactly as a tool does — through
// startInFlight (cancellable by notifications/cancelled, the client's
// departure or shutdown) and a concurrency slot, in its own process group
// with MCP_CALL_TMPDIR, the before-call and cancel hooks, the timeout and
// the lifeline (supervisor/funcs.go) — and its progress and log records
// reach the client as a tool's do.
type funcCall struct {
	fn      string
	argv    []string
	timeout time.Duration // the declaration's x-mcp-bashd timeout; 0: the default
	// mrtr answers the function's asks in a 2026 request (mrtr.go).
	mrtr *mrtrCall
}

// funcRun is what runs f in its slot and answers with shape's response
// once the function ended; a cancelled run gets no response.
func (c *session) funcRun(cfg *catalog.Config, f funcCall, shape func(supervisor.Outcome) transport.Response) inFlightRun {
	s := c.srv
	snap := s.opt.Snapshot()
	return func(tk *ticket, req *transport.Request) (transport.Response, bool) {
		oc, err := s.runFunc(tk.ctx, toolCall{req: req, tk: tk}, cfg, snap, f)
		switch {
		case cancelled(err):
			return transport.Response{}, false
		case err != nil:
			return transport.Response{ID: req.Msg.ID, Err: err}, true
		}
		return shape(oc), true
	}
}

// runFunc runs f in a concurrency slot (kept by the ticket until the
// answer is written); errCancelled when it was cancelled, the busy error
// for a batch member refused its slot.
func (s *Server) runFunc(ctx context.Context, tc toolCall, cfg *catalog.Config, snap *supervisor.Snapshot, f funcCall) (supervisor.Outcome, *wire.Error) {
	if err := tc.tk.takeSlot(ctx); err != nil {
		return supervisor.Outcome{}, err
	}
	timeout := s.opt.DefaultTimeout
	if f.timeout > 0 {
		timeout = f.timeout
	}
	s.metrics.Start()
	req := supervisor.Request{
		Kind: supervisor.DeclaredFunc, ID: string(tc.req.Msg.ID), Tool: f.fn, Func: f.fn, Argv: f.argv, Snapshot: snap, Timeout: timeout,
		Events: s.eventSink(ctx, tc.req, cfg),
	}
	if f.mrtr != nil {
		req.Ask = f.mrtr.Ask
	}
	oc := s.opt.Runner.Call(ctx, req)
	oc.Output, oc.HookOutput, oc.Stderr = snap.MapLocations(oc.Output), snap.MapLocations(oc.HookOutput), snap.MapLocations(oc.Stderr)
	for _, p := range oc.ContentProblems {
		s.log.Warn("content ignored", zap.String("function", f.fn), zap.String("problem", p))
	}
	outcome := "ok"
	switch {
	case oc.End == supervisor.Cancelled:
		outcome = "cancelled"
	case oc.End == supervisor.TimedOut:
		outcome = "timeout"
	case oc.End == supervisor.EndedToAsk:
		outcome = "input_required"
	case failed(oc):
		outcome = "error"
	}
	s.metrics.Finish(f.fn, outcome, oc.Duration)
	if oc.End == supervisor.Cancelled {
		return oc, errCancelled
	}
	return oc, nil
}

// failed says whether a function run did not end well: it could not start,
// timed out, ended inside (or was refused by) the before-call hook, or
// exited non-zero.
func failed(oc supervisor.Outcome) bool {
	_, isErr := outcomeText("", oc, false)
	return isErr
}

// errorText is the -32603 message of a failed run: the texts a failed tool
// gets (outcomeText, with its stderr), cut to errorTextCap bytes — an
// error message is read by people, not a channel for megabytes.
func errorText(fn string, oc supervisor.Outcome) string {
	parts, _ := outcomeText(fn, oc, false)
	// The texts are the tools' ("Tool x timed out"); this is not a tool.
	t := strings.TrimPrefix(strings.Join(parts, ""), "Tool ")
	if len(t) > errorTextCap {
		cut := errorTextCap
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut] + "\n[mcp-bashd: message truncated]"
	}
	return t
}

const errorTextCap = 4 << 10

// funcFailed is the JSON-RPC error answering a failed run.
func funcFailed(id []byte, fn string, oc supervisor.Outcome) transport.Response {
	return transport.Response{ID: id, Err: wire.Internal(errorText(fn, oc))}
}
