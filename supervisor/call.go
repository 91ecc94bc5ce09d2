package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
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
	ID       string // the JSON-RPC id as written, for logs
	Tool     string // validated name: [a-zA-Z_][a-zA-Z0-9_]*
	Args     []byte // arguments JSON, exactly as the tool receives it in $1
	Snapshot *Snapshot
	Timeout  time.Duration // 0: none
	// Events, when set, receives the notifications the tool asks for
	// (mcp_progress, mcp_log) while it runs, in order, from one goroutine.
	Events func(Event)
	// Exe, when set, is a --tools-dir executable run as `EXE TOOL ARGS`
	// instead of the bash function tool_TOOL.
	Exe string
}

// Outcome is how a call ended.
type Outcome struct {
	Output     []byte // combined stdout+stderr, at most the cap (a tools-dir executable: stdout)
	Stderr     []byte // a tools-dir executable's stderr (logged; joins the text of a failure)
	Truncated  int64  // bytes cut off the end (0: none)
	ExitCode   int
	Signal     syscall.Signal // non-zero when the tool's shell died by a signal
	Phase      string         // "tool", "hook" (ended inside the before-tool hook), "refused"
	HookStatus int            // the hook's return status when Phase is "refused"
	HookOutput []byte
	Cancelled  bool // stopped for ErrCancelled or ErrShutdown: no response is sent
	TimedOut   bool
	Timeout    time.Duration
	SetupErr   error // the call never ran (no call directory, spawn failure)
	SetupDir   bool  // SetupErr is the call directory's creation
	Duration   time.Duration
	// What the tool returned through the shim's content helpers.
	Items           []Item
	Structured      json.RawMessage // mcp_structured
	FullResult      json.RawMessage // mcp_result: the whole CallToolResult
	ContentProblems []string
}

// Call runs req to completion, cancellation or timeout. It returns only
// once the call's process group is gone and its root removed.
func (s *Supervisor) Call(ctx context.Context, req Request) Outcome {
	if !s.enter() {
		return Outcome{SetupErr: errClosed}
	}
	defer s.users.Done()
	start := time.Now()
	s.stats.Calls.Add(1)
	log := s.log.With(zap.String("call_id", req.ID), zap.String("tool", req.Tool))
	o := s.call(ctx, req, log)
	o.Duration = time.Since(start)
	fields := []zap.Field{zap.Duration("duration", o.Duration), zap.Int("exit", o.ExitCode)}
	switch {
	case o.SetupErr != nil:
		log.Error("call not run", zap.Error(o.SetupErr))
	case o.Phase == phaseRefused:
		log.Info("before-tool hook refused the call", zap.Int("status", o.HookStatus))
	case o.Phase == phaseHook && o.Signal != 0:
		log.Error("before-tool hook killed by a signal; tool not run", zap.String("signal", unix.SignalName(o.Signal)))
	case o.Phase == phaseHook:
		log.Error("before-tool hook ended the call instead of returning; tool not run", zap.Int("exit", o.ExitCode))
	case o.Cancelled:
		log.Info("call cancelled", fields...)
	case o.TimedOut:
		log.Warn("call timed out", append(fields, zap.Duration("timeout", o.Timeout))...)
	default:
		if o.Signal != 0 {
			fields = append(fields, zap.String("signal", unix.SignalName(o.Signal)))
		}
		log.Info("call finished", fields...)
	}
	return o
}

func (s *Supervisor) call(ctx context.Context, req Request, log *zap.Logger) Outcome {
	root, err := s.newRoot(req.Args, log)
	if err != nil {
		return Outcome{SetupErr: err, SetupDir: true}
	}
	defer s.removeRoot(root, log)
	out, err := openAppend(root.Out())
	if err != nil {
		return Outcome{SetupErr: fmt.Errorf("create output file: %w", err), SetupDir: true}
	}
	mode, errOut := "call", out
	if req.Exe != "" {
		// A tools-directory executable prints its result on stdout; its
		// stderr is diagnostics (logged), as in the system it comes from.
		mode = "exec"
		if errOut, err = openAppend(root.Stderr()); err != nil {
			out.Close()
			return Outcome{SetupErr: fmt.Errorf("create stderr file: %w", err)}
		}
		defer errOut.Close()
	}
	pid, done, err := s.spawn(mode, req, root, out, errOut)
	out.Close()
	if err != nil {
		return Outcome{SetupErr: err}
	}
	log = log.With(zap.Int("pgid", pid))
	if req.Events != nil {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go tailEvents(root.Events(), stop, req.Events, &wg)
		// Runs before the root is removed (defers run last-in first-out).
		defer func() { close(stop); wg.Wait() }()
	}
	ei, o := s.await(ctx, req, root, pid, done, log)
	return s.outcome(o, ei, req, root, log)
}

// await waits for the call's group leader, stopping the call when ctx ends
// or its timeout passes; o says which happened.
func (s *Supervisor) await(ctx context.Context, req Request, root callRoot, pid int, done <-chan exitInfo, log *zap.Logger) (ei exitInfo, o Outcome) {
	var timeout <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case ei = <-done:
	case <-ctx.Done():
		o.Cancelled = true
		cause := context.Cause(ctx)
		if errors.Is(cause, ErrCancelled) {
			s.stats.Cancelled.Add(1)
		}
		ei = s.stop(req, root, pid, done, errors.Is(cause, ErrShutdown), log)
	case <-timeout:
		o.TimedOut, o.Timeout = true, req.Timeout
		s.stats.TimedOut.Add(1)
		ei = s.stop(req, root, pid, done, false, log)
	}
	return ei, o
}

// outcome reads what a finished call left in its root.
func (s *Supervisor) outcome(o Outcome, ei exitInfo, req Request, root callRoot, log *zap.Logger) Outcome {
	o.Output, o.Truncated = readOutput(root.Out(), s.cfg.OutputCap)
	if req.Exe != "" {
		o.Stderr, _ = readOutput(root.Stderr(), 64<<10)
		if len(o.Stderr) > 0 {
			log.Info("tool stderr", zap.ByteString("stderr", o.Stderr))
		}
	}
	o.Phase, o.HookStatus = root.readPhase()
	if o.Phase != phaseTool {
		o.HookOutput, _ = readOutput(root.Hook(), s.cfg.OutputCap)
	}
	if ei.status.Signaled() {
		o.Signal = ei.status.Signal()
		o.ExitCode = 128 + int(o.Signal)
	} else {
		o.ExitCode = ei.status.ExitStatus()
	}
	o.Items, o.Structured, o.FullResult, o.ContentProblems = readContent(root.Content(), s.cfg.OutputCap)
	return o
}

// stop is the cancel path: the tool's cancel hook first (own group, its
// budget), then SIGTERM+SIGCONT to the call's group, then SIGKILL after
// the grace. A group whose leader dies on SIGTERM is reported at once.
func (s *Supervisor) stop(req Request, root callRoot, pid int, done <-chan exitInfo, shutdown bool, log *zap.Logger) exitInfo {
	log.Info("cancelling call")
	if req.Snapshot.HasFunction("tool_" + req.Tool + "_cancel") {
		hookReq := req
		if shutdown {
			// The seed: "A signal that tears the server down passes an
			// empty string instead".
			hookReq.Args = nil
			_ = os.WriteFile(root.Args(), nil, 0o600)
		}
		s.runBounded("cancel", hookReq, root, s.devnull, s.devnull, log)
	}
	select {
	case ei := <-done:
		return ei // finished while the hook ran
	default:
	}
	s.reaper.signalGroup(pid, unix.SIGTERM)
	// A stopped group cannot act on SIGTERM until continued.
	s.reaper.signalGroup(pid, unix.SIGCONT)
	grace := time.NewTimer(s.cfg.Grace)
	defer grace.Stop()
	select {
	case ei := <-done:
		return ei
	case <-grace.C:
	}
	if s.reaper.signalGroup(pid, unix.SIGKILL) {
		s.stats.Killed.Add(1)
		log.Warn("tool ignored SIGTERM; process group killed", zap.Duration("grace", s.cfg.Grace))
	}
	return <-done
}

// RunExitTrap runs the EXIT trap the server script had installed when it
// was loaded: stdin /dev/null, stdout to our stderr (stdout is protocol),
// the hook budget, failures logged.
func (s *Supervisor) RunExitTrap(sn *Snapshot) {
	if sn == nil || !s.enter() {
		return
	}
	defer s.users.Done()
	root, err := s.newRoot(nil, s.log)
	if err != nil {
		s.log.Error("EXIT trap not run", zap.Error(err))
		return
	}
	defer s.removeRoot(root, s.log)
	s.runBounded("exit", Request{ID: "exit", Tool: "_", Snapshot: sn}, root, os.Stderr, os.Stderr, s.log)
}

// readOutput reads at most max bytes of path and reports how many more
// there were. The file is never read whole: a tool may write gigabytes.
func readOutput(path string, max int64) ([]byte, int64) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0
	}
	size := fi.Size()
	n := size
	if max > 0 && n > max {
		n = max
	}
	b := make([]byte, n)
	got, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return b[:got], 0
	}
	return b[:got], size - int64(got)
}

// errBudget is a bounded process that ran past its budget (and was killed).
var errBudget = errors.New("did not finish within its time budget")

// waitBounded waits for a process group's leader to exit, for at most
// budget or until ctx ends; either way the group is then SIGKILLed and
// reaped before it returns (errBudget or ctx's error).
func (s *Supervisor) waitBounded(ctx context.Context, pid int, done <-chan exitInfo, budget time.Duration) (exitInfo, error) {
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case ei := <-done:
		return ei, nil
	case <-t.C:
		s.reaper.signalGroup(pid, unix.SIGKILL)
		return <-done, errBudget
	case <-ctx.Done():
		s.reaper.signalGroup(pid, unix.SIGKILL)
		return <-done, ctx.Err()
	}
}

// runBounded runs a hook-like mode (cancel hook, EXIT trap) in its own
// process group, kills the group after the hook budget, and logs failures;
// it never fails anything.
func (s *Supervisor) runBounded(mode string, req Request, root callRoot, stdout, stderr *os.File, log *zap.Logger) {
	pid, done, err := s.spawn(mode, req, root, stdout, stderr)
	if err != nil {
		log.Error("hook not started", zap.String("mode", mode), zap.Error(err))
		return
	}
	ei, err := s.waitBounded(context.Background(), pid, done, s.cfg.HookBudget)
	if err != nil {
		log.Warn("hook killed after its budget", zap.String("mode", mode), zap.Duration("budget", s.cfg.HookBudget))
		return
	}
	if ei.status.Signaled() {
		log.Warn("hook killed by signal", zap.String("mode", mode), zap.String("signal", unix.SignalName(ei.status.Signal())))
	} else if st := ei.status.ExitStatus(); st != 0 {
		log.Warn("hook failed", zap.String("mode", mode), zap.Int("exit", st))
	}
}

// spawn starts the worker prelude for one mode in a new process group.
func (s *Supervisor) spawn(mode string, req Request, root callRoot, stdout, stderr *os.File) (int, <-chan exitInfo, error) {
	if req.Snapshot == nil {
		return 0, nil, errors.New("no server snapshot loaded")
	}
	// The comment after the command makes the tool name visible in ps; the
	// script and its arguments follow as $0 and $@, as in a bash subshell.
	zero := s.cfg.Script
	if req.Exe != "" {
		zero = req.Exe
	}
	argv := append([]string{s.cfg.Bash, "--noprofile", "--norc", "-c",
		`. "$__MCPBASHD_WORKER" # ` + mode + " " + req.Tool, zero}, s.cfg.ScriptArgs...)
	env := append(append(make([]string, 0, len(s.env)+10), s.env...), root.env()...)
	env = append(env,
		"__MCPBASHD_WORKER="+s.worker,
		"__MCPBASHD_TOOL="+req.Tool,
		"__MCPBASHD_MODE="+mode,
		"__MCPBASHD_SNAPSHOT="+req.Snapshot.Path,
		"__MCPBASHD_EXE="+req.Exe,
		"__MCPBASHD_SHIM="+s.shim,
	)
	attr := &syscall.ProcAttr{
		Dir:   string(root),
		Env:   env,
		Files: []uintptr{s.devnull.Fd(), stdout.Fd(), stderr.Fd(), s.life.ReadFD()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	pid, done, err := s.reaper.spawn(func() (int, error) { return syscall.ForkExec(s.cfg.Bash, argv, attr) })
	if err != nil {
		return 0, nil, fmt.Errorf("start %s: %w", s.cfg.Bash, err)
	}
	return pid, done, nil
}

// ListTools runs `EXE list` (a --tools-dir executable) and returns its
// stdout: one tool JSON object per line. Its stderr is returned in the
// error when it fails.
func (s *Supervisor) ListTools(ctx context.Context, exe string) ([]byte, error) {
	if !s.enter() {
		return nil, errClosed
	}
	defer s.users.Done()
	root, err := s.newRoot(nil, s.log)
	if err != nil {
		return nil, err
	}
	defer s.removeRoot(root, s.log)
	out, err := openAppend(root.Out())
	if err != nil {
		return nil, err
	}
	errf, err := openAppend(root.Stderr())
	if err != nil {
		out.Close()
		return nil, err
	}
	attr := &syscall.ProcAttr{Dir: filepath.Dir(exe), Env: s.env,
		Files: []uintptr{s.devnull.Fd(), out.Fd(), errf.Fd()}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	pid, done, err := s.reaper.spawn(func() (int, error) { return syscall.ForkExec(exe, []string{exe, "list"}, attr) })
	out.Close()
	errf.Close()
	if err != nil {
		return nil, fmt.Errorf("run %s list: %w", exe, err)
	}
	ei, err := s.waitBounded(ctx, pid, done, s.cfg.LoadBudgetOrDefault())
	if err != nil {
		return nil, fmt.Errorf("%s list: %w", exe, err)
	}
	stdout, _ := readOutput(root.Out(), s.cfg.OutputCap)
	if ei.status.Signaled() || ei.status.ExitStatus() != 0 {
		stderr, _ := readOutput(root.Stderr(), 64<<10)
		return nil, fmt.Errorf("%s list failed (exit %d): %s", exe, ei.status.ExitStatus(), strings.TrimSpace(string(stderr)))
	}
	return stdout, nil
}
