// Package exechelper is the process side of a sandboxed call: this binary,
// started instead of bash with bash's argv and a Plan in the environment,
// applies the plan to its own process and execve's bash. Go's os/exec and
// syscall.ForkExec cannot set rlimits, join a cgroup or enforce a Landlock
// ruleset for a child alone; runc and bubblewrap re-execute themselves
// for the same reason.
//
// It runs in this package's init, not in main: Go initialises packages in
// import-path order once their imports are, and a package that imports
// nothing but the standard library runs before the binary's large
// dependencies (a JSON Schema library alone spends 7 ms in its init), so
// the helper costs a Go runtime start and no more. That is why it imports
// only the standard library (no x/sys, no go-landlock: their import paths
// sort after those dependencies and would delay it), and why the Landlock
// ruleset is built by the daemon and handed over as a descriptor: here it
// is only enforced.
//
// What it does, in order: join the call's cgroups (its pid into each
// cgroup.procs), enter a cgroup namespace rooted there when the plan says
// so, set no_new_privs, enforce the ruleset on this thread (the thread
// that execs), set the rlimits, close the ruleset descriptor, drop every
// capability (and, for a root daemon, switch to the plan's uid and gid),
// and execve bash with the same argv, environment less the plan,
// descriptors (fd 3, the lifeline, included) and process group. On any
// failure it says why on stderr (the call's output, so the result shows
// it) and exits 126: a call never runs with less than its plan.
package exechelper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// EnvPlan carries the Plan to the helper; it never reaches bash.
const EnvPlan = "__MCPBASHD_SANDBOX"

// Plan is what the helper does, decided by the daemon per call.
type Plan struct {
	Bash    string   `json:"bash"`
	Procs   []string `json:"procs,omitempty"` // cgroup.procs files to join
	Rlimits []Rlimit `json:"rlimits,omitempty"`
	// LandlockFD is the descriptor of a Landlock ruleset to enforce (the
	// daemon made it with go-landlock); -1: none.
	LandlockFD    int    `json:"landlock_fd"`
	LandlockFlags uint32 `json:"landlock_flags,omitempty"`
	// User is who the call runs as (a root daemon's calls: never root);
	// nil: the daemon's own uid and gid.
	User *IDs `json:"user,omitempty"`
	// CgroupNS: after joining its cgroup, the call gets a cgroup namespace
	// rooted there (the helper may: it is root or in a user namespace).
	CgroupNS bool `json:"cgroupns,omitempty"`
}

// IDs are a uid and a gid.
type IDs struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

// Rlimit is one setrlimit(2).
type Rlimit struct {
	Resource int    `json:"r"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

func init() {
	if raw, ok := os.LookupEnv(EnvPlan); ok {
		os.Exit(run(raw))
	}
}

// run applies the plan and becomes bash; it returns only on failure.
func run(raw string) int {
	// Landlock restricts the calling thread and what it execs: enforcing
	// and exec'ing must happen on one thread.
	runtime.LockOSThread()
	var p Plan
	if err := json.Unmarshal([]byte(raw), &p); err != nil || p.Bash == "" {
		return fail("bad plan", err)
	}
	for _, f := range p.Procs {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fail("join the call's cgroup", err)
		}
	}
	if p.CgroupNS {
		if err := unshareCgroup(); err != nil {
			return fail("cgroup namespace", err)
		}
	}
	// Always: no setuid or file-capability program the tool runs gains
	// privileges (Landlock needs it too).
	if err := noNewPrivs(); err != nil {
		return fail("no_new_privs", err)
	}
	if p.LandlockFD >= 0 {
		if err := restrict(p.LandlockFD, p.LandlockFlags); err != nil {
			return fail("filesystem rules (Landlock)", err)
		}
		syscall.Close(p.LandlockFD)
	}
	for _, r := range p.Rlimits {
		// syscall.Setrlimit also tells the runtime not to put back its own
		// RLIMIT_NOFILE at execve.
		if err := syscall.Setrlimit(r.Resource, &syscall.Rlimit{Cur: r.Cur, Max: r.Max}); err != nil {
			return fail("setrlimit "+strconv.Itoa(r.Resource), err)
		}
	}
	// Last, since joining cgroups and setting limits may need them: no
	// capability in any set, and a root daemon's call as p.User.
	if err := dropPrivileges(p.User); err != nil {
		return fail("drop privileges", err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvPlan+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(p.Bash, os.Args, env)
	if errors.Is(err, syscall.EACCES) && p.LandlockFD >= 0 {
		err = fmt.Errorf("%w (filesystem.read must allow bash and its libraries)", err)
	}
	return fail("exec "+p.Bash, err)
}

func fail(what string, err error) int {
	fmt.Fprintf(os.Stderr, "mcp-bashd sandbox: %s: %v\n", what, err)
	return 126
}
