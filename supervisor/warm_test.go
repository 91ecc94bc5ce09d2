package supervisor

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The address of the ps comment in a warm process's argv: found from
// AT_EXECFN, it is where /proc/PID/stat's arg_start says argv starts plus
// the comment's offset, and writing there changes what /proc/PID/cmdline
// (ps) shows.
func TestOpenArgvFindsTheComment(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	field := "warm     "
	argv := []string{bash, "--noprofile", "--norc", "-c", "read -r x # " + field, "ZERO", "arg one"}
	env := []string{"A=1", "LONGER_VARIABLE=" + strings.Repeat("v", 300)}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pid, err := syscall.ForkExec(bash, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{r.Fd(), 2, 2}})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		w.Close()
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	}()
	off := len(bash) + 1 + len("--noprofile") + 1 + len("--norc") + 1 + len("-c") + 1 + len(argv[4]) - len(field)
	fd, at := openArgv(pid, off, []byte(field), bash, argv, env)
	if fd < 0 {
		t.Fatal("openArgv found no argv")
	}
	defer unix.Close(fd)
	proc := "/proc/" + strconv.Itoa(pid)
	if start := argStart(proc); start+int64(off) != at {
		t.Fatalf("AT_EXECFN says %#x, arg_start %#x + %d = %#x", at, start, off, start+int64(off))
	}
	if _, err := unix.Pwrite(fd, []byte("call echo"), at); err != nil {
		t.Fatal(err)
	}
	cl, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if want := "read -r x # call echo\x00ZERO\x00arg one\x00"; !strings.HasSuffix(string(cl), want) {
		t.Fatalf("cmdline %q, want it to end %q", cl, want)
	}
	// Nothing is written where the bytes are not the ones expected.
	if fd2, _ := openArgv(pid, off, []byte("other    "), bash, argv, env); fd2 >= 0 {
		unix.Close(fd2)
		t.Fatal("openArgv accepted an address holding other bytes")
	}
}
