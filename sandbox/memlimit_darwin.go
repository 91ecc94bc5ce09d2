package sandbox

// memoryRlimit is the rlimit a memory limit is held by here; -1: none.
// macOS takes RLIMIT_DATA and RLIMIT_AS but does not apply them to
// memory mapped with mmap, which is how malloc gets its memory: a limit
// set there would be a promise not kept.
const memoryRlimit = -1

// memoryHow is what Describe says of a memory limit.
const memoryHow = "no memory limit on darwin: its kernel does not apply RLIMIT_DATA or RLIMIT_AS to mmap, which malloc uses"
