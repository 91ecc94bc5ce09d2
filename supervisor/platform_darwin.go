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

// unreadIoctl is the ioctl that says how many bytes wait in a pipe.
const unreadIoctl = 0x4004667f // FIONREAD, _IOR('f', 127, int); x/sys/unix does not name it for darwin

// reserve: macOS has no fallocate(2) (F_PREALLOCATE extends the file's
// allocation, not a range of it); nothing is reserved, so a full TMPDIR
// is met when the call writes, as on a Linux filesystem that cannot
// reserve.
func reserve(int, int64) error { return nil }
