package supervisor

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// The small calls each OS spells its own way.

// pipeCloexec makes a pipe whose ends are close-on-exec before any spawn
// can inherit them: macOS has no pipe2, so the pipe is made and marked
// under the fork lock, as package os does.
func pipeCloexec(p []int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p); err != nil {
		return err
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return nil
}

// renameNoReplace renames from to to, failing with EEXIST when to exists.
func renameNoReplace(from, to string) error { return unix.RenamexNp(from, to, unix.RENAME_EXCL) }
