//go:build linux && (mips64 || mips64le)

package exechelper

const sysLandlockRestrictSelf = 5446 // n64: 5000 + 446
