package tests

// Issue 23, items 9 and 11: a warm process that cannot take its call —
// stopped (a debugger, an operator's kill -STOP, a frozen cgroup), killed
// an instant before the call, or waiting in a TMPDIR that has filled up —
// is not handed it: the call gets a cold process, or the error a cold
// call gets, never a call that hangs or "Error executing TOOL: " alone.

import (
	"fmt"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// signalWarm sends sig to the group of every idle warm process.
func signalWarm(t *testing.T, d *harness.Daemon, sig syscall.Signal) map[int]proctest.Proc {
	t.Helper()
	warm := waitWarm(t, d)
	for pid := range warm {
		syscall.Kill(-pid, sig)
	}
	return warm
}

func TestWarmStoppedProcessIsNotHandedACall(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, nil))
	stopped := signalWarm(t, d, syscall.SIGSTOP)
	defer func() {
		for pid := range stopped {
			syscall.Kill(-pid, syscall.SIGCONT)
		}
	}()
	for pid := range stopped {
		proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("warm pid %d to be stopped", pid), func() (bool, string) {
			p, ok := rfProc(t, pid)
			return ok && p.State == 'T', p.String()
		})
	}
	d.Send(rfCall("1", "who", `{"i":"1"}`))
	r := harness.Parse(t, string(d.Recv()))
	if !strings.HasPrefix(r.First(), "pid=") || !strings.HasSuffix(r.First(), " __MCPBASHD_MODE=call") {
		t.Fatalf("the call after the warm processes were stopped: %q, want a cold process's answer", r.First())
	}
	if pid := rfInt(t, d.Dir, "who.1"); stopped[pid].PID != 0 {
		t.Fatalf("the call ran in stopped warm process %d", pid)
	}
}

// Twenty rounds: the warm processes are SIGKILLed and a call is sent at
// once, before the daemon can have reaped them.
func TestWarmKilledProcessCallGetsAnAnswer(t *testing.T) {
	d := harness.Start(t, rfServer(warmBody, []string{"who", "nap", "ps"}, nil))
	for i := 0; i < 20; i++ {
		signalWarm(t, d, syscall.SIGKILL)
		d.Send(rfCall(strconv.Itoa(i), "who", fmt.Sprintf(`{"i":"%d"}`, i)))
		r := harness.Parse(t, string(d.Recv()))
		if !strings.HasPrefix(r.First(), "pid=") {
			t.Fatalf("round %d: the call after its warm process was killed: isError %v, %q", i, r.Result != nil && r.Result.IsError, r.First())
		}
	}
}
