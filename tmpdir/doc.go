// Package tmpdir owns the directories the daemon creates under TMPDIR:
// its runtime directory (lifeline FIFO, server snapshot, bash prelude) and
// one root per call (mcp-call.XXXXXX, holding the call's output file and
// its MCP_CALL_TMPDIR, the subdirectory "tmp").
//
// Invariants:
//   - every directory is created mode 0700 and its path is absolute, even
//     when TMPDIR is relative;
//   - every directory carries an owner record (daemon pid and the kernel's
//     start time of that pid), so a later daemon can tell a root whose
//     owner is provably gone (removed by Sweep) from one a live daemon is
//     using (never touched);
//   - removal never follows symlinks and succeeds on subdirectories a tool
//     left read-only or with no permissions at all.
//
// Concurrency: all functions are safe to call from any goroutine; a Dir is
// owned by one call and removed once.
package tmpdir
