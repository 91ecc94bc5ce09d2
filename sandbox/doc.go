// Package sandbox owns the kernel limits of a tool call: the Spec a tool
// declares in its x-mcp-bashd entry (limits, filesystem, network) or the
// daemon sets as defaults, and how each is enforced on this kernel —
// rlimits, a cgroup per call (v2, or the v1 memory and pids controllers),
// Landlock filesystem rules, a new network namespace — and the sentences
// a result carries when a limit bit.
//
// A sandboxed call is started as this binary's exec helper (Exec, called
// first thing in main) with bash's argv: the helper joins the call's
// cgroup, restricts its own filesystem access, sets its rlimits, drops
// every capability (a root daemon's call also switches to Options.User,
// nobody by default) and execve's bash, so the limits hold from bash's
// first instruction and never apply to the daemon. The daemon side (Manager.Prepare, Call.Apply,
// Call.Finish) makes the cgroup, writes the plan, and at the end of the
// call kills everything left in the cgroup and reads its events.
//
// Invariants:
//   - A Spec that asks for nothing costs nothing: no helper, no cgroup.
//   - A sandboxed call cannot undo its sandbox: no capability in any set,
//     no_new_privs, never uid 0 (a root daemon's call runs as
//     Options.User, and its own files are given to that user, the
//     daemon's shared ones opened to its group: share), and a cgroup
//     namespace rooted at its cgroup where the helper may make one
//     (docs/security.md, "Root and non-root daemons").
//   - A call never runs with less than it declared where the kernel could
//     do it: a cgroup that cannot be made, or a network namespace that may
//     not be created, fails the call. Landlock is best effort by ABI
//     version (what is enforced is logged once), and so are limits with no
//     mechanism here (logged once, shown by `mcp-bashd call`).
//   - Where there are no cgroups, Landlock or network namespaces (macOS;
//     -tags portable on Linux: sandbox_posix.go) limits are rlimits, and a
//     limit with no mechanism refuses the call instead of being best effort.
//   - The daemon's own cgroups are mcp-bashd.PID under its cgroup, one
//     child per call, removed when the call ends; those of dead daemons are
//     swept when the next one starts.
//
// Concurrency: a Manager is used by many calls at once; what the kernel
// offers is probed once. A Call belongs to one call.
//
// It imports zap, x/sys and go-landlock; never the supervisor or rpc/.
package sandbox
