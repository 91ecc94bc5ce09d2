package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The exec helper. Go's os/exec and syscall.ForkExec cannot set rlimits,
// join a cgroup or restrict the filesystem of a child alone, so a
// sandboxed call starts this binary instead of bash, with bash's argv
// unchanged and the plan in one environment variable; main hands over to
// Exec before anything else runs. The helper applies the plan to its own
// process and execve's bash with the same argv, environment (less the
// plan), descriptors (fd 3, the lifeline, included) and process group:
// from then on the process is the bash it would have been, limited — ps
// shows bash's argv even while the helper runs.

// envPlan carries the plan to the helper; it never reaches bash.
const envPlan = "__MCPBASHD_SANDBOX"

// plan is what the helper does, decided by the daemon per call.
type plan struct {
	Bash    string   `json:"bash"`
	Procs   []string `json:"procs,omitempty"` // cgroup.procs files to join
	Rlimits []rlimit `json:"rlimits,omitempty"`
	FS      *fsPlan  `json:"fs,omitempty"`
}

type rlimit struct {
	Resource int    `json:"r"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// fsPlan is a Landlock ruleset: the access rights it handles (everything
// not granted by a rule is denied for those) and the rules.
type fsPlan struct {
	Handled uint64   `json:"handled"`
	Rules   []fsRule `json:"rules"`
}

type fsRule struct {
	Path   string `json:"path"`
	Access uint64 `json:"access"`
}

// IsHelper reports whether this process was started as the exec helper.
func IsHelper() bool { _, ok := os.LookupEnv(envPlan); return ok }

// Exec applies the plan and becomes bash; it returns only on failure,
// with the exit status to use after it said why on stderr (the call's
// output, so the reason is in the result).
func Exec() int {
	// Landlock restricts the calling thread (and what it execs): the
	// restriction and the execve must happen on one thread.
	runtime.LockOSThread()
	var p plan
	if err := json.Unmarshal([]byte(os.Getenv(envPlan)), &p); err != nil || p.Bash == "" {
		return fail("bad plan", err)
	}
	for _, f := range p.Procs {
		if err := writeFile(f, strconv.Itoa(os.Getpid())); err != nil {
			return fail("join the call's cgroup", err)
		}
	}
	if p.FS != nil {
		if err := restrictFS(p.FS); err != nil {
			return fail("filesystem rules (Landlock)", err)
		}
	}
	for _, r := range p.Rlimits {
		// syscall.Setrlimit, not unix's: it tells the runtime not to put
		// back its own RLIMIT_NOFILE at execve.
		if err := syscall.Setrlimit(r.Resource, &syscall.Rlimit{Cur: r.Cur, Max: r.Max}); err != nil {
			return fail("set "+rlimitName(r.Resource), err)
		}
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPlan+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(p.Bash, os.Args, env)
	if errors.Is(err, syscall.EACCES) && p.FS != nil {
		err = fmt.Errorf("%w (filesystem.read must allow bash and its libraries)", err)
	}
	return fail("exec "+p.Bash, err)
}

func fail(what string, err error) int {
	fmt.Fprintf(os.Stderr, "mcp-bashd sandbox: %s: %v\n", what, err)
	return 126
}

// The access rights that apply to a regular file (the others are about
// directory entries, and the kernel refuses them on a file rule).
const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

// restrictFS enforces the ruleset on this thread. A path that does not
// exist is skipped: a rule only ever grants.
func restrictFS(fp *fsPlan) error {
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
		return err
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err // fd < 0: nothing this kernel can enforce
	}
	defer unix.Close(fd)
	// no_new_privs: a setuid program started by the tool cannot gain
	// privileges (Landlock requires it of a process without CAP_SYS_ADMIN).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return ll.LandlockRestrictSelf(fd, flags)
}

func rlimitName(r int) string {
	switch r {
	case unix.RLIMIT_AS:
		return "RLIMIT_AS"
	case unix.RLIMIT_DATA:
		return "RLIMIT_DATA"
	case unix.RLIMIT_CPU:
		return "RLIMIT_CPU"
	case unix.RLIMIT_FSIZE:
		return "RLIMIT_FSIZE"
	case unix.RLIMIT_NOFILE:
		return "RLIMIT_NOFILE"
	case unix.RLIMIT_NPROC:
		return "RLIMIT_NPROC"
	}
	return "rlimit " + strconv.Itoa(r)
}
