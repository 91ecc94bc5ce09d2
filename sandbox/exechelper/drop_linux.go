//go:build linux

package exechelper

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// The prctl(2) and capset(2) constants the standard syscall package lacks.
const (
	prSetNoNewPrivs      = 38
	prCapBSetDrop        = 24
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	linuxCapVersion3     = 0x20080522
)

// noNewPrivs makes execve unable to grant privileges (setuid and
// file-capability programs run without them) for this thread and all it
// starts; it cannot be undone.
func noNewPrivs() error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", e)
	}
	return nil
}

// unshareCgroup gives the call a cgroup namespace rooted at the cgroup it
// just joined: on cgroup v2 the kernel refuses to move a process of the
// namespace to a cgroup outside it, whatever the file permissions.
func unshareCgroup() error {
	if err := syscall.Unshare(syscall.CLONE_NEWCGROUP); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWCGROUP): %w", err)
	}
	return nil
}

// dropPrivileges leaves this thread (the one that execs bash) with no
// capability in any set: ambient cleared, the bounding set emptied where
// it may be (CAP_SETPCAP: a root daemon, or a user namespace), and, when
// u is set, the supplementary groups, gid and uid switched to u's — a
// switch from uid 0 also clears the permitted and effective sets; then
// capset clears what is left (inheritable included). Raw syscalls on
// purpose: the other threads of this short-lived process die at execve.
func dropPrivileges(u *IDs) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
		return fmt.Errorf("clear the ambient capabilities: %w", e)
	}
	if err := dropBounding(); err != nil {
		return err
	}
	if u != nil {
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESGID, uintptr(u.GID), uintptr(u.GID), uintptr(u.GID)); e != 0 {
			return fmt.Errorf("setresgid %d: %w", u.GID, e)
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, uintptr(u.UID), uintptr(u.UID), uintptr(u.UID)); e != 0 {
			return fmt.Errorf("setresuid %d: %w", u.UID, e)
		}
	}
	hdr := struct {
		version uint32
		pid     int32
	}{linuxCapVersion3, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}

// dropBounding empties the bounding set, so that nothing the call runs
// can ever hold a capability again. Without CAP_SETPCAP (a daemon that is
// neither root nor in a user namespace) the first drop fails with EPERM
// and the set is left as it is: such a process has no capability to
// begin with, and no_new_privs keeps it so.
func dropBounding() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		_, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapBSetDrop, uintptr(c), 0, 0, 0, 0)
		switch {
		case e == 0:
		case e == syscall.EPERM && c == 0:
			return nil
		case e == syscall.EINVAL:
			return nil // past the kernel's last capability
		default:
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, e)
		}
	}
	return nil
}
