package supervisor

// siginfoChld is the part of siginfo_t that waitid fills for SIGCHLD on
// 64-bit Linux: three ints, padding to align the union, then si_pid.
type siginfoChld struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Pid   int32
	_     [108]byte
}
