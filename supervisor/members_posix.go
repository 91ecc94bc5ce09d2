//go:build darwin || (linux && portable)

package supervisor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// The members of a call's process group without /proc (macOS; the
// portable build on Linux runs this same logic over a /proc source, so
// the Linux suite tests it). A cancellation's grace lasts until no member
// but the lifeline sentinel is alive (CONTRACT 21); a zombie is not alive.

// member is one process of a group, as membersOf reports it.
type member struct {
	pid, ppid int
	zombie    bool
	start     int64  // start time, in the source's unit: only compared
	ignored   uint64 // the signals it ignores, bit N-1 for signal N
}

// ignores reports whether m ignores sig.
func (m member) ignores(sig unix.Signal) bool { return m.ignored&(1<<(uint(sig)-1)) != 0 }

// liveMember reports whether group pgid has a live member other than
// except; a group that cannot be listed is an error (the caller counts it
// as alive: a grace cut short would skip the SIGKILL of a tool that
// ignores TERM).
func liveMember(pgid, except int) (bool, error) {
	ms, err := membersOf(pgid)
	if err != nil {
		return true, fmt.Errorf("list group %d: %w", pgid, err)
	}
	for _, m := range ms {
		if m.pid != except && !m.zombie {
			return true, nil
		}
	}
	return false, nil
}

// sentinelOf finds the lifeline sentinel of group pgid without reading
// anyone's descriptors: the prelude forks it from the leader before any
// code of the server's runs, and it ignores TERM, INT and HUP from its
// first instruction. So it is the earliest started of the leader's
// children that ignore all three (a tie, within the source's clock: the
// lower pid, as pids are handed out in order). 0: none (the prelude has
// not forked it yet, or a tool killed it).
func (s *Supervisor) sentinelOf(pgid int) int {
	ms, err := membersOf(pgid)
	if err != nil {
		return 0
	}
	found := member{}
	for _, m := range ms {
		if m.ppid != pgid || m.pid == pgid || m.zombie ||
			!m.ignores(unix.SIGTERM) || !m.ignores(unix.SIGINT) || !m.ignores(unix.SIGHUP) {
			continue
		}
		if found.pid == 0 || m.start < found.start || m.start == found.start && m.pid < found.pid {
			found = m
		}
	}
	return found.pid
}
