package main

// The drop-in form: the shim's run_mcp_server starts the daemon as a child
// of the server script's shell, which waits for it (so that
// run_mcp_server returns at end of input) and passes on the host's
// signals. Two things only the daemon can do for that shell: find the
// script it is running, and die with it.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// scriptFD is where bash keeps the script it is reading open (its
// highest free descriptor under 256; always 255 in practice).
const scriptFD = 255

// scriptPath makes the server script's path absolute. The drop-in shim
// passes the name the script was started by, which is relative to where
// the shell started; the script may have changed directory since (the
// common `cd "$(dirname "$0")"`), so that name can lead nowhere, or
// elsewhere, from here. The shell's scriptFD names the file as the kernel
// resolved it at start; it is used unless the given name still leads to
// the same file (kept then, so a symlink's name stays what it was). Not a
// regular file there — `bash -c`, an interactive shell (a terminal) — or
// no shell: the name, from here, as in the manifest form.
func scriptPath(given string, shell int) (string, error) {
	abs, err := filepath.Abs(given)
	if err != nil || filepath.IsAbs(given) || shell <= 0 {
		return abs, err
	}
	link := fmt.Sprintf("/proc/%d/fd/%d", shell, scriptFD)
	open, err := os.Stat(link)
	if err != nil || !open.Mode().IsRegular() {
		return abs, nil
	}
	if st, err := os.Stat(abs); err == nil && os.SameFile(st, open) {
		return abs, nil
	}
	target, err := os.Readlink(link)
	if err != nil || !filepath.IsAbs(target) {
		return abs, nil
	}
	return target, nil
}

// errShellGone is a drop-in daemon whose shell died before it could watch.
var errShellGone = errors.New("the server script's shell is gone")

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
