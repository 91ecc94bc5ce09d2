package tests

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// cliOpenPTY: the pseudo-terminal ioctls used are Linux's.
func cliOpenPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	t.Skip("pseudo-terminal helper not ported to darwin")
	return nil, nil
}

// scPipeFull: macOS grows a pipe's buffer on demand and has no call that
// says its capacity, so a full pipe cannot be told apart.
func scPipeFull(t *testing.T, _ *os.File) {
	t.Helper()
	t.Skip("a pipe's capacity cannot be read on darwin")
}

// prlimit: macOS cannot change another process's rlimits (the callers
// skip on the error).
func prlimit(int, int, *unix.Rlimit, *unix.Rlimit) error {
	return errors.New("no prlimit on darwin")
}
