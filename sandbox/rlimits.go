package sandbox

import (
	"github.com/mcp-bashd/mcp-bashd/sandbox/exechelper"
	"golang.org/x/sys/unix"
)

// rlimits are the per-process limits the exec helper sets for s. CPU
// time, file size and open files are always rlimits; memory is one only
// as mem (a resource, or -1 where the OS holds it otherwise or not at
// all), and processes only when procs says RLIMIT_NPROC is the mechanism
// (it is per user, and not enforced for root). Each OS's Call.rlimits
// decides those two.
func rlimits(s *Spec, mem int, procs bool) []exechelper.Rlimit {
	var out []exechelper.Rlimit
	add := func(res int, cur, max int64) {
		out = append(out, exechelper.Rlimit{Resource: res, Cur: uint64(cur), Max: uint64(max)})
	}
	if s.CPU > 0 {
		secs := int64(s.CPU.Seconds())
		// SIGXCPU at the soft limit; SIGKILL a second later for a process
		// that ignores it.
		add(unix.RLIMIT_CPU, secs, secs+1)
	}
	if s.FileSize > 0 {
		add(unix.RLIMIT_FSIZE, s.FileSize, s.FileSize)
	}
	if s.OpenFiles > 0 {
		add(unix.RLIMIT_NOFILE, s.OpenFiles, s.OpenFiles)
	}
	if s.Memory > 0 && mem >= 0 {
		add(mem, s.Memory, s.Memory)
	}
	if s.Processes > 0 && procs {
		add(unix.RLIMIT_NPROC, s.Processes, s.Processes)
	}
	return out
}
