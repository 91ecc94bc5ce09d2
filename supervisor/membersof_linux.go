//go:build portable

package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// membersOf is the portable build's source of a group's members on
// Linux: /proc read into what macOS's sysctl gives (groupmembers_darwin.go),
// for the shared logic of members_posix.go to run on.
func membersOf(pgid int) ([]member, error) {
	var out []member
	err := eachProcess(func(pid int) bool {
		st, err := readStat(pid)
		if err != nil || st.pgrp != pgid {
			return true
		}
		m := member{pid: pid, ppid: st.ppid, zombie: st.state == 'Z' || st.state == 'X'}
		m.start, m.ignored = procStart(pid), procIgnored(pid)
		out = append(out, m)
		return true
	})
	return out, err
}

// procStart is starttime, field 22 of /proc/PID/stat (clock ticks).
func procStart(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 { // state is field 3; starttime, field 22, is f[19]
		return 0
	}
	n, _ := strconv.ParseInt(string(f[19]), 10, 64)
	return n
}

// procIgnored is SigIgn of /proc/PID/status.
func procIgnored(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n
		}
	}
	return 0
}
