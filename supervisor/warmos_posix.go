//go:build darwin || (linux && portable)

package supervisor

// warmHere: no warm call processes. Their hand-over writes the call's
// tool into the process's argv through /proc/PID/mem, which macOS has no
// counterpart of without a debugger's rights; every call starts its own
// process, as with --warm 0. The portable build on Linux does the same.
const warmHere = false
