package supervisor

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/sandbox"
)

// Every process the daemon starts — a call, a cancel hook, the EXIT-trap
// run, a load and its syntax check, a tools directory's `EXE list` — is
//
//	bash --noprofile --norc -c '. "$__MCPBASHD_WORKER"[THEN] # MODE [TOOL]' ZERO [ARGS…]
//
// started by start: in a new process group, under the reaper's lock (so
// the reaper waits for it and no other code does), stdin /dev/null, the
// lifeline's read end on fd 3. The prelude (scripts/worker.sh) first checks
// the lifeline and forks the sentinel into the group, whatever the mode, so
// a daemon that dies however it dies takes every one of them with it; then
// it does what the mode says. Running a non-bash executable (`EXE list`,
// `EXE TOOL ARGS`) as a child of that bash costs one bash start and is the
// only way its group gets a sentinel without a re-exec of this binary.
//
// The comment after the command makes mode and tool visible in ps; ZERO and
// ARGS are $0 and $@ (the server script and its arguments, as in a bash
// subshell, or the tools-directory executable).

// The prelude's modes: worker.sh's case labels.
const (
	modeCall   = "call"   // tool_TOOL "$ARGS", after mcp_before_tool_call
	modeExec   = "exec"   // a tools-directory executable: EXE TOOL "$ARGS"
	modeCancel = "cancel" // tool_TOOL_cancel "$ARGS"
	modeExit   = "exit"   // the server's EXIT trap
	modeList   = "list"   // a tools-directory executable: EXE list
	modeCheck  = "check"  // bash -n SCRIPT
	modeLoad   = "load"   // the prelude returns; THEN loads the script
	modeWarm   = "warm"   // a call process waiting for its call on fd 4 (warm.go)
	modeZygote = "zygote" // forks warm processes (zygote_linux.go)
	modeKeeper = "keeper" // kills forked calls' groups when the daemon dies (keeper_linux.go)
)

// proc is one process to start.
type proc struct {
	mode   string
	tool   string   // shown in ps after the mode
	field  string   // shown in ps instead of mode and tool (warm.go)
	then   string   // bash run after the prelude returns (load mode)
	zero   string   // $0
	args   []string // $@
	dir    string
	env    []string // added to the daemon's environment and the prelude's variables
	stdout int      // descriptors of the daemon's, the child's fds 1 and 2
	stderr int
	box    *sandbox.Call // started through the exec helper when set
	extra  []uintptr     // the child's fds 4… (a warm process's pipes)
}

// command is the -c string: the prelude, then a comment ps shows.
func (p proc) command() string {
	label := p.field
	if label == "" {
		label = p.mode
		if p.tool != "" {
			label += " " + p.tool
		}
	}
	return `. "$__MCPBASHD_WORKER"` + p.then + " # " + label
}

// start is the one spawn helper: p's process in its own group, carrying
// the lifeline, registered with the reaper. The returned channel delivers
// the group leader's exit once the rest of its group has been killed.
func (s *Supervisor) start(p proc) (int, <-chan exitInfo, error) {
	return s.startThen(p, nil)
}

// startThen is start, calling then with the new pid and what it was
// exec'd with under the reaper's lock (before it can have been reaped).
func (s *Supervisor) startThen(p proc, then func(pid int, exe string, argv, env []string)) (int, <-chan exitInfo, error) {
	argv := append([]string{s.cfg.Bash, "--noprofile", "--norc", "-c", p.command(), p.zero}, p.args...)
	env := make([]string, 0, len(s.env)+len(p.env)+2)
	env = append(append(env, s.env...), "__MCPBASHD_WORKER="+s.worker, "__MCPBASHD_MODE="+p.mode)
	env = append(env, p.env...)
	sys := &syscall.SysProcAttr{Setpgid: true}
	files := []uintptr{s.devnullFD, uintptr(p.stdout), uintptr(p.stderr), s.lifeFD}
	files = append(files, p.extra...)
	path, env, files := p.box.Apply(s.cfg.Bash, env, files, sys)
	attr := &syscall.ProcAttr{Dir: p.dir, Env: env, Files: files, Sys: sys}
	pid, done, err := s.reaper.spawn(func() (int, error) {
		pid, err := syscall.ForkExec(path, argv, attr)
		if err == nil && then != nil {
			then(pid, path, argv, env)
		}
		return pid, err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("start %s: %w", s.cfg.Bash, p.box.StartError(fullTable(err, files)))
	}
	return pid, done, nil
}

// startServerCode starts a mode that runs the server's code (call, exec,
// cancel, exit): the prelude sources req's snapshot and works in root.
func (s *Supervisor) startServerCode(mode string, req Request, root callRoot, stdout, stderr int, box *sandbox.Call) (int, <-chan exitInfo, error) {
	if req.Snapshot == nil {
		return 0, nil, errors.New("no server snapshot loaded")
	}
	zero := s.cfg.Script
	if req.Kind == ToolExe {
		zero = req.Exe
	}
	env := append(root.env(s.cfg.OutputCap),
		"__MCPBASHD_TOOL="+req.Tool,
		"__MCPBASHD_SNAPSHOT="+req.Snapshot.Path,
		"__MCPBASHD_EXE="+req.Exe,
		"__MCPBASHD_FUNC="+req.Func,
		"__MCPBASHD_SHIM="+s.shim,
	)
	return s.start(proc{mode: mode, tool: req.Tool, zero: zero, args: s.cfg.ScriptArgs,
		dir: string(root), env: env, stdout: stdout, stderr: stderr, box: box})
}

// sandboxPaths are the files a sandboxed call needs whatever its
// filesystem rules say: its root, bash, the prelude, snapshot and shim,
// this binary (the shim's helpers) and a tools-directory executable.
func (s *Supervisor) sandboxPaths(req Request, root callRoot) sandbox.Paths {
	files := []string{s.worker, s.workerCall(), s.shim, s.cfg.Self}
	shared := []string{s.worker, s.workerCall(), s.shim, s.notify.path}
	if req.Snapshot != nil {
		files = append(files, req.Snapshot.Path)
		shared = append(shared, req.Snapshot.Path)
	}
	if req.Kind == ToolExe {
		files = append(files, req.Exe)
	}
	own := []string{string(root), root.Tmp(), root.Args(), root.Out(), root.Stderr()}
	return sandbox.Paths{Root: string(root), Tmp: root.Tmp(), Bash: s.cfg.Bash, Files: files, Own: own, Shared: shared}
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
// process group, kills the group after the hook budget, and logs failures
// with the SDK's sentences (CONTRACT 20, 25); it never fails anything.
func (s *Supervisor) runBounded(mode string, req Request, root callRoot, stdout, stderr int, log *zap.Logger) {
	// What the SDK called it in its log lines.
	what := "Chained caller EXIT trap"
	if mode == modeCancel {
		what = fmt.Sprintf("Cancel hook tool_%s_cancel for %s", req.Tool, req.Tool)
	}
	pid, done, err := s.startServerCode(mode, req, root, stdout, stderr, nil)
	if err != nil {
		log.Error(what+" not started", zap.String("mode", mode), zap.Error(err))
		return
	}
	ei, err := s.waitBounded(context.Background(), pid, done, s.cfg.HookBudget)
	if err != nil {
		log.Warn(fmt.Sprintf("%s did not finish within %s; killed", what, s.cfg.HookBudget), zap.String("mode", mode), zap.Duration("budget", s.cfg.HookBudget))
		return
	}
	// A death by signal N is status 128+N, as bash's wait reported it.
	st, fields := ei.status.ExitStatus(), []zap.Field{zap.String("mode", mode)}
	if ei.status.Signaled() {
		st = 128 + int(ei.status.Signal())
		fields = append(fields, zap.String("signal", unix.SignalName(ei.status.Signal())))
	}
	if st == 0 {
		return
	}
	fields = append(fields, zap.Int("status", st))
	if mode == modeCancel {
		log.Warn(fmt.Sprintf("%s exited with status %d", what, st), fields...)
	} else {
		log.Warn(fmt.Sprintf("%s failed with status %d", what, st), fields...)
	}
}

// fullTable names EBADF from a spawn for what it is when one of files is
// the highest descriptor the limit allows: syscall.ForkExec moves its
// error pipe above every descriptor passed, which the full table refuses
// with EBADF (a descriptor table exhausted, not a bad descriptor of ours).
func fullTable(err error, files []uintptr) error {
	var lim unix.Rlimit
	if !errors.Is(err, syscall.EBADF) || unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return err
	}
	for _, f := range files {
		if uint64(f)+1 >= lim.Cur {
			return syscall.EMFILE
		}
	}
	return err
}
