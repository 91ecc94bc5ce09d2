// Package supervisor owns the processes of a server: one bash process group
// per tool call, the cancel hooks and EXIT trap runs, the loads of the
// server script, the `list` runs of a tools directory, and the one loop
// that waits for every child of the daemon. It also owns the bash↔Go
// contracts: the snapshot file (snapshot.go) and the files of a call's root
// (callroot.go), each specified in its doc comment.
//
// Every process is started by one helper (spawn.go) as
// `bash --noprofile --norc -c '. "$__MCPBASHD_WORKER" # MODE …'` in a new
// process group: stdin /dev/null, stdout and stderr on files (a file, not a
// pipe, so a background child holding it open cannot hang anything), the
// lifeline's read end on fd 3. The worker prelude (scripts/worker.sh) forks
// the lifeline sentinel into the group first, whatever the mode; then it
// sources the server's snapshot and runs the hook and the tool function,
// the cancel hook or the EXIT trap — or runs `EXE list`, `bash -n`, or
// hands over to the load.
//
// Invariants:
//   - Every process the daemon starts carries the lifeline: if the daemon
//     dies, SIGKILL included, each group is killed by its sentinel.
//   - Exactly one goroutine waits for processes (the reaper). It learns of
//     an exit with waitid(WNOWAIT), so a group leader is still an unreaped
//     zombie when the rest of its group is SIGKILLed: the process group id
//     can never be signalled after the kernel could reuse it.
//   - A group is signalled only while its leader is registered (alive or an
//     unreaped zombie) or, in a cancellation's grace, while its sentinel —
//     then the daemon's child — pins it; every signal is sent under the
//     reaper's lock.
//   - Every process is spawned under the reaper's lock, so the reaper can
//     never mistake a just-forked leader for an orphan. A warm process the
//     fork server forked (zygote_linux.go) registers itself by a report
//     it writes once it is the daemon's child; the reaper reads pending
//     reports, under the same lock, before it takes an unknown child for
//     an orphan.
//   - On Linux the daemon is a child subreaper: detached grandchildren
//     (setsid, set -m jobs, orphaned double forks) are reparented to it and
//     reaped when they exit. Where there is none (macOS; -tags portable),
//     exits are reported per leader without reaping and a held group is
//     pinned by its leader's zombie (reaper_posix.go); orphans go to init.
//   - When a group's leader exits, everything left in its group is killed
//     (containment) before the exit is reported — but for a call being
//     cancelled, whose members get the grace (until only the sentinel is
//     alive, read from /proc) before the SIGKILL.
//   - The daemon reads a root's files only as regular files, opened without
//     following a symlink and without blocking, and never more of them
//     than a bound (the output cap; MessageCap per notification): a tool
//     can put anything at those paths. What a path the tool names means
//     is decided in the tool's own process (the shim copies it).
//
// Concurrency: Call, Load, Reload, ListTools and Current may be used from
// many goroutines; each call owns its root directory and its group. The
// current snapshot is swapped atomically: a call keeps the snapshot it
// started with. Close ends the reaper.
//
// A call whose tool declares limits (Request.Limits over Config.Limits)
// is started through package sandbox: one call to prepare it before the
// spawn (its cgroup, the exec helper's plan), one after its group leader
// exited (kill what is left in the cgroup, say which limits bit).
//
// It imports lifeline, tmpdir, scripts and sandbox; never rpc/ or cmd/ (it
// knows nothing of MCP: the wording of results lives in rpc/mcp).
package supervisor
