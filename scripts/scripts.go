// Package scripts holds the bash side of mcp-bashd: the drop-in shim that
// replaces bash-mcp-sdk's mcpserver_core.sh, and the prelude every call's
// bash process sources. Both are embedded so the static binary carries
// them; `mcp-bashd shim` prints the shim.
//
// It imports nothing; the supervisor and the command line embed it.
package scripts

import _ "embed"

// Shim is scripts/mcpserver_core.sh.
//
//go:embed mcpserver_core.sh
var Shim string

// Worker is scripts/worker.sh, the per-call prelude.
//
//go:embed worker.sh
var Worker string

// WorkerCall is scripts/worker_call.sh, which worker.sh sources once the
// server's snapshot is: a warm process's wait for its call, then the hook
// and the tool (or the cancel hook, the EXIT trap).
//
//go:embed worker_call.sh
var WorkerCall string
