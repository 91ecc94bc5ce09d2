package exechelper

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// restrict enforces a ruleset on this thread (no_new_privs is already set,
// for every plan: Landlock requires it of a process without
// CAP_SYS_ADMIN).
func restrict(fd int, flags uint32) error {
	if sysLandlockRestrictSelf == 0 {
		return errors.New("landlock_restrict_self: not known on " + runtime.GOARCH)
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(fd), uintptr(flags), 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}
