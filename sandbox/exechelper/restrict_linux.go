package exechelper

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// restrict enforces a ruleset on this thread. no_new_privs first: Landlock
// requires it of a process without CAP_SYS_ADMIN, and with it a setuid
// program the tool starts cannot gain privileges.
func restrict(fd int, flags uint32) error {
	const prSetNoNewPrivs = 38
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", e)
	}
	if sysLandlockRestrictSelf == 0 {
		return errors.New("landlock_restrict_self: not known on " + runtime.GOARCH)
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(fd), uintptr(flags), 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}
