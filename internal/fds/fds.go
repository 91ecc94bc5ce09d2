// Package fds keeps what the daemon inherited from its parent out of
// every process it starts.
//
// A host, a shell or a supervisor may start mcp-bashd with descriptors
// open above stderr (an inetd leftover, a socket-activation socket, a
// file a wrapper opened on fd 7). Go opens its own descriptors
// close-on-exec, but inherited ones are not, so each fork+exec of a tool
// would hand them on: a tool whose writes Landlock limits to
// $MCP_CALL_TMPDIR could still write through one. None of mcp-bashd's
// features takes a descriptor above 2 from its parent except the drop-in
// form's snapshot descriptor, which the daemon itself reads and closes
// (--http-connection uses stdin and stdout), so every one is marked.
//
// It imports only the standard library and x/sys.
package fds

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecInherited marks every open descriptor above 2 close-on-exec,
// except keep, and returns how many it marked. It runs once, first thing
// in the daemon, before anything it starts could inherit one; the
// descriptors stay open and usable in the daemon itself.
func CloseOnExecInherited(keep ...int) (int, error) {
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return 0, err
	}
	marked := 0
next:
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= 2 {
			continue
		}
		for _, k := range keep {
			if fd == k {
				continue next
			}
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // the directory's own descriptor, closed by now, or one of Go's
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
			marked++
		}
	}
	return marked, nil
}
