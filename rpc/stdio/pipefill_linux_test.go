package stdio

import (
	"testing"

	"golang.org/x/sys/unix"
)

// pipeFill is a pipe's capacity and how much of it is queued.
func pipeFill(_ *testing.T, fd uintptr) (size, queued int) {
	size, _ = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	queued, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	return size, queued
}
