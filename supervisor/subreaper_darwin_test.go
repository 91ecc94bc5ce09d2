package supervisor

import "testing"

// becomeSubreaper: macOS has no child subreaper.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	t.Skip("no child subreaper on darwin")
}

// waitAll: wait4 has no __WALL here.
const waitAll = 0
