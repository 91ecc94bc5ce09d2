package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/sandbox"
)

// Why a call is being stopped before it returned. They are the causes a
// caller attaches to the call's context (context.WithCancelCause).
var (
	// ErrCancelled: the client sent notifications/cancelled (or went away).
	ErrCancelled = errors.New("cancelled by the client")
	// ErrShutdown: the daemon is going down; cancel hooks get "" as args.
	ErrShutdown = errors.New("server shutting down")
)

// Request is one tool call.
type Request struct {
	Kind Kind   // what runs: tool_TOOL, the executable Exe, or the function Func
	ID   string // the JSON-RPC id as written, for logs
	Tool string // validated name: [a-zA-Z_][a-zA-Z0-9_]*
	Args []byte // arguments JSON, exactly as the tool receives it in $1
	// Snapshot is the server state the call runs with; nil: Current(),
	// read once when the call starts (its cancel hook uses the same).
	Snapshot *Snapshot
	Timeout  time.Duration // 0: none
	// Events, when set, receives the notifications the tool asks for
	// (mcp_progress, mcp_log) while it runs, in order, from one goroutine.
	Events func(Event)
	// Exe is the --tools-dir executable of a ToolExe request, run as
	// `EXE TOOL ARGS` instead of the bash function tool_TOOL.
	Exe string
	// Limits are the tool's own sandbox (over Config.Limits); nil: none.
	Limits *sandbox.Spec
	// Func is the bash function of a DeclaredFunc request, run instead of
	// tool_TOOL: a resource, prompt or completion function (funcs.go),
	// called with Argv as its positional arguments. Tool is then Func, for
	// logs and ps.
	Func string
	Argv []string
	// Stderr, when set, is where a bash function tool's stderr goes
	// instead of joining its output (the before-tool hook's stays in its
	// own capture): the 2026 bash SDK captured a tool's stdout only, and
	// its stderr reached the server's own.
	Stderr *os.File
	// Ask, when set, asks the client what the tool's mcp_ask helpers ask
	// (ask.go): called on its own goroutine per ask record, with a context
	// that is done when the call ends (cancel, timeout, exit); it must
	// return then. An error's message reaches the helper's stderr; one
	// that wraps ErrEndCall ends the call instead (EndedToAsk). Nil:
	// every helper fails with "this call cannot ask the client".
	Ask func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error)
	// ctl is the control directory of the forked process running the
	// call, where its args and values are (callWarm); "": its root.
	ctl string
}

// Kind is what a Request runs.
type Kind uint8

const (
	// ToolFunc runs the bash function tool_TOOL with the arguments JSON.
	ToolFunc Kind = iota
	// ToolExe runs the --tools-dir executable Exe as `EXE TOOL ARGS`.
	ToolExe
	// DeclaredFunc runs the bash function Func (a resource's, a prompt's,
	// a completion's) with Argv.
	DeclaredFunc
)

// End is how a call ended: the one status of an Outcome, as an
// os/exec ExitError's ProcessState says how a process ended.
type End uint8

const (
	// Exited: the call's shell ended by itself; ExitCode, Signal, Phase
	// and HookStatus say how.
	Exited End = iota
	// NotRun: the call never ran; Outcome.Err says why (errors.Is
	// ErrCallDir when its call directory could not be made).
	NotRun
	// Cancelled: stopped for ErrCancelled or ErrShutdown; no response is
	// sent.
	Cancelled
	// TimedOut: stopped when its timeout (Outcome.Timeout) passed.
	TimedOut
	// EndedToAsk: an Ask returned ErrEndCall and the call's group was
	// killed; its output is not a result.
	EndedToAsk
)

// ErrCallDir marks a NotRun outcome whose call directory could not be
// created (errors.Is): its result names no path, the log does.
var ErrCallDir = errors.New("the call directory could not be created")

// callDirError is a setup error of the call directory: it reads as the
// error it wraps, and is ErrCallDir.
type callDirError struct{ err error }

func (e callDirError) Error() string        { return e.err.Error() }
func (e callDirError) Unwrap() error        { return e.err }
func (e callDirError) Is(target error) bool { return target == ErrCallDir }

// notRun is the outcome of a call that never ran.
func notRun(err error) Outcome { return Outcome{End: NotRun, Err: err} }

// Outcome is how a call ended (End, with Err when it never ran) and what
// it left: its output, its exit, and what it returned through the shim's
// content helpers.
type Outcome struct {
	End        End
	Err        error         // NotRun: why
	Timeout    time.Duration // TimedOut: the timeout that passed
	Output     []byte        // combined stdout+stderr, at most the cap (a tools-dir executable: stdout)
	Stderr     []byte        // a tools-dir executable's stderr (logged; joins the text of a failure)
	Truncated  int64         // bytes cut off the end (0: none)
	OutputCap  int64         // the cap the call ran with (<= 0: none); it bounds the result's escaped text too
	ExitCode   int
	Signal     syscall.Signal // non-zero when the tool's shell died by a signal
	Phase      string         // "tool", "hook" (ended inside the before-tool hook), "refused"
	HookStatus int            // the hook's return status when Phase is "refused"
	HookOutput []byte
	// OutputErr: the tool ran but its output could not be read back (not
	// an empty output: the result must say so).
	OutputErr error
	Duration  time.Duration
	// What the tool returned through the shim's content helpers.
	Items           []Item
	Structured      json.RawMessage // mcp_structured
	FullResult      json.RawMessage // mcp_result: the whole CallToolResult
	ContentProblems []string
	// Limits says which of the call's limits bit, one sentence each
	// ("stopped: memory limit 256 MiB reached"); nil when none did.
	Limits []string
}

// Call runs req to completion, cancellation or timeout. It returns only
// once the call's process group is gone and its root removed.
func (s *Supervisor) Call(ctx context.Context, req Request) Outcome {
	if !s.enter() {
		return notRun(errClosed)
	}
	defer s.users.Done()
	start := time.Now()
	s.stats.Calls.Add(1)
	req.Snapshot = s.holdSnapshot(req.Snapshot)
	defer req.Snapshot.release()
	log := s.log.With(zap.String("call_id", req.ID), zap.String("tool", req.Tool))
	o := s.call(ctx, req, log)
	o.Duration = time.Since(start)
	fields := []zap.Field{zap.Duration("duration", o.Duration), zap.Int("exit", o.ExitCode)}
	// The events the SDK logged are logged with its sentences, which
	// operators grep for; their variable parts are fields as well.
	switch {
	case o.End == NotRun:
		s.logNotRun(log, req.Tool, o.Err)
	case o.Phase == phaseRefused:
		log.Error(fmt.Sprintf("before-tool hook refused tool %s (status %d)", req.Tool, o.HookStatus), zap.Int("status", o.HookStatus))
	case o.Phase == phaseHook && o.Signal != 0:
		log.Error(fmt.Sprintf("Before-tool hook mcp_before_tool_call for tool %s was killed (status %d)", req.Tool, o.ExitCode),
			zap.Int("status", o.ExitCode), zap.String("signal", unix.SignalName(o.Signal)))
	case o.Phase == phaseHook:
		log.Error(fmt.Sprintf("Before-tool hook mcp_before_tool_call for tool %s ended the call (status %d)", req.Tool, o.ExitCode),
			zap.Int("status", o.ExitCode))
	case o.End == Cancelled && errors.Is(context.Cause(ctx), ErrShutdown):
		// stop logged "Stopped in-flight tool …", the SDK's line.
	case o.End == Cancelled:
		// After the call's directory is gone, as the SDK logged it.
		log.Info(fmt.Sprintf("Cancelled tools/call %s (%s)", req.ID, req.Tool), fields...)
	case o.End == EndedToAsk:
		log.Info("call ended to ask the client", fields...)
	case o.End == TimedOut:
		log.Warn("call timed out", append(fields, zap.Duration("timeout", o.Timeout))...)
	case o.Signal != 0:
		// The result text stays the SDK's ("Error executing x: ", which
		// users' tests compare); the person reading stderr learns why.
		log.Warn(failed(req.Tool, o.ExitCode), append(fields, zap.String("signal", unix.SignalName(o.Signal)))...)
	case o.ExitCode != 0 && len(bytes.TrimSpace(o.Output)) == 0 && len(bytes.TrimSpace(o.Stderr)) == 0:
		// Nothing in the result says why: worth a line on stderr.
		log.Warn(failed(req.Tool, o.ExitCode), append(fields, zap.Bool("no_output", true))...)
	case o.ExitCode != 0:
		// The result carries the output; the log file keeps the SDK's line.
		log.Info(failed(req.Tool, o.ExitCode), fields...)
	default:
		log.Info("call finished", fields...)
	}
	return o
}

// logNotRun logs why a call never ran: for its directory, with the SDK's
// sentences (CONTRACT 18).
func (s *Supervisor) logNotRun(log *zap.Logger, tool string, err error) {
	var re *rootError
	switch {
	case errors.As(err, &re) && re.tmp:
		log.Error(fmt.Sprintf("Tool %s not run: cannot create MCP_CALL_TMPDIR %s: %v", tool, re.path, re.err),
			zap.String("path", re.path), zap.Error(re.err))
	case errors.As(err, &re):
		log.Error(fmt.Sprintf("Tool %s not run: cannot create its call directory in %s: %v", tool, re.path, re.err),
			zap.String("path", re.path), zap.Error(re.err))
	default:
		log.Error(fmt.Sprintf("Tool %s not run: %v", tool, err), zap.Error(err))
	}
}

func (s *Supervisor) call(ctx context.Context, req Request, log *zap.Logger) Outcome {
	if s.eligible(req) {
		w, done := s.warm.take(req)
		defer done()
		if w == nil {
			w = s.warm.forkFor(req)
		}
		if w != nil {
			if o, ok := s.callWarm(ctx, req, w, log); ok {
				return o
			}
		}
	}
	root, err := s.newRoot(req.argsFile(), req.values(), log)
	if err != nil {
		return notRun(callDirError{err})
	}
	defer s.removeRoot(root, log)
	out, err := openAppendFD(root.Out())
	if err == nil {
		if err = s.reserveOut(out); err != nil {
			closeFD(&out)
		}
	}
	if err != nil {
		return notRun(callDirError{&rootError{path: s.base, err: fmt.Errorf("create output file: %w", err)}})
	}
	defer closeFD(&out)
	mode, errOut := modeCall, out
	if req.Kind == ToolExe {
		mode = modeExec
	}
	if req.splitsStderr() {
		if errOut, err = openAppendFD(root.Stderr()); err != nil {
			return notRun(fmt.Errorf("create stderr file: %w", err))
		}
		defer closeFD(&errOut)
	} else if req.Stderr != nil {
		errOut = int(req.Stderr.Fd())
	}
	box, err := s.box.Prepare(req.Limits, s.sandboxPaths(req, root))
	if err != nil {
		return notRun(err)
	}
	pid, done, err := s.startServerCode(mode, req, root, out, errOut, box)
	closeFD(&out)
	if err != nil {
		box.Finish(0)
		return notRun(err)
	}
	return s.run(ctx, req, root, pid, done, box, log)
}

// callWarm runs req in the warm process w. false: w could not be handed
// the call (it is retired; the caller starts a cold process instead).
func (s *Supervisor) callWarm(ctx context.Context, req Request, w *warmProc, log *zap.Logger) (Outcome, bool) {
	root, err := s.handOver(ctx, w, req)
	if err != nil {
		// The cold path takes over: a call cancelled before its warm
		// process could be handed it is then stopped as any other.
		switch {
		case errors.Is(err, errWarmUnusable):
			log.Info("warm call process not used", zap.Error(err))
		case !errors.Is(err, errWarmGone) && !errors.Is(err, errHandOverCancelled) && !errors.Is(err, errTmpFull):
			log.Warn("warm call process not used", zap.Error(err))
		}
		if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, errNoArgv) {
			s.warm.turnOff(err)
		}
		s.finishWarm(w, nil)
		return Outcome{}, false
	}
	defer s.releaseWarm(w)
	defer w.removeCtl()
	defer s.removeRoot(root, log)
	req.ctl = w.ctl
	o := s.run(ctx, req, root, w.pid, w.done, nil, log)
	// Killed between the hand-over's check and reading its call: the tool
	// never ran, and its empty "Error executing" would be no answer. (The
	// message's last byte, a NUL, is read only by a bash before 5.)
	unread := w.unread()
	closeFD(&w.peek)
	if unread > 1 && ctx.Err() == nil {
		log.Info("warm call process ended before it read its call; the call runs cold", zap.Int("pid", w.pid))
		return Outcome{}, false
	}
	return o, true
}

// run follows a started call to its end and reads its outcome.
func (s *Supervisor) run(ctx context.Context, req Request, root callRoot, pid int, done <-chan exitInfo, box *sandbox.Call, log *zap.Logger) Outcome {
	log = log.With(zap.Int("pgid", pid))
	asks := newAsker(ctx, req, root, log)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go tailEvents(root.Events(), stop, func(ev Event) {
		switch {
		case ev.ask != nil:
			asks.serve(*ev.ask)
		case req.Events != nil:
			req.Events(ev)
		}
	}, &wg)
	defer func() { close(stop); wg.Wait(); asks.close() }()
	ei, o := s.await(ctx, req, root, pid, done, asks, log)
	asks.cancel(errCallOver) // the group is gone: nobody is left to answer
	// Before the root goes: escapees still running in the call's cgroup
	// may be writing into it.
	o.Limits = box.Finish(ei.status)
	return s.outcome(o, ei, req, root, log)
}

// await waits for the call's group leader, stopping the call when ctx ends
// or its timeout passes; o says which happened.
func (s *Supervisor) await(ctx context.Context, req Request, root callRoot, pid int, done <-chan exitInfo, asks *asker, log *zap.Logger) (ei exitInfo, o Outcome) {
	var timeout <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case ei = <-done:
	case <-ctx.Done():
		o.End = Cancelled
		why := stopCancel
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, ErrShutdown):
			why = stopShutdown
		case errors.Is(cause, ErrCancelled):
			s.stats.Cancelled.Add(1)
		}
		ei = s.stop(req, root, pid, done, why, log)
	case <-timeout:
		o.End, o.Timeout = TimedOut, req.Timeout
		s.stats.TimedOut.Add(1)
		asks.cancel(errCallTimedOut) // a helper waiting for the client fails before the TERM
		ei = s.stop(req, root, pid, done, stopTimeout, log)
	case <-asks.ended:
		// The tool is run again from the start later: no cancel hook, no
		// grace. The leader is registered until reaped, so the group id
		// is still this call's.
		o.End = EndedToAsk
		asks.cancel(ErrEndCall)
		s.reaper.signalGroup(pid, unix.SIGKILL)
		ei = <-done
	}
	return ei, o
}

// Why a running call is stopped.
type stopCause int

const (
	stopCancel   stopCause = iota // the client cancelled it (or went away)
	stopShutdown                  // the daemon is going down
	stopTimeout                   // its timeout passed
)

// outcome reads what a finished call left in its root.
func (s *Supervisor) outcome(o Outcome, ei exitInfo, req Request, root callRoot, log *zap.Logger) Outcome {
	o.Output, o.Truncated, o.OutputErr = readOutput(root.Out(), s.cfg.OutputCap, log)
	o.OutputCap = s.cfg.OutputCap
	if req.splitsStderr() {
		o.Stderr, _, _ = readOutput(root.Stderr(), 64<<10, log)
		if len(o.Stderr) > 0 {
			log.Info("tool stderr", zap.ByteString("stderr", o.Stderr))
		}
	}
	o.Phase, o.HookStatus = root.readPhase()
	if o.Phase != phaseTool {
		o.HookOutput, _, _ = readOutput(root.Hook(), s.cfg.OutputCap, log)
	}
	if ei.status.Signaled() {
		o.Signal = ei.status.Signal()
		o.ExitCode = 128 + int(o.Signal)
	} else {
		o.ExitCode = ei.status.ExitStatus()
	}
	// One budget for the result: what the output left of the cap.
	budget := int64(-1)
	if s.cfg.OutputCap > 0 {
		budget = max(0, s.cfg.OutputCap-int64(len(o.Output)))
	}
	o.Items, o.Structured, o.FullResult, o.ContentProblems = readContent(root, budget)
	return o
}

// readOutput reads at most max bytes (<= 0: no cap) of a root's output file
// and reports how many more there were. A file the tool replaced with
// something that is not a regular file is read as empty, and logged; so
// is one that could not be read (err: a full descriptor table, say), which
// the caller must not take for a tool that printed nothing.
func readOutput(path string, max int64, log *zap.Logger) ([]byte, int64, error) {
	if max <= 0 {
		max = -1
	}
	b, more, err := readRegular(path, max)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("call output not read", zap.Error(err))
		if !errors.Is(err, errNotRegular) && !errors.Is(err, unix.ELOOP) {
			return b, more, err
		}
	}
	return b, more, nil
}

// stop is the cancel path: the tool's cancel hook first (own group, its
// budget), then SIGTERM+SIGCONT to the call's group, then the grace: until
// no member of the group but its sentinel is alive — not only the tool's
// shell: a child that cleans up on TERM gets its time too — or the grace
// has passed. Then SIGKILL to whatever is left (logged when something
// other than the sentinel was). A group that dies on SIGTERM is reaped at
// once.
func (s *Supervisor) stop(req Request, root callRoot, pid int, done <-chan exitInfo, why stopCause, log *zap.Logger) exitInfo {
	switch why {
	case stopCancel:
		log.Info(fmt.Sprintf("Cancelling in-flight tools/call %s (%s)", req.ID, req.Tool))
	case stopTimeout:
		log.Info("stopping the call: its timeout passed", zap.Duration("timeout", req.Timeout))
	}
	if req.Snapshot.HasFunction(req.cancelHook()) {
		if req.ctl != "" && why != stopShutdown {
			// The hook is spawned in the root and reads the call's args
			// and values there (a forked call has them elsewhere).
			ctl := callRoot(req.ctl)
			if b, err := os.ReadFile(ctl.Args()); err == nil {
				_ = writeNew(root.Args(), b)
			}
			if b, err := os.ReadFile(ctl.Values()); err == nil {
				_ = writeNew(root.Values(), b)
			}
		}
		hookReq := req
		if why == stopShutdown {
			// The seed: "A signal that tears the server down passes an
			// empty string instead".
			hookReq.Args = nil
			_ = os.WriteFile(root.Args(), nil, 0o600)
			// mcp_arg finds nothing either (unlink: the tool may have put
			// a symlink there, which a write would follow).
			_ = unix.Unlink(root.Values())
		}
		s.runBounded(modeCancel, hookReq, root, int(s.devnullFD), int(s.devnullFD), log)
	}
	select {
	case ei := <-done:
		return ei // finished while the hook ran
	default:
	}
	// The sentinel is found before the TERM: once the leader is gone it
	// pins the group (reaper.hold) and is the one member not waited for.
	sentinel := s.sentinelOf(pid)
	if sentinel == 0 {
		// A forked call has none (keeper_linux.go), and a tool may have
		// killed its own: a pin takes its place for the grace.
		sentinel = s.pinGroup(pid)
	}
	exited, ok := s.reaper.hold(pid, sentinel)
	if !ok {
		return <-done
	}
	s.reaper.signalGroup(pid, unix.SIGTERM)
	// A stopped group cannot act on SIGTERM until continued.
	s.reaper.signalGroup(pid, unix.SIGCONT)
	survivors := s.graceWait(pid, sentinel, exited)
	if s.reaper.signalGroup(pid, unix.SIGKILL) && survivors {
		s.stats.Killed.Add(1)
		log.Warn(fmt.Sprintf("Tool %s ignored SIGTERM; process group killed", req.Tool), zap.Duration("grace", s.cfg.Grace), zap.Int("pgid", pid))
	}
	ei := <-done
	if why == stopShutdown {
		log.Info(fmt.Sprintf("Stopped in-flight tool %s (group %d) on shutdown", req.Tool, pid))
	}
	return ei
}

// graceMaxPoll bounds the wait between two looks at a group whose leader
// has exited while other members live on (the SDK looked every 100 ms).
const graceMaxPoll = 50 * time.Millisecond

// graceWait waits, for at most the grace, until no member of group pgid
// but its sentinel is alive, and reports whether one still is. While the
// leader runs the group is not empty, so it waits for the leader's exit
// (exited) first, then looks at the group's members.
func (s *Supervisor) graceWait(pgid, sentinel int, exited <-chan struct{}) bool {
	grace := time.NewTimer(s.cfg.Grace)
	defer grace.Stop()
	select {
	case <-exited:
	case <-grace.C:
		return s.survivors(pgid, sentinel)
	}
	for delay := time.Millisecond; s.survivors(pgid, sentinel); delay = min(2*delay, graceMaxPoll) {
		tick := time.NewTimer(delay)
		select {
		case <-grace.C:
			tick.Stop()
			return s.survivors(pgid, sentinel)
		case <-tick.C:
		}
	}
	return false
}

// survivors reports whether group pgid, still registered, has a live
// member other than sentinel; a scan that fails counts as yes.
func (s *Supervisor) survivors(pgid, sentinel int) bool {
	if !s.reaper.registered(pgid) {
		return false // contained when its leader exited: nothing is left
	}
	live, err := liveMember(pgid, sentinel)
	return live || err != nil
}

// RunExitTrap runs the EXIT trap the server script had installed when it
// was loaded (sn, or the current snapshot when sn is nil): stdin /dev/null,
// stdout to our stderr (stdout is protocol), the hook budget, failures
// logged. A script without one costs no process.
func (s *Supervisor) RunExitTrap(sn *Snapshot) {
	if !s.enter() {
		return
	}
	defer s.users.Done()
	if sn = s.holdSnapshot(sn); sn == nil {
		return
	}
	defer sn.release()
	if !sn.ExitTrap {
		return
	}
	root, err := s.newRoot(nil, nil, s.log)
	if err != nil {
		s.log.Error("EXIT trap not run", zap.Error(err))
		return
	}
	defer s.removeRoot(root, s.log)
	stderr := int(os.Stderr.Fd())
	s.runBounded(modeExit, Request{ID: "exit", Tool: "_", Snapshot: sn}, root, stderr, stderr, s.log)
}

// failed is the SDK's sentence for a tool that did not succeed; a tool
// killed by signal N reads 128+N, as the SDK's $? did.
func failed(tool string, exit int) string {
	return fmt.Sprintf("Tool %s failed with exit code %d", tool, exit)
}
