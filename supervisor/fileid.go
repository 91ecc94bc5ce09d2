package supervisor

import "golang.org/x/sys/unix"

// fileID names a file by device and inode.
type fileID struct{ dev, ino uint64 }

func statID(path string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}
