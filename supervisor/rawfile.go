package supervisor

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// The call path's files are opened, written and read with plain system
// calls on raw descriptors, not through *os.File: an *os.File of a
// regular file still costs an epoll registration attempt, flag fiddling
// (F_GETFL/F_SETFL) when its descriptor is handed to a child, and a
// finalizer — about a third of the daemon's system calls per call, for
// files that are never polled. (Measured with strace -c -f; docs/
// operations.md, issue 13.)

// rawFile is a regular file of a call root open for reading.
type rawFile struct{ fd int }

// ReadAt reads len(p) bytes at off or up to the end of the file.
func (f rawFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Pread(f.fd, p[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f rawFile) Close() error { return unix.Close(f.fd) }

// writeNew creates path (mode 0600, truncated) holding data.
func writeNew(path string, data []byte) error {
	fd, err := openRaw(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		data = data[n:]
	}
	return unix.Close(fd)
}

// openAppendFD creates (or opens) a root file a child writes through its
// descriptors; the caller closes the descriptor once the child has it.
func openAppendFD(path string) (int, error) {
	return openRaw(path, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o600)
}

// openRaw is open(2) with O_CLOEXEC (a descriptor reaches a child only
// through its ProcAttr), retried on EINTR, its error naming the path.
func openRaw(path string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, mode)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// closeFD closes *fd once (a deferred close after an early one is a no-op).
func closeFD(fd *int) {
	if *fd >= 0 {
		unix.Close(*fd)
		*fd = -1
	}
}

// fdOf is f's descriptor for a child's fd table, on the rare paths (a
// load, the EXIT trap) that hold an *os.File.
func fdOf(f *os.File) int { return int(f.Fd()) }
