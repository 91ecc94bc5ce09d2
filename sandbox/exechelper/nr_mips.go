//go:build linux && (mips || mipsle)

package exechelper

const sysLandlockRestrictSelf = 4446 // o32: 4000 + 446
