// Package lifeline owns the FIFO that ties every call's processes to the
// daemon's life.
//
// The daemon creates one FIFO in its private runtime directory and keeps
// the only write end open (close-on-exec, so no child ever inherits it).
// Each call is handed a read end as a file descriptor; the worker prelude
// forks a sentinel into the call's process group that blocks reading it.
// A read returns only at EOF, which happens exactly when the last writer —
// the daemon — is gone, however it died (SIGKILL included). The sentinel
// then SIGKILLs its own process group. The sentinel ignores TERM, INT and
// HUP so that a cancellation's SIGTERM to the group cannot remove it.
//
// Before a tool starts, the prelude polls the read end: if it is already
// readable (EOF, because the daemon died between fork and exec), the tool
// never runs.
//
// Concurrency: a Lifeline is created once at start and closed once at
// exit; ReadFD may be called from any goroutine.
//
// It imports nothing of this module.
package lifeline
