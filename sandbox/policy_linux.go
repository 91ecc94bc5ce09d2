//go:build !portable

package sandbox

// RefusesUnenforceable: on Linux a limit with no mechanism on this kernel
// (no Landlock ABI, no pids cgroup for root) is best effort, logged once
// and shown by `mcp-bashd call`; the call runs (package doc).
const RefusesUnenforceable = false
