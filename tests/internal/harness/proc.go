package harness

import (
	"os/exec"
	"testing"
	"time"
)

// Proc is a started process whose stdin and stdout the test wired itself
// (a socket, a pipe it reads when it chooses, a buffer): a daemon in
// handle-connection mode, socat in front of one, a daemon whose stdout
// the test closes. Its stderr is captured; it is killed and reaped at the
// test's cleanup if still running.
type Proc struct {
	Cmd    *exec.Cmd
	Stderr *Output
	Done   chan struct{} // closed once it has exited
	Err    error         // cmd.Wait's, once Done is closed
}

// Run starts cmd as a Proc.
func Run(t *testing.T, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, Stderr: &Output{}, Done: make(chan struct{})}
	if cmd.Stderr == nil {
		cmd.Stderr = p.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Err = cmd.Wait(); close(p.Done) }()
	t.Cleanup(func() {
		select {
		case <-p.Done:
		default:
			cmd.Process.Kill()
			<-p.Done
		}
	})
	return p
}

// RunCmd starts the process o describes as a Proc (o.Args after
// mcp-bashd or o.Exe); the caller sets its stdin and stdout in prepare.
func RunCmd(t *testing.T, o Options, prepare func(*exec.Cmd)) (*Proc, Layout) {
	t.Helper()
	cmd, l := o.command(t)
	if prepare != nil {
		prepare(cmd)
	}
	return Run(t, cmd), l
}

// Wait waits for the process to exit and returns cmd.Wait's error,
// failing the test (what names the process) at the deadline.
func (p *Proc) Wait(t *testing.T, what string) error {
	t.Helper()
	select {
	case <-p.Done:
		return p.Err
	case <-time.After(time.Until(Deadline(t))):
		t.Fatalf("%s did not exit before the deadline; stderr:\n%s", what, p.Stderr)
	}
	return nil
}
