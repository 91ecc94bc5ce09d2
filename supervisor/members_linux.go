//go:build linux && !portable

package supervisor

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// The members of a call's process group, read from /proc. A cancellation's
// grace lasts until no member but the lifeline sentinel is alive (the
// SDK's rule, CONTRACT 21): the sentinel ignores TERM and waits for the
// daemon's death, so counting it would hold every cancellation for the
// whole grace. A zombie is not alive: it can no longer act on anything,
// and the reaper collects the ones that are ours.

// liveMember reports whether group pgid has a live member other than
// except. A process that vanishes while it is looked at is not one; a
// scan that cannot list /proc is an error (the caller counts it as alive:
// a grace cut short would skip the SIGKILL of a tool that ignores TERM).
func liveMember(pgid, except int) (bool, error) {
	live := false
	err := eachProcess(func(pid int) bool {
		if pid == except {
			return true
		}
		st, err := readStat(pid)
		live = err == nil && st.pgrp == pgid && st.state != 'Z' && st.state != 'X'
		return !live
	})
	if err != nil {
		return true, fmt.Errorf("scan processes: %w", err)
	}
	return live, nil
}

// sentinelOf finds the lifeline sentinel of group pgid: the member other
// than the leader holding the lifeline FIFO on fd 3. The prelude forks the
// sentinel with fd 3 and closes fd 3 in the leader before it runs any code
// of the server's, so no other process of the call has it. 0: none (the
// prelude has not forked it yet, or a tool killed it).
func (s *Supervisor) sentinelOf(pgid int) int {
	// The prelude forks the sentinel from the leader, which is still
	// running when a stop begins: its children list names it without a
	// scan of every process (several ms on a busy machine, on the cancel
	// path). The scan remains for kernels without that file.
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/task/" + strconv.Itoa(pgid) + "/children"); err == nil {
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil && s.isSentinel(pid, pgid) {
				return pid
			}
		}
	}
	found := 0
	eachProcess(func(pid int) bool {
		if pid != pgid && s.isSentinel(pid, pgid) {
			found = pid
			return false
		}
		return true
	})
	return found
}

// isSentinel reports whether pid is in group pgid and holds the lifeline
// FIFO on fd 3.
func (s *Supervisor) isSentinel(pid, pgid int) bool {
	if st, err := readStat(pid); err != nil || st.pgrp != pgid {
		return false
	}
	id, ok := statID("/proc/" + strconv.Itoa(pid) + "/fd/3")
	return ok && id == s.lifeID
}
