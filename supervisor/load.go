package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// Current is the snapshot new calls run with when their Request names none
// (nil until Use or a successful Reload).
func (s *Supervisor) Current() *Snapshot { return s.current.Load() }

// Use makes sn the current snapshot (after the first Load, Adopt or Empty);
// the one it replaces is retired.
func (s *Supervisor) Use(sn *Snapshot) {
	if old := s.current.Swap(sn); old != sn {
		s.warm.use(sn)
		old.retire()
	}
}

// holdSnapshot holds sn for a run, or the current snapshot when sn is nil
// or already removed (a reload retired it between the caller reading it
// and the call starting). nil when none is in use.
func (s *Supervisor) holdSnapshot(sn *Snapshot) *Snapshot {
	if sn != nil && sn.hold() {
		return sn
	}
	for {
		sn = s.Current()
		if sn == nil || sn.hold() {
			return sn
		}
	}
}

// Reload loads the server script again. On success the new snapshot becomes
// the current one and both are returned; calls already running keep the
// definitions they started with. On failure the current snapshot keeps
// serving and is returned as old, with the error.
func (s *Supervisor) Reload(ctx context.Context) (old, new *Snapshot, err error) {
	sn, err := s.Load(ctx)
	if err != nil {
		return s.Current(), nil, err
	}
	old = s.current.Swap(sn)
	s.warm.use(sn)
	old.retire()
	return old, sn, nil
}

// LoadError is a server script that could not be loaded: its exit status
// and what it printed.
type LoadError struct {
	Script string
	Status string
	Output string
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("loading %s: %s", e.Script, e.Status)
	if out := strings.TrimSpace(e.Output); out != "" {
		msg += ": " + out
	}
	return msg
}

// loadThen is what the load's bash runs once the prelude has returned: the
// shim, the script's top level (as `. SCRIPT ARGS…`, $0 the script), then
// the shim's run_mcp_server, which writes the snapshot and exits. The
// prelude returns rather than sourcing these itself so the script sees the
// shell (BASH_SOURCE, FUNCNAME) it would see without the daemon. The shim
// loaded here leaves the shell options alone (__mcpbashd_preload): only a
// script that sources the shim itself gets the SDK's `set -euo pipefail`,
// from that line on, as it did from the SDK's file.
const loadThen = `; __mcpbashd_preload=1; . "$__MCPBASHD_SHIM"; unset __mcpbashd_preload; . "$0" "$@"; run_mcp_server`

// Load runs the server script once (its top level, then the shim's
// run_mcp_server, which writes the snapshot and exits). Used in manifest
// mode and for reloads. The script's output goes to the returned error
// when the load fails, and is logged otherwise; it never reaches stdout.
// Its files live in the runtime directory, not in a call root: a server
// must load even while TMPDIR is unusable.
func (s *Supervisor) Load(ctx context.Context) (*Snapshot, error) {
	if s.cfg.Script == "" {
		return nil, errors.New("no server script to load")
	}
	if !s.enter() {
		return nil, errClosed
	}
	defer s.users.Done()
	gen := s.seq.Add(1)
	path := s.snapshotPath(gen)
	outPath := filepath.Join(s.runtime, fmt.Sprintf("load.%d.out", gen))
	checkPath := outPath + ".syntax"
	// The top level's stdout is kept apart from its stderr: under the
	// drop-in shim that stdout is the protocol stream, so `check` says
	// when a script writes to it.
	stdoutPath := outPath + ".stdout"
	defer os.Remove(outPath)
	defer os.Remove(checkPath)
	defer os.Remove(stdoutPath)
	defer os.Remove(path + ".lines") // the shim's scratch (__mcpbashd_out)
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	stdout, err := os.OpenFile(stdoutPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		out.Close()
		return nil, err
	}
	defer stdout.Close()
	check, err := os.OpenFile(checkPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		out.Close()
		return nil, err
	}
	dir := filepath.Dir(s.cfg.Script)
	if wd, err := os.Getwd(); err == nil {
		dir = wd // the SDK resolves relative paths against the caller's cwd
	}
	if s.cfg.LoadDir != "" {
		dir = s.cfg.LoadDir
	}
	// A syntax error does not stop bash: the load would go on and snapshot
	// a server missing the broken part. `bash -n` reports it with its file
	// and line; it runs alongside the load, so it costs no start-up time.
	_, checkDone, err := s.start(proc{mode: modeCheck, zero: s.cfg.Script, dir: dir, stdout: fdOf(check), stderr: fdOf(check)})
	check.Close()
	if err != nil {
		out.Close()
		return nil, err
	}
	pid, done, err := s.start(proc{mode: modeLoad, then: loadThen, zero: s.cfg.Script, args: s.cfg.ScriptArgs, dir: dir,
		env: []string{"__MCPBASHD_SHIM=" + s.shim, "__MCPBASHD_SNAPSHOT_OUT=" + path}, stdout: fdOf(stdout), stderr: fdOf(out)})
	out.Close()
	if err != nil {
		<-checkDone
		return nil, err
	}
	ei, err := s.waitBounded(ctx, pid, done, s.cfg.LoadBudget)
	checked := <-checkDone
	if errors.Is(err, errBudget) {
		return nil, s.loadError(fmt.Sprintf("did not finish within %s", s.cfg.LoadBudget), outPath)
	}
	if err != nil {
		return nil, err
	}
	if checked.status.ExitStatus() != 0 || checked.status.Signaled() {
		return nil, s.loadError("syntax error", checkPath)
	}
	return s.loaded(path, gen, ei, outPath)
}

// loaded turns a finished load into its snapshot or its LoadError.
func (s *Supervisor) loaded(path string, gen uint64, ei exitInfo, outPath string) (*Snapshot, error) {
	if ei.status.Signaled() {
		return nil, s.loadError("killed by "+unix.SignalName(ei.status.Signal()), outPath)
	}
	if st := ei.status.ExitStatus(); st != 0 {
		return nil, s.loadError(fmt.Sprintf("exit status %d", st), outPath)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, s.loadError("exited without reaching run_mcp_server", outPath)
	}
	if s.cfg.ScriptStderr != nil {
		_, _ = io.WriteString(s.cfg.ScriptStderr, readCapped(outPath, 1<<20))
	} else if output := readCapped(outPath, 64<<10); strings.TrimSpace(output) != "" {
		s.log.Info("server script printed while loading", zap.String("script", s.cfg.Script), zap.String("output", output))
	}
	printed := readCapped(outPath+".stdout", 4<<10)
	if printed != "" {
		s.log.Info("server script wrote to stdout while loading", zap.String("script", s.cfg.Script), zap.String("stdout", printed))
	}
	sn, err := s.storeSnapshot(path, gen, data)
	if sn != nil {
		sn.LoadStdout = printed
	}
	return sn, err
}

func (s *Supervisor) loadError(status, outPath string) *LoadError {
	return &LoadError{Script: s.cfg.Script, Status: status, Output: readCapped(outPath, 64<<10) + readCapped(outPath+".stdout", 64<<10)}
}

func readCapped(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, max)
	n, _ := f.ReadAt(b, 0)
	return string(b[:n])
}

// ListTools runs `EXE list` (a --tools-dir executable) and returns its
// stdout: one tool JSON object per line. Its stderr is returned in the
// error when it fails. It runs like every other process (start): its own
// group, the lifeline, the load budget.
func (s *Supervisor) ListTools(ctx context.Context, exe string) ([]byte, error) {
	if !s.enter() {
		return nil, errClosed
	}
	defer s.users.Done()
	root, err := s.newRoot(nil, nil, s.log)
	if err != nil {
		return nil, err
	}
	defer s.removeRoot(root, s.log)
	out, err := openAppendFD(root.Out())
	if err != nil {
		return nil, err
	}
	defer closeFD(&out)
	errf, err := openAppendFD(root.Stderr())
	if err != nil {
		return nil, err
	}
	defer closeFD(&errf)
	pid, done, err := s.start(proc{mode: modeList, zero: exe, dir: filepath.Dir(exe),
		env: []string{"__MCPBASHD_EXE=" + exe}, stdout: out, stderr: errf})
	closeFD(&out)
	closeFD(&errf)
	if err != nil {
		return nil, fmt.Errorf("run %s list: %w", exe, err)
	}
	ei, err := s.waitBounded(ctx, pid, done, s.cfg.LoadBudget)
	if err != nil {
		return nil, fmt.Errorf("%s list: %w", exe, err)
	}
	stdout, _, _ := readOutput(root.Out(), s.cfg.OutputCap, s.log)
	if ei.status.Signaled() || ei.status.ExitStatus() != 0 {
		stderr, _, _ := readOutput(root.Stderr(), 64<<10, s.log)
		return nil, fmt.Errorf("%s list failed (exit %d): %s", exe, ei.status.ExitStatus(), strings.TrimSpace(string(stderr)))
	}
	return stdout, nil
}
