package catalog

import "syscall"

// ctimeOf is a stat's ctime: the field's name is the kernel's.
func ctimeOf(st *syscall.Stat_t) syscall.Timespec { return st.Ctim }
