package supervisor

import "golang.org/x/sys/unix"

// The small calls each OS spells its own way.

// pipeCloexec makes a pipe whose ends are close-on-exec from the start.
func pipeCloexec(p []int) error { return unix.Pipe2(p, unix.O_CLOEXEC) }

// renameNoReplace renames from to to, failing with EEXIST when to exists.
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}

// unreadIoctl is the ioctl that says how many bytes wait in a pipe.
const unreadIoctl = unix.TIOCINQ // FIONREAD

// reserve allocates n bytes of fd without changing its size.
func reserve(fd int, n int64) error { return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, n) }
