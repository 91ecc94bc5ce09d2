//go:build !linux

package exechelper

import (
	"errors"
	"runtime"
)

// restrict has nothing to enforce a ruleset with here: Landlock is
// Linux's. The daemon refuses filesystem rules on this OS before any
// plan carries one (package sandbox), so this is reached only by a plan
// made elsewhere — and then the call must not run.
func restrict(int, uint32) error {
	return errors.New("filesystem rules: no Landlock on " + runtime.GOOS)
}
