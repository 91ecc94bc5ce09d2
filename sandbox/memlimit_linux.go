//go:build portable

package sandbox

import "golang.org/x/sys/unix"

// memoryRlimit is the rlimit a memory limit is held by in the portable
// build: Linux applies RLIMIT_DATA to mmap too (since 4.7).
const memoryRlimit = unix.RLIMIT_DATA

// memoryHow is what Describe says of a memory limit.
const memoryHow = "RLIMIT_DATA, per process (portable build: no cgroups)"
