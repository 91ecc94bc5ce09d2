package supervisor

import (
	"testing"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the test process the reaper of its descendants'
// orphans, or skips.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("cannot become a child subreaper: %v", err)
	}
}

// waitAll also waits for children that are threads' (__WALL).
const waitAll = unix.WALL
