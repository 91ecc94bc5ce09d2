package main

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// ioctlGetTermios is the request that reads a terminal's settings.
const ioctlGetTermios = unix.TCGETS

// dieWithShell has the kernel SIGKILL this process when its parent, the
// drop-in server's shell, dies — whatever kills it, SIGKILL included,
// which no trap of the shell sees. Then it is as if the server had been
// SIGKILLed under the SDK: the lifeline kills every call's group, and the
// next daemon sweeps the temporary files. The setting belongs to the
// thread that makes it and is lost when that thread ends, which a thread
// does when a goroutine locked to it returns: this goroutine never does.
// A shell that died before the setting was made is seen in our parent
// pid, which is then no longer the shell's.
func dieWithShell(shell int) error {
	set := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		set <- unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
		select {}
	}()
	if err := <-set; err != nil {
		return fmt.Errorf("watch the server shell: %w", err)
	}
	if os.Getppid() != shell {
		return errShellGone
	}
	return nil
}
