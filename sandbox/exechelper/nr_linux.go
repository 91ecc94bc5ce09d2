//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package exechelper

// landlock_restrict_self(2): one number on every architecture with the
// unified syscall table (the standard syscall package predates it).
const sysLandlockRestrictSelf = 446
