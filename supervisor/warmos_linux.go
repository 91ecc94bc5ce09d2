//go:build !portable

package supervisor

// warmHere: warm call processes are handed their call's name for ps
// through /proc/PID/mem (warm_handover.go), which only Linux has.
const warmHere = true
