//go:build linux && !portable

package tmpdir

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// removeEntries unlinks every entry of the open directory fd, a
// directory only as an empty one. One getdents64 is read: a root holds a
// handful of entries, and one that did not fit is left, so rmdir then
// fails and the full removal takes over.
func removeEntries(fd int) bool {
	var buf [8192]byte
	n, err := unix.Getdents(fd, buf[:])
	for err == unix.EINTR {
		n, err = unix.Getdents(fd, buf[:])
	}
	if err != nil {
		return false
	}
	for b := buf[:n]; len(b) >= 19; {
		// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			return false
		}
		typ, name := b[18], b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if s := string(name); s != "." && s != ".." {
			flags := 0
			if typ == unix.DT_DIR {
				flags = unix.AT_REMOVEDIR
			}
			err := unix.Unlinkat(fd, s, flags)
			if err == unix.EISDIR {
				err = unix.Unlinkat(fd, s, unix.AT_REMOVEDIR)
			}
			if err != nil && err != unix.ENOENT {
				return false
			}
		}
	}
	return true
}
