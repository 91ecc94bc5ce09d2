package supervisor

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// /proc, read the same way by the Linux build and by the portable build's
// source of group members (groupmembers_linux.go).

// procInfo is what /proc/PID/stat says of one process.
type procInfo struct {
	state byte
	ppid  int
	pgrp  int
}

// readStat reads /proc/PID/stat. The command name is in parentheses and
// may hold anything, spaces and parentheses included, so the fields are
// read after its last ")".
func readStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, errors.New("unreadable stat")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procInfo{}, errors.New("unreadable stat")
	}
	st := procInfo{state: f[0][0]}
	if st.ppid, err = strconv.Atoi(string(f[1])); err != nil {
		return procInfo{}, err
	}
	if st.pgrp, err = strconv.Atoi(string(f[2])); err != nil {
		return procInfo{}, err
	}
	return st, nil
}

// eachProcess calls fn for every process in /proc until fn returns false.
func eachProcess(fn func(pid int) bool) error {
	d, err := os.Open("/proc")
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 && !fn(pid) {
			return nil
		}
	}
	return nil
}
