//go:build !linux

package exechelper

import (
	"errors"
	"runtime"
)

// Off Linux a plan holds rlimits only (package sandbox): there is no
// no_new_privs, no cgroup namespace and no capability set to drop, and a
// plan that asks for a cgroup namespace or another user was made
// elsewhere — then the call must not run.

func noNewPrivs() error { return nil }

func unshareCgroup() error {
	return errors.New("no cgroup namespaces on " + runtime.GOOS)
}

func dropPrivileges(u *IDs) error {
	if u != nil {
		return errors.New("no user switch for a sandboxed call on " + runtime.GOOS)
	}
	return nil
}
