//go:build !linux || portable

package tmpdir

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// removeEntries unlinks every entry of the open directory fd, a
// directory only as an empty one. getdents64 is Linux's; elsewhere (and
// in the portable build on Linux) the directory is read through a
// duplicate of fd by the standard library, which gives each entry's type
// without a stat. One read of at most maxEntries: a root holds a handful,
// and one that holds more is left to the full removal (rmdir then fails).
func removeEntries(fd int) bool {
	// Close-on-exec: a spawn may run meanwhile.
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false
	}
	d := os.NewFile(uintptr(dup), "call root")
	defer d.Close()
	ents, err := d.ReadDir(maxEntries)
	if err != nil && len(ents) == 0 {
		return errors.Is(err, io.EOF) // an empty directory
	}
	for _, e := range ents {
		flags := 0
		if e.IsDir() {
			flags = unix.AT_REMOVEDIR
		}
		err := unix.Unlinkat(fd, e.Name(), flags)
		if err == unix.EISDIR || err == unix.EPERM && flags == 0 {
			err = unix.Unlinkat(fd, e.Name(), unix.AT_REMOVEDIR)
		}
		if err != nil && err != unix.ENOENT {
			return false
		}
	}
	return true
}

// maxEntries bounds the one read of removeEntries.
const maxEntries = 256
