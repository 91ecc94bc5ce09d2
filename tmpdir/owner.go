package tmpdir

import (
	"os"
	"syscall"
)

func ownedBy(dir string, uid int) bool {
	fi, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
