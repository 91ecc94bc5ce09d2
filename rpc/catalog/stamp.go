package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// FileStamp is what tells that a file changed without reading it: inode,
// size, mtime, and ctime (which changes on every write, even one that keeps
// size and mtime). The zero value means "does not exist".
type FileStamp struct {
	ok    bool
	ino   uint64
	size  int64
	mtime time.Time
	ctime syscall.Timespec
}

// StampOf stats path.
func StampOf(path string) FileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return FileStamp{}
	}
	st := FileStamp{ok: true, size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino, st.ctime = sys.Ino, ctimeOf(sys)
	}
	return st
}

// DirStamp summarises a directory and the stamps of its entries: it
// changes when an entry is added, removed or edited. "" for no directory.
func DirStamp(dir string) string {
	if dir == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v;", StampOf(dir))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fmt.Fprintf(&b, "%s=%v;", e.Name(), StampOf(filepath.Join(dir, e.Name())))
	}
	return b.String()
}
