package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/lifeline"
	"github.com/mcp-bashd/mcp-bashd/sandbox"
	"github.com/mcp-bashd/mcp-bashd/scripts"
	"github.com/mcp-bashd/mcp-bashd/tmpdir"
)

// Config says how a server's processes are run. A zero field takes its
// default (withDefaults), so a caller sets only what it decides.
type Config struct {
	Bash       string        // bash to run tools with
	Script     string        // absolute path of the server script ("" for a tools-dir only server)
	ScriptArgs []string      // the script's own arguments (shown in ps, $@ in tools)
	Self       string        // this binary, exported to bash as MCP_BASHD
	ServerPID  int           // the server's pid, exported as MCP_BASHD_SERVER_PID; 0: this process
	OutputCap  int64         // bytes of tool output kept in a result; < 0: no cap
	Grace      time.Duration // SIGTERM → SIGKILL; < 0: SIGKILL right after SIGTERM
	HookBudget time.Duration // cancel hook and EXIT trap budget
	LoadBudget time.Duration // how long loading the script or a `list` may take
	// LoadDir is the directory the script's top level starts in (default:
	// ours, as the SDK's caller's): `check` loads it elsewhere to learn
	// whether its paths depend on where it is started.
	LoadDir string
	Log     *zap.Logger
	// Limits are the daemon-wide defaults of every call's sandbox (a
	// tool's own x-mcp-bashd limits override them key by key); nil: none.
	Limits *sandbox.Spec
	// Warm is the most call processes started ahead of their calls
	// (warm.go); 0: DefaultWarm, < 0: none. WarmIdle is how long they are
	// kept while no call comes; 0: DefaultWarmIdle.
	Warm     int
	WarmIdle time.Duration
	// NoFork: warm processes are each started by exec, never forked from
	// a fork server (zygote_linux.go).
	NoFork bool
	// ScriptStderr, when set, gets what the script's top level wrote to
	// stderr, once each load ends: under the SDK that was the server's own
	// stderr, which hosts keep as its log. Nil: it is logged at info.
	ScriptStderr io.Writer
}

// The defaults of Config's zero fields.
const (
	DefaultOutputCap  = 16 << 20
	DefaultGrace      = 2 * time.Second
	DefaultHookBudget = 2 * time.Second
	DefaultLoadBudget = 30 * time.Second
)

// withDefaults is the one place Config's defaults are filled in.
func (c Config) withDefaults() Config {
	if c.Bash == "" {
		c.Bash = "bash"
		if p, err := exec.LookPath("bash"); err == nil {
			c.Bash = p
		}
	}
	if c.OutputCap == 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.HookBudget == 0 {
		c.HookBudget = DefaultHookBudget
	}
	if c.LoadBudget == 0 {
		c.LoadBudget = DefaultLoadBudget
	}
	if c.WarmIdle == 0 {
		c.WarmIdle = DefaultWarmIdle
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	return c
}

// LoadBudgetOrDefault is how long a load or a `list` may take.
func (c Config) LoadBudgetOrDefault() time.Duration { return c.withDefaults().LoadBudget }

// Supervisor runs a server's processes.
type Supervisor struct {
	cfg     Config
	log     *zap.Logger
	base    string // TMPDIR, absolute
	owner   tmpdir.Owner
	rt      *tmpdir.Runtime
	runtime string // private runtime dir (rt.Dir)
	worker  string // path of the worker prelude (worker_call.sh is beside it)
	shim    string // path of the shim (sourced before a script in manifest mode)
	life    *lifeline.Lifeline
	lifeID  fileID    // the lifeline FIFO, as a sentinel's fd 3 names it (sentinelOf)
	notify  *notifier // MCP_BASHD_NOTIFY (notify.go)
	reaper  *reaper
	devnull *os.File
	// devnullFD and lifeFD are devnull's and the lifeline's read end's
	// descriptors, read once: (*os.File).Fd puts a descriptor in blocking
	// mode with two fcntl calls each time it is asked.
	devnullFD, lifeFD uintptr
	env               []string // base environment of every child
	box               *sandbox.Manager
	warm              *warmPool // nil: every call starts its own process
	// ctlBase is a private directory on a tmpfs for forked warm processes'
	// control files (zygote_linux.go); "": they are in their roots.
	ctlBase string
	seq     atomic.Uint64
	current atomic.Pointer[Snapshot] // Current, Use, Reload
	closeMu sync.Once
	stats   Stats

	// Close waits for every user of the processes (calls, loads, the EXIT
	// trap) after killing what still runs, so nothing spawns after the
	// lifeline and reaper are gone.
	usersMu sync.Mutex
	closing bool
	users   sync.WaitGroup

	// gone queues finished roots for removeGone (removeRoot); closed, under
	// usersMu, by Close, which then waits for goneDone.
	gone     chan string
	goneDone chan struct{}
	goneSeq  atomic.Uint64

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
	cfg = cfg.withDefaults()
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
	if err := os.WriteFile(s.workerCall(), []byte(scripts.WorkerCall), 0o600); err != nil {
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
	s.lifeID, _ = statID(s.life.Path())
	s.devnullFD, s.lifeFD = s.devnull.Fd(), s.life.ReadFD()
	if s.reaper, err = newReaper(s.log.Named("reaper")); err != nil {
		return fail(err)
	}
	s.box = sandbox.New(sandbox.Options{Self: cfg.Self, Defaults: cfg.Limits, Log: s.log.Named("sandbox")})
	if s.notify, err = newNotifier(s.runtime, s.log.Named("notify")); err != nil {
		return fail(err)
	}
	s.env = append(childEnv(os.Environ(), cfg.Self, cfg.ServerPID), envNotify+"="+s.notify.path)
	// A warm root is renamed from the runtime directory into TMPDIR, which
	// needs both on one filesystem: the runtime directory in TMPDIR.
	if !warmHere && cfg.Warm > 0 {
		s.log.Info("no warm call processes in this build: every call starts its own bash (warmos_posix.go)", zap.Int("warm", cfg.Warm))
	}
	if warmHere && cfg.Warm >= 0 && filepath.Dir(s.runtime) == base {
		s.warm = newWarmPool(s, cmpOr(cfg.Warm, DefaultWarm))
		s.ctlBase = ctlDir()
	}
	s.gone, s.goneDone = make(chan string, goneQueue), make(chan struct{})
	go s.removeGone()
	return s, nil
}

// workerCall is the path of worker_call.sh, which worker.sh finds beside
// itself.
func (s *Supervisor) workerCall() string {
	return filepath.Join(filepath.Dir(s.worker), "worker_call.sh")
}

// goneQueue is how many finished roots may wait for removeGone; past it a
// call removes its own before it is answered, as when there was no queue.
const goneQueue = 64

// Sandbox is how calls' limits are enforced here (mcp-bashd call shows it).
func (s *Supervisor) Sandbox() *sandbox.Manager { return s.box }

// childEnv is the daemon's environment minus our private variables, with
// MCP_BASHD pointing at this binary so the shim's helpers find it, and
// MCP_BASHD_SERVER_PID naming the server: under the SDK a tool's $$ was
// the server's pid (a subshell keeps it), so a $$-keyed file was shared by
// every call; here $$ is the call's own shell.
func childEnv(env []string, self string, server int) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if strings.HasPrefix(kv, "__MCPBASHD_") || strings.HasPrefix(kv, envCallTmp+"=") || strings.HasPrefix(kv, "MCP_BASHD=") ||
			strings.HasPrefix(kv, envEvents+"=") || strings.HasPrefix(kv, envContent+"=") || strings.HasPrefix(kv, envCap+"=") || strings.HasPrefix(kv, envValues+"=") ||
			strings.HasPrefix(kv, envServerPID+"=") || strings.HasPrefix(kv, envNotify+"=") {
			continue
		}
		out = append(out, kv)
	}
	if self != "" {
		out = append(out, "MCP_BASHD="+self)
	}
	if server <= 0 {
		server = os.Getpid()
	}
	return append(out, envServerPID+"="+strconv.Itoa(server))
}

// envServerPID names the server's pid in every process the daemon starts.
const envServerPID = "MCP_BASHD_SERVER_PID"

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
		s.warm.close()
		if s.reaper != nil {
			s.reaper.killAll()
		}
		s.users.Wait()
		if s.reaper != nil {
			s.reaper.closeKeeper()
		}
		if s.gone != nil {
			s.usersMu.Lock()
			close(s.gone)
			s.usersMu.Unlock()
			<-s.goneDone
		}
		s.box.Close()
		if s.ctlBase != "" {
			err = errors.Join(err, os.RemoveAll(s.ctlBase))
		}
		s.retryLeftovers()
		if s.life != nil {
			err = errors.Join(err, s.life.Close())
		}
		if s.notify != nil {
			s.notify.close()
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

// cmpOr is v, or def when v is 0.
func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
