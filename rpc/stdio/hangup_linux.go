package stdio

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// watchHangup calls gone when the reader of f goes away, without writing
// anything: poll reports POLLERR on a pipe whose read end is closed and
// POLLHUP on a hung-up socket or terminal, and asking for no event waits
// for exactly those. A host that died closes our stdout while a call may
// run for minutes with nothing to write; this is how it is noticed at once.
//
// f must stay open for the life of the watch (stdout does): the descriptor
// is polled by number. On a file that cannot hang up (a regular file,
// /dev/null) the watch just waits, on a thread of its own.
func watchHangup(f *os.File, gone func()) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	fd := -1
	if rc.Control(func(u uintptr) { fd = int(u) }) != nil || fd < 0 {
		return
	}
	go func() {
		fds := []unix.PollFd{{Fd: int32(fd)}}
		for {
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || fds[0].Revents&unix.POLLNVAL != 0 {
				return // not ours to watch any more
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
		}
	}()
}
