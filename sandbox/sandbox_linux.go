//go:build !portable

package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/sandbox/exechelper"
)

// Options configure a Manager.
type Options struct {
	Self     string // this binary: the exec helper
	Defaults *Spec  // the daemon-wide defaults (flags); nil: none
	Log      *zap.Logger
	// User is who a root daemon's sandboxed calls run as; nil:
	// DefaultUser. A non-root daemon's calls keep its uid.
	User *exechelper.IDs
}

// DefaultUser is nobody:nogroup (65534 on Debian and Alpine alike).
var DefaultUser = exechelper.IDs{UID: 65534, GID: 65534}

// Manager decides how each call's Spec is enforced on this kernel. What
// the kernel offers is found out once, on first use (a daemon whose tools
// declare nothing never touches a cgroup), and logged then.
type Manager struct {
	opt   Options
	log   *zap.Logger
	once  sync.Once
	cg    *cgroups
	abi   int   // Landlock ABI version; 0: unavailable
	llErr error // why Landlock is unavailable
	root  bool  // CAP_SYS_ADMIN: a network namespace needs no user namespace
	euid0 bool  // the daemon is root: its calls run as opt.User

	warned sync.Map // what was said once about a limit not enforced
}

// New makes a Manager; it probes nothing yet.
func New(o Options) *Manager {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return &Manager{opt: o, log: o.Log}
}

// Defaults are the daemon-wide defaults.
func (m *Manager) Defaults() *Spec {
	if m == nil {
		return nil
	}
	return m.opt.Defaults
}

func (m *Manager) probe() {
	m.once.Do(func() {
		m.cg = setupCgroups()
		switch m.cg.version {
		case 0:
			m.log.Warn("cgroup limits unavailable: memory and process limits fall back to per-process rlimits, and processes that leave a call's process group are not killed with it", zap.String("why", m.cg.why))
		default:
			dirs := make([]string, 0, len(m.cg.parents))
			for _, d := range m.cg.parents {
				dirs = append(dirs, d)
			}
			m.log.Info("cgroup limits available", zap.Int("version", m.cg.version), zap.Strings("parents", dirs))
		}
		if v, err := ll.LandlockGetABIVersion(); err != nil || v < 1 {
			m.llErr = fmt.Errorf("landlock: %v", err)
			if err == nil {
				m.llErr = errors.New("landlock ABI version 0")
			}
			m.log.Warn("landlock unavailable: filesystem rules are not enforced", zap.Error(m.llErr))
		} else {
			m.abi = v
			m.log.Info("landlock available: filesystem rules enforced", zap.Int("abi", v), zap.String("rights", rightsText(v)))
		}
		m.root = hasCapSysAdmin()
		m.euid0 = os.Geteuid() == 0
		if m.opt.User == nil {
			m.opt.User = &DefaultUser
		}
	})
}

// Close removes the daemon's cgroup parents (every call has ended).
func (m *Manager) Close() {
	if m == nil {
		return
	}
	m.once.Do(func() {}) // a Close before any use probes nothing
	if m.cg != nil {
		m.cg.close()
	}
}

// Paths are what a call's process needs whatever its filesystem rules say.
type Paths struct {
	Root  string   // the call's root (read and write): args, out, tmp/
	Tmp   string   // $MCP_CALL_TMPDIR
	Bash  string   // bash, read and executed
	Files []string // read only: the prelude, the snapshot, the shim, a tools-dir executable
	// Own are the call's own files (its root, tmp/, args, out), and Shared
	// the daemon's files it reads or writes (the prelude, the shim, the
	// snapshot, the notify FIFO, in the daemon's private directory): when
	// the call runs as another user, Own become that user's and Shared are
	// opened to its group (see share).
	Own    []string
	Shared []string
}

// Call is one sandboxed call: its cgroup and how its process is started.
// A nil *Call is a call with no sandbox; its methods do nothing.
type Call struct {
	m     *Manager
	spec  *Spec
	g     *group
	plan  string
	clone uintptr
	llFD  int // the Landlock ruleset handed to the helper as fd rulesetFD; -1: none
}

// rulesetFD is where the helper finds the Landlock ruleset: the first
// descriptor after the lifeline (3).
const rulesetFD = 4

// Prepare makes what a call with tool's Spec (over the daemon's defaults)
// needs: its cgroup, with limits set, and the helper's plan. nil, nil when
// nothing is asked. An error means the call must not run: it would run
// with less isolation than declared (no network namespace possible, or
// its cgroup could not be made).
func (m *Manager) Prepare(tool *Spec, p Paths) (*Call, error) {
	s := Merge(m.Defaults(), tool)
	if m == nil || s.Empty() {
		return nil, nil
	}
	if m.opt.Self == "" {
		return nil, errors.New("limits need the exec helper, and this binary's path is unknown")
	}
	m.probe()
	c := &Call{m: m, spec: s, llFD: -1}
	pl := exechelper.Plan{Bash: p.Bash, LandlockFD: -1}
	if s.NoNetwork {
		c.clone = unix.CLONE_NEWNET
		if !m.root {
			c.clone |= unix.CLONE_NEWUSER
		}
	}
	if m.cg.version != 0 {
		g, err := m.cg.newGroup(s)
		if err != nil {
			return nil, err
		}
		c.g = g
		pl.Procs = g.procsFiles()
	}
	pl.Rlimits = c.rlimits()
	pl.CgroupNS = c.g != nil && (m.root || c.clone&unix.CLONE_NEWUSER != 0)
	if m.euid0 {
		pl.User = m.opt.User
		if err := share(p, *pl.User); err != nil {
			c.g.remove()
			return nil, fmt.Errorf("give the call's files to uid %d: %w", pl.User.UID, err)
		}
	}
	if m.abi > 0 && (s.RestrictRead || s.RestrictWrite) {
		fd, flags, err := ruleset(fsRules(s, p, m.abi))
		if err != nil {
			c.g.remove()
			return nil, fmt.Errorf("filesystem rules: %w", err)
		}
		if fd >= 0 {
			c.llFD, pl.LandlockFD, pl.LandlockFlags = fd, rulesetFD, flags
		}
	}
	b, err := json.Marshal(pl)
	if err != nil {
		c.close()
		return nil, err
	}
	c.plan = string(b)
	m.warnUnenforced(s)
	return c, nil
}

// rlimits are the per-process limits. Memory and processes are the
// cgroup's when it has the controller: a limit for the whole call, which
// the kernel reports when it bites. Otherwise RLIMIT_DATA (per process)
// and RLIMIT_NPROC (per user, and not enforced for root).
func (c *Call) rlimits() []exechelper.Rlimit {
	mem := -1
	if !c.g.has("memory") {
		mem = unix.RLIMIT_DATA
	}
	return rlimits(c.spec, mem, !c.g.has("pids") && !c.m.root)
}

// The Landlock rights "read" and "write" stand for. Read includes
// execute: a program that may be read can be run by a shell anyway.
const readRights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir

func writeRights(abi int) uint64 {
	w := uint64(ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeBlock | ll.AccessFSMakeSym)
	if abi >= 2 {
		w |= ll.AccessFSRefer // rename and link across directories
	}
	if abi >= 3 {
		w |= ll.AccessFSTruncate
	}
	return w
}

func rightsText(abi int) string {
	t := "read, execute, write, create, remove"
	if abi >= 2 {
		t += ", rename/link across directories"
	}
	if abi >= 3 {
		t += ", truncate"
	}
	return t
}

// fsPlan is a Landlock ruleset: the access rights it handles (everything
// not granted by a rule is denied for those) and the rules.
type fsPlan struct {
	Handled uint64
	Rules   []fsRule
}

type fsRule struct {
	Path   string
	Access uint64
}

// fsRules is the ruleset: the declared paths, and what every call needs
// (its root, bash, the prelude and snapshot, this binary for the shim's
// helpers, /dev/null).
func fsRules(s *Spec, p Paths, abi int) *fsPlan {
	rw := uint64(readRights) | writeRights(abi)
	fp := &fsPlan{}
	if s.RestrictRead {
		fp.Handled |= readRights
	}
	if s.RestrictWrite {
		fp.Handled |= writeRights(abi)
	}
	add := func(access uint64, paths ...string) {
		for _, path := range paths {
			fp.Rules = append(fp.Rules, fsRule{Path: ExpandPath(path, p.Tmp), Access: access})
		}
	}
	add(readRights, s.Read...)
	add(rw, s.Write...)
	add(rw, p.Root, os.DevNull)
	add(readRights, p.Bash)
	add(readRights, p.Files...)
	return fp
}

// The access rights that apply to a regular file (the others are about
// directory entries, and the kernel refuses them on a file rule).
const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

// ruleset makes the Landlock ruleset (best effort by the kernel's ABI) in
// the daemon, for the helper to enforce: a path that does not exist is
// skipped, since a rule only ever grants. fd < 0: nothing to enforce.
func ruleset(fp *fsPlan) (fd int, flags uint32, err error) {
	rules := make([]landlock.Rule, 0, len(fp.Rules))
	for _, r := range fp.Rules {
		access := r.Access & fp.Handled
		if fi, err := os.Stat(r.Path); err == nil && !fi.IsDir() {
			access &= fileRights
		}
		if access == 0 {
			continue
		}
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(access), r.Path).IgnoreIfMissing())
	}
	cfg, err := landlock.NewConfig(landlock.AccessFSSet(fp.Handled))
	if err != nil {
		return -1, 0, err
	}
	return cfg.BestEffort().NewRulesetFD(rules...)
}

// Apply changes a spawn into the helper's: the binary run is this one,
// the plan is in the environment, the Landlock ruleset is descriptor
// rulesetFD, and a call without network gets a new network namespace
// (and, without CAP_SYS_ADMIN, a user namespace that maps the daemon's
// own uid and gid, so files it writes stay theirs).
func (c *Call) Apply(path string, env []string, files []uintptr, sys *syscall.SysProcAttr) (string, []string, []uintptr) {
	if c == nil {
		return path, env, files
	}
	if c.llFD >= 0 {
		for len(files) < rulesetFD {
			files = append(files, ^uintptr(0)) // closed in the child
		}
		files = append(files[:rulesetFD], uintptr(c.llFD))
	}
	if c.clone != 0 {
		sys.Cloneflags |= c.clone
		if c.clone&unix.CLONE_NEWUSER != 0 {
			sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
			// The new namespace's capabilities would be lost at the
			// helper's execve (its uid there is not 0): these two, of that
			// namespace only, go through it as ambient ones, so the helper
			// can make the cgroup namespace and empty the bounding set —
			// then it drops them with every other.
			sys.AmbientCaps = []uintptr{unix.CAP_SETPCAP, unix.CAP_SYS_ADMIN}
		}
	}
	return c.m.opt.Self, append(env, exechelper.EnvPlan+"="+c.plan), files
}

// close releases what the daemon holds for the call (the ruleset).
func (c *Call) close() {
	if c.llFD >= 0 {
		unix.Close(c.llFD)
		c.llFD = -1
	}
	c.g.remove()
}

// StartError explains a spawn that failed because of the sandbox.
func (c *Call) StartError(err error) error {
	if c == nil || err == nil || c.clone == 0 {
		return err
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EUSERS) {
		return fmt.Errorf("network: false needs a new network namespace, which this daemon may not create (%v): run it as root or allow unprivileged user namespaces", err)
	}
	return err
}

// Finish ends the call's cgroup — every process still in it, setsid
// escapees included, is killed — and returns what the limits did, one
// sentence each, for the result: the memory limit's OOM kills and the
// process limit's refused forks (cgroup events), and a leader killed by
// SIGXCPU or SIGXFSZ (the rlimits). status is how the call's bash ended.
func (c *Call) Finish(status unix.WaitStatus) []string {
	if c == nil {
		return nil
	}
	if c.llFD >= 0 {
		unix.Close(c.llFD)
		c.llFD = -1
	}
	var notes []string
	s := c.spec
	if c.g != nil {
		oom, pidsMax := c.g.events()
		if err := c.g.kill(); err != nil {
			c.m.log.Warn("call cgroup not removed", zap.Error(err))
		}
		if oom > 0 && s.Memory > 0 {
			notes = append(notes, "stopped: memory limit "+FormatSize(s.Memory)+" reached")
		}
		if pidsMax > 0 && s.Processes > 0 {
			notes = append(notes, fmt.Sprintf("process limit %d reached: new processes were refused", s.Processes))
		}
	}
	if status.Signaled() {
		switch status.Signal() {
		case unix.SIGXCPU:
			notes = append(notes, "stopped: CPU time limit "+s.CPU.String()+" reached")
		case unix.SIGXFSZ:
			notes = append(notes, "stopped: file size limit "+FormatSize(s.FileSize)+" reached")
		}
	}
	return notes
}

// warnUnenforced says once per kind what a Spec asks that this kernel or
// these privileges cannot enforce (the call still runs: these are
// best-effort; a missing network namespace is not, and fails the call).
func (m *Manager) warnUnenforced(s *Spec) {
	for _, l := range m.describe(s) {
		if l.Enforced {
			continue
		}
		if _, done := m.warned.LoadOrStore(l.Key, true); !done {
			m.log.Warn("limit not enforced", zap.String("limit", l.Key), zap.String("why", l.How))
		}
	}
}

// Line says how one declared limit is enforced here.
type Line struct {
	Key      string // the tools.json key
	Value    string // as declared, for people
	How      string // the mechanism, or why it is not enforced
	Enforced bool
	Refused  bool // no mechanism here, and the call is refused rather than run without it (sandbox_posix.go)
}

// Describe says how each limit of tool's Spec (over the daemon's
// defaults) is enforced on this machine, for `mcp-bashd call`.
func (m *Manager) Describe(tool *Spec) []Line {
	s := Merge(m.Defaults(), tool)
	if s.Empty() {
		return nil
	}
	m.probe()
	return m.describe(s)
}

func (m *Manager) describe(s *Spec) []Line {
	var out []Line
	add := func(key, value, how string, ok bool) {
		out = append(out, Line{Key: key, Value: value, How: how, Enforced: ok})
	}
	cg := fmt.Sprintf("cgroup v%d", m.cg.version)
	noCg := "cgroups unavailable: " + m.cg.why
	if s.Memory > 0 {
		switch {
		case m.cg.version != 0 && (m.cg.version == 2 || m.cg.parents["memory"] != ""):
			add(KeyMemory, FormatSize(s.Memory), cg+" memory, for the whole call", true)
		default:
			add(KeyMemory, FormatSize(s.Memory), "RLIMIT_DATA, per process ("+noCg+")", true)
		}
	}
	if s.CPU > 0 {
		add(KeyCPU, s.CPU.String(), "RLIMIT_CPU, CPU time per process", true)
	}
	if s.Processes > 0 {
		v := fmt.Sprint(s.Processes)
		switch {
		case m.cg.version == 2 || m.cg.parents["pids"] != "":
			add(KeyProcesses, v, cg+" pids, for the whole call", true)
		case m.root:
			add(KeyProcesses, v, "not enforced: no pids cgroup ("+m.cg.why+"), and RLIMIT_NPROC does not apply to root", false)
		default:
			add(KeyProcesses, v, "RLIMIT_NPROC: counts every process of the daemon's user", true)
		}
	}
	if s.FileSize > 0 {
		add(KeyFileSize, FormatSize(s.FileSize), "RLIMIT_FSIZE, per file written", true)
	}
	if s.OpenFiles > 0 {
		add(KeyOpenFiles, fmt.Sprint(s.OpenFiles), "RLIMIT_NOFILE, per process", true)
	}
	for _, f := range []struct {
		key      string
		restrict bool
		paths    []string
	}{{KeyRead, s.RestrictRead, s.Read}, {KeyWrite, s.RestrictWrite, s.Write}} {
		if !f.restrict {
			continue
		}
		v := "[" + strings.Join(f.paths, ", ") + "]"
		if m.abi > 0 {
			add("filesystem."+f.key, v, fmt.Sprintf("Landlock ABI %d", m.abi), true)
		} else {
			add("filesystem."+f.key, v, "not enforced: "+m.llErr.Error(), false)
		}
	}
	if s.NoNetwork {
		how := "new network namespace"
		if !m.root {
			how += " (in a user namespace)"
		}
		add(KeyNetwork, "false", how, true)
	}
	if m.euid0 {
		add("user", fmt.Sprintf("%d:%d", m.opt.User.UID, m.opt.User.GID), "the daemon is root: the call runs as this uid and gid, with no capability and no_new_privs", true)
	} else {
		add("user", "", "the daemon's uid and gid, with no capability and no_new_privs", true)
	}
	if m.cg.version != 0 {
		add("containment", "", cg+": every process of the call is killed when it ends, setsid ones included", true)
	} else {
		add("containment", "", "process group only: processes that leave it (setsid) outlive the call ("+noCg+")", false)
	}
	return out
}

// hasCapSysAdmin reads the effective capabilities of this process.
func hasCapSysAdmin() bool {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			var caps uint64
			fmt.Sscanf(strings.TrimSpace(v), "%x", &caps)
			return caps&(1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return false
}
