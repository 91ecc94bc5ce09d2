// Package supervisor owns the processes of a server: one bash process group
// per tool call, the cancel hooks and EXIT trap runs, and the one loop that
// waits for every child of the daemon.
//
// A call is one `bash --noprofile --norc -c '. "$__MCPBASHD_WORKER"'` in a
// new process group: stdin /dev/null, stdout and stderr on one output file
// in the call's root (a file, not a pipe, so a background child holding it
// open cannot hang the call), the lifeline's read end on fd 3. The worker
// prelude (scripts/worker.sh) forks the lifeline sentinel, sources the
// server's snapshot and runs the hook and the tool function.
//
// Invariants:
//   - Exactly one goroutine waits for processes (the reaper). It learns of
//     an exit with waitid(WNOWAIT), so a call's group leader is still an
//     unreaped zombie when the rest of its group is SIGKILLed: the process
//     group id can never be signalled after the kernel could reuse it.
//   - A group is signalled only while its leader is registered (alive or an
//     unreaped zombie); every signal is sent under the reaper's lock.
//   - Every process is spawned under the reaper's lock, so the reaper can
//     never mistake a just-forked call leader for an orphan.
//   - The daemon is a child subreaper: detached grandchildren (setsid, set -m
//     jobs, orphaned double forks) are reparented to it and reaped when they exit.
//   - When a call's leader exits, everything left in its group is killed
//     (containment) before the exit is reported.
//
// Concurrency: Call may be used from many goroutines; each call owns its
// root directory and its group. Close ends the reaper.
package supervisor
