// Package tmpdir owns the directories the daemon creates under TMPDIR:
// its runtime directory (lifeline FIFO, server snapshot, bash prelude) and
// one root per call (mcp-call.XXXXXX, holding the call's output file and
// its MCP_CALL_TMPDIR, the subdirectory "tmp").
//
// Invariants:
//   - every directory is created mode 0700 and its path is absolute, even
//     when TMPDIR is relative;
//   - every directory carries an owner record naming its daemon's runtime
//     directory, whose record the daemon keeps flock'ed for its whole life;
//     a later daemon removes (Sweep) only what belongs to a runtime whose
//     lock it can take — the kernel releases it when the owner dies, even
//     by SIGKILL, and the answer is the same from any pid namespace;
//   - removal never follows symlinks and succeeds on subdirectories a tool
//     left read-only or with no permissions at all.
//
// Concurrency: all functions are safe to call from any goroutine; a Dir is
// owned by one call and removed once.
//
// It imports nothing of this module.
package tmpdir
