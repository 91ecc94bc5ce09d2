//go:build darwin || (linux && portable)

package supervisor

// idleWarm: this build keeps no warm processes (warmos_posix.go); the
// tests that need one skip (warm_test.go is Linux's).
func idleWarm(*Supervisor) []int { return nil }
