//go:build !linux

package exechelper

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// noNewPrivs has no equivalent here: no_new_privs is Linux's. On macOS a
// setuid program a tool runs can still gain its owner's privileges;
// docs/security.md says so.
func noNewPrivs() error { return nil }

// unshareCgroup: cgroups are Linux's. The daemon refuses cgroup limits on
// this OS before a plan carries one (package sandbox).
func unshareCgroup() error {
	return errors.New("cgroup namespace: no cgroups on " + runtime.GOOS)
}

// dropPrivileges switches a root daemon's call to u's ids (POSIX calls;
// there are no capability sets to clear here).
func dropPrivileges(u *IDs) error {
	if u == nil {
		return nil
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(u.GID); err != nil {
		return fmt.Errorf("setgid %d: %w", u.GID, err)
	}
	if err := syscall.Setuid(u.UID); err != nil {
		return fmt.Errorf("setuid %d: %w", u.UID, err)
	}
	return nil
}
