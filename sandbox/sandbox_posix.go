//go:build darwin || (linux && portable)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/sandbox/exechelper"
)

// The sandbox where there are no cgroups, no Landlock and no network
// namespaces (macOS; the portable build on Linux runs this same code, so
// the Linux suite tests it): what POSIX gives — rlimits, set by the exec
// helper before bash starts — and, for every limit with no mechanism
// here, a refusal. A tool that declares a limit this OS cannot hold is
// never run without it: Prepare fails the call saying which and why, and
// `mcp-bashd check` and `mcp-bashd call` say the same beforehand.

// RefusesUnenforceable: here a call that declares a limit with no
// mechanism is refused, never run without it.
const RefusesUnenforceable = true

// Options configure a Manager.
type Options struct {
	Self     string // this binary: the exec helper
	Defaults *Spec  // the daemon-wide defaults (flags); nil: none
	Log      *zap.Logger
}

// Manager decides how each call's Spec is enforced on this OS.
type Manager struct {
	opt  Options
	log  *zap.Logger
	root bool // RLIMIT_NPROC does not apply to root
}

// New makes a Manager.
func New(o Options) *Manager {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return &Manager{opt: o, log: o.Log, root: os.Geteuid() == 0}
}

// Defaults are the daemon-wide defaults.
func (m *Manager) Defaults() *Spec {
	if m == nil {
		return nil
	}
	return m.opt.Defaults
}

// Close has nothing to release: no cgroup is made here.
func (m *Manager) Close() {}

// Paths are what a call's process needs whatever its filesystem rules say.
type Paths struct {
	Root  string
	Tmp   string
	Bash  string
	Files []string
	// Own and Shared serve Linux's switch of a root daemon's call to
	// another user; no such switch is made here.
	Own    []string
	Shared []string
}

// Call is one sandboxed call: how its process is started. A nil *Call is
// a call with no sandbox; its methods do nothing.
type Call struct {
	m    *Manager
	spec *Spec
	plan string
}

// Prepare makes the helper's plan for a call with tool's Spec (over the
// daemon's defaults); nil, nil when nothing is asked. An error means the
// call must not run: it declares a limit this OS cannot enforce.
func (m *Manager) Prepare(tool *Spec, p Paths) (*Call, error) {
	s := Merge(m.Defaults(), tool)
	if m == nil || s.Empty() {
		return nil, nil
	}
	if m.opt.Self == "" {
		return nil, errors.New("limits need the exec helper, and this binary's path is unknown")
	}
	if err := refusal(m.describe(s)); err != nil {
		return nil, err
	}
	c := &Call{m: m, spec: s}
	b, err := json.Marshal(exechelper.Plan{Bash: p.Bash, LandlockFD: -1, Rlimits: c.rlimits()})
	if err != nil {
		return nil, err
	}
	c.plan = string(b)
	return c, nil
}

// refusal is the error of a Spec with limits that cannot be held here.
func refusal(lines []Line) error {
	var why []string
	for _, l := range lines {
		if l.Refused {
			why = append(why, l.Key+": "+l.How)
		}
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("refused: this tool declares limits %s cannot enforce, and it is not run without them (%s)", runtime.GOOS, strings.Join(why, "; "))
}

// rlimits are the per-process limits the helper sets.
func (c *Call) rlimits() []exechelper.Rlimit {
	return rlimits(c.spec, memoryRlimit, !c.m.root)
}

// Apply changes a spawn into the helper's: this binary, with the plan in
// the environment.
func (c *Call) Apply(path string, env []string, files []uintptr, _ *syscall.SysProcAttr) (string, []string, []uintptr) {
	if c == nil {
		return path, env, files
	}
	return c.m.opt.Self, append(env, exechelper.EnvPlan+"="+c.plan), files
}

// StartError: nothing of a spawn's failure is the sandbox's here.
func (c *Call) StartError(err error) error { return err }

// Finish returns what the limits did, one sentence each: a leader killed
// by SIGXCPU or SIGXFSZ.
func (c *Call) Finish(status unix.WaitStatus) []string {
	if c == nil || !status.Signaled() {
		return nil
	}
	switch status.Signal() {
	case unix.SIGXCPU:
		return []string{"stopped: CPU time limit " + c.spec.CPU.String() + " reached"}
	case unix.SIGXFSZ:
		return []string{"stopped: file size limit " + FormatSize(c.spec.FileSize) + " reached"}
	}
	return nil
}

// Line says how one declared limit is enforced here.
type Line struct {
	Key      string // the tools.json key
	Value    string // as declared, for people
	How      string // the mechanism, or why it is not enforced
	Enforced bool
	Refused  bool // no mechanism here: the call is refused rather than run without it
}

// Describe says how each limit of tool's Spec (over the daemon's
// defaults) is enforced on this OS, for `mcp-bashd call` and `check`.
func (m *Manager) Describe(tool *Spec) []Line {
	s := Merge(m.Defaults(), tool)
	if s.Empty() {
		return nil
	}
	return m.describe(s)
}

func (m *Manager) describe(s *Spec) []Line {
	var out []Line
	held := func(key, value, how string) {
		out = append(out, Line{Key: key, Value: value, How: how, Enforced: true})
	}
	refused := func(key, value, why string) {
		out = append(out, Line{Key: key, Value: value, How: "refused: " + why, Refused: true})
	}
	here := runtime.GOOS
	if s.Memory > 0 {
		if memoryRlimit >= 0 {
			held(KeyMemory, FormatSize(s.Memory), memoryHow)
		} else {
			refused(KeyMemory, FormatSize(s.Memory), memoryHow)
		}
	}
	if s.CPU > 0 {
		held(KeyCPU, s.CPU.String(), "RLIMIT_CPU, CPU time per process")
	}
	if s.Processes > 0 {
		v := fmt.Sprint(s.Processes)
		if m.root {
			refused(KeyProcesses, v, "no pids cgroup on "+here+", and RLIMIT_NPROC does not apply to root")
		} else {
			held(KeyProcesses, v, "RLIMIT_NPROC: counts every process of the daemon's user")
		}
	}
	if s.FileSize > 0 {
		held(KeyFileSize, FormatSize(s.FileSize), "RLIMIT_FSIZE, per file written")
	}
	if s.OpenFiles > 0 {
		held(KeyOpenFiles, fmt.Sprint(s.OpenFiles), "RLIMIT_NOFILE, per process")
	}
	if s.RestrictRead {
		refused("filesystem."+KeyRead, "["+strings.Join(s.Read, ", ")+"]", "no Landlock on "+here)
	}
	if s.RestrictWrite {
		refused("filesystem."+KeyWrite, "["+strings.Join(s.Write, ", ")+"]", "no Landlock on "+here)
	}
	if s.NoNetwork {
		refused(KeyNetwork, "false", "no network namespaces on "+here)
	}
	out = append(out, Line{Key: "containment", How: "process group only: processes that leave it (setsid) outlive the call (no cgroups on " + here + ")"})
	return out
}
