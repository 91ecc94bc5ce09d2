package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/lifeline"
	"github.com/mcp-bashd/mcp-bashd/scripts"
	"github.com/mcp-bashd/mcp-bashd/tmpdir"
)

// Config says how calls are run.
type Config struct {
	Bash       string        // bash to run tools with
	Script     string        // absolute path of the server script
	ScriptArgs []string      // the script's own arguments (shown in ps, $@ in tools)
	Self       string        // this binary, exported to bash as MCP_BASHD
	OutputCap  int64         // bytes of tool output kept in a result
	Grace      time.Duration // SIGTERM → SIGKILL
	HookBudget time.Duration // cancel hook and EXIT trap budget
	LoadBudget time.Duration // how long loading the script may take
	Log        *zap.Logger
}

// LoadBudgetOrDefault is how long a load or a `list` may take.
func (c Config) LoadBudgetOrDefault() time.Duration {
	if c.LoadBudget > 0 {
		return c.LoadBudget
	}
	return 30 * time.Second
}

// Supervisor runs a server's processes.
type Supervisor struct {
	cfg     Config
	log     *zap.Logger
	base    string // TMPDIR, absolute
	owner   tmpdir.Owner
	rt      *tmpdir.Runtime
	runtime string // private runtime dir (rt.Dir)
	worker  string // path of the worker prelude
	shim    string // path of the shim (sourced before a script in manifest mode)
	life    *lifeline.Lifeline
	reaper  *reaper
	devnull *os.File
	env     []string // base environment of every child
	seq     atomic.Uint64
	closeMu sync.Once
	stats   Stats

	// Close waits for every user of the processes (calls, loads, the EXIT
	// trap) after killing what still runs, so nothing spawns after the
	// lifeline and reaper are gone.
	usersMu sync.Mutex
	closing bool
	users   sync.WaitGroup

	leftMu    sync.Mutex
	leftovers []string // call roots whose removal failed, retried later
}

var errClosed = errors.New("supervisor closed")

// enter registers one user of the supervisor; false once Close began.
func (s *Supervisor) enter() bool {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if s.closing {
		return false
	}
	s.users.Add(1)
	return true
}

// Stats are counters for logs and metrics.
type Stats struct {
	Calls, Cancelled, TimedOut, Killed atomic.Uint64
}

// New sets up the runtime directory, lifeline and reaper.
func New(cfg Config) (*Supervisor, error) {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	base, err := tmpdir.Base()
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &Supervisor{cfg: cfg, log: cfg.Log, base: base}
	if removed, err := tmpdir.Sweep(base); err != nil {
		s.log.Warn("stale temp dirs not all removed", zap.Error(err))
	} else if len(removed) > 0 {
		s.log.Info("removed temp dirs of dead daemons", zap.Strings("paths", removed))
	}
	// The runtime directory (lifeline, snapshot, prelude) is what the daemon
	// cannot serve without; if TMPDIR is unusable it goes to /tmp or
	// XDG_RUNTIME_DIR instead, and only the calls (whose roots must live
	// under TMPDIR) fail, each with the SDK's "call directory" result.
	var rerr error
	for _, dir := range []string{base, "/tmp", os.Getenv("XDG_RUNTIME_DIR")} {
		if dir == "" {
			continue
		}
		if s.rt, err = tmpdir.NewRuntime(dir); err == nil {
			s.runtime, s.owner = s.rt.Dir, s.rt.Owner()
			break
		}
		rerr = errors.Join(rerr, fmt.Errorf("runtime dir under %s: %w", dir, err))
	}
	if s.runtime == "" {
		return nil, rerr
	}
	if rerr != nil {
		s.log.Warn("TMPDIR unusable; calls will fail until it is", zap.String("tmpdir", base), zap.Error(rerr))
	}
	fail := func(err error) (*Supervisor, error) {
		s.Close()
		return nil, err
	}
	s.worker = filepath.Join(s.runtime, "worker.sh")
	s.shim = filepath.Join(s.runtime, "mcpserver_core.sh")
	if err := os.WriteFile(s.worker, []byte(scripts.Worker), 0o600); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(s.shim, []byte(scripts.Shim), 0o600); err != nil {
		return fail(err)
	}
	if s.devnull, err = os.Open(os.DevNull); err != nil {
		return fail(err)
	}
	if s.life, err = lifeline.New(s.runtime); err != nil {
		return fail(err)
	}
	if s.reaper, err = newReaper(s.log.Named("reaper")); err != nil {
		return fail(err)
	}
	s.env = childEnv(os.Environ(), cfg.Self)
	return s, nil
}

// childEnv is the daemon's environment minus our private variables, with
// MCP_BASHD pointing at this binary so the shim's helpers find it.
func childEnv(env []string, self string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "__MCPBASHD_") || strings.HasPrefix(kv, envCallTmp+"=") || strings.HasPrefix(kv, "MCP_BASHD=") ||
			strings.HasPrefix(kv, envEvents+"=") || strings.HasPrefix(kv, envContent+"=") {
			continue
		}
		out = append(out, kv)
	}
	if self != "" {
		out = append(out, "MCP_BASHD="+self)
	}
	return out
}

// OrphansReaped is how many processes nobody registered (detached or
// orphaned by a tool) the reaper has reaped.
func (s *Supervisor) OrphansReaped() uint64 { return s.reaper.reapedOrphans() }

// Stats returns the live counters.
func (s *Supervisor) Stats() *Stats { return &s.stats }

// Close stops the reaper, closes the lifeline (any sentinel still waiting
// kills its group) and removes the runtime directory. Idempotent.
func (s *Supervisor) Close() error {
	var err error
	s.closeMu.Do(func() {
		s.usersMu.Lock()
		s.closing = true
		s.usersMu.Unlock()
		if s.reaper != nil {
			s.reaper.killAll()
		}
		s.users.Wait()
		s.retryLeftovers()
		if s.life != nil {
			err = errors.Join(err, s.life.Close())
		}
		if s.reaper != nil {
			s.reaper.close()
		}
		if s.devnull != nil {
			s.devnull.Close()
		}
		if s.rt != nil {
			err = errors.Join(err, s.rt.Close())
		}
	})
	return err
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

// Load runs the server script once (its top level, then the shim's
// run_mcp_server, which writes the snapshot and exits). Used in manifest
// mode and for reloads. The script's output goes to the returned error
// when the load fails, and is logged otherwise; it never reaches stdout.
func (s *Supervisor) Load(ctx context.Context) (*Snapshot, error) {
	if !s.enter() {
		return nil, errClosed
	}
	defer s.users.Done()
	gen := s.seq.Add(1)
	path := s.snapshotPath(gen)
	outPath := filepath.Join(s.runtime, fmt.Sprintf("load.%d.out", gen))
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer os.Remove(outPath)
	argv := append([]string{s.cfg.Bash, "--noprofile", "--norc", "-c",
		`. "$__MCPBASHD_SHIM"; . "$0" "$@"; run_mcp_server`, s.cfg.Script}, s.cfg.ScriptArgs...)
	env := append(append([]string{}, s.env...),
		"__MCPBASHD_SHIM="+s.shim, "__MCPBASHD_SNAPSHOT_OUT="+path)
	attr := &syscall.ProcAttr{
		Dir:   filepath.Dir(s.cfg.Script),
		Env:   env,
		Files: []uintptr{s.devnull.Fd(), out.Fd(), out.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	if wd, err := os.Getwd(); err == nil {
		attr.Dir = wd // the SDK resolves relative paths against the caller's cwd
	}
	// A syntax error does not stop bash: the load would go on and snapshot
	// a server missing the broken part. `bash -n` reports it with its file
	// and line; it runs alongside the load, so it costs no start-up time.
	checkPath := outPath + ".syntax"
	check, err := os.OpenFile(checkPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		out.Close()
		return nil, err
	}
	defer os.Remove(checkPath)
	checkAttr := &syscall.ProcAttr{Dir: attr.Dir, Env: s.env, Files: []uintptr{s.devnull.Fd(), check.Fd(), check.Fd()}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	_, checkDone, err := s.reaper.spawn(func() (int, error) {
		return syscall.ForkExec(s.cfg.Bash, []string{s.cfg.Bash, "--noprofile", "--norc", "-n", s.cfg.Script}, checkAttr)
	})
	check.Close()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", s.cfg.Bash, err)
	}
	pid, done, err := s.reaper.spawn(func() (int, error) { return syscall.ForkExec(s.cfg.Bash, argv, attr) })
	out.Close()
	if err != nil {
		<-checkDone
		return nil, fmt.Errorf("start %s: %w", s.cfg.Bash, err)
	}
	defer func() {
		if checkDone != nil {
			<-checkDone
		}
	}()
	budget := s.cfg.LoadBudgetOrDefault()
	ei, err := s.waitBounded(ctx, pid, done, budget)
	if errors.Is(err, errBudget) {
		return nil, &LoadError{Script: s.cfg.Script, Status: fmt.Sprintf("did not finish within %s", budget), Output: readCapped(outPath, 64<<10)}
	}
	if err != nil {
		return nil, err
	}
	output := readCapped(outPath, 64<<10)
	if ci := <-checkDone; ci.status.ExitStatus() != 0 || ci.status.Signaled() {
		checkDone = nil
		return nil, &LoadError{Script: s.cfg.Script, Status: "syntax error", Output: readCapped(checkPath, 64<<10)}
	}
	checkDone = nil
	if ei.status.Signaled() {
		return nil, &LoadError{Script: s.cfg.Script, Status: "killed by " + unix.SignalName(ei.status.Signal()), Output: output}
	}
	if ei.status.ExitStatus() != 0 {
		return nil, &LoadError{Script: s.cfg.Script, Status: fmt.Sprintf("exit status %d", ei.status.ExitStatus()), Output: output}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{Script: s.cfg.Script, Status: "exited without reaching run_mcp_server", Output: output}
	}
	if strings.TrimSpace(output) != "" {
		s.log.Info("server script printed while loading", zap.String("script", s.cfg.Script), zap.String("output", output))
	}
	return s.storeSnapshot(path, gen, data)
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
