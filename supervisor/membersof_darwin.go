package supervisor

import "golang.org/x/sys/unix"

// membersOf lists group pgid through sysctl kern.proc.pgrp: one call,
// no /proc (macOS has none). A group with no process left is an empty
// list.
func membersOf(pgid int) ([]member, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil, err
	}
	out := make([]member, 0, len(kps))
	for i := range kps {
		p := &kps[i].Proc
		if int(kps[i].Eproc.Pgid) != pgid {
			continue
		}
		out = append(out, member{
			pid:     int(p.P_pid),
			ppid:    int(kps[i].Eproc.Ppid),
			zombie:  p.P_stat == sZomb,
			start:   p.P_starttime.Sec*1_000_000 + int64(p.P_starttime.Usec),
			ignored: uint64(p.P_sigignore),
		})
	}
	return out, nil
}
