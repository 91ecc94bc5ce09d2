package harness

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HTTPDaemon is a running `mcp-bashd --http`.
type HTTPDaemon struct {
	Cmd *exec.Cmd
	Layout
	URL    string // the endpoint the daemon printed once it listened
	Stderr *Output
	Done   chan struct{} // closed once the daemon has exited
}

// StartHTTP starts the daemon o describes with --http on a loopback port
// the kernel picks, and returns once it prints the URL it serves.
func StartHTTP(t *testing.T, o Options) *HTTPDaemon {
	t.Helper()
	pre := []string{"--http", "--http-bind", "127.0.0.1", "--http-port", "0"}
	if o.Args != nil {
		pre = nil
	}
	cmd, l := o.command(t, pre...)
	d := StartHTTPCmd(t, cmd)
	d.Layout = l
	return d
}

// StartHTTPCmd starts cmd, an `mcp-bashd --http` on port 0 (or a script
// that runs one), and returns once it prints the URL it serves. A daemon
// that exits first, or prints no URL before the deadline, fails the test.
// A daemon still running at cleanup is stopped as Stop does: SIGTERM, and
// a daemon that does not exit by it fails the test.
func StartHTTPCmd(t *testing.T, cmd *exec.Cmd) *HTTPDaemon {
	t.Helper()
	d := &HTTPDaemon{Cmd: cmd, Stderr: &Output{}, Done: make(chan struct{})}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-d.Done:
			return
		default:
		}
		d.Stop(t)
	})
	urls := make(chan string, 1)
	go func() {
		r := bufio.NewReader(pipe)
		for {
			line, err := r.ReadString('\n')
			d.Stderr.Write([]byte(line))
			if u, ok := strings.CutPrefix(strings.TrimSpace(line), "mcp-bashd: serving "); ok {
				select {
				case urls <- u:
				default:
				}
			}
			if err != nil {
				break
			}
		}
		cmd.Wait()
		close(d.Done)
	}()
	select {
	case d.URL = <-urls:
	case <-d.Done:
		t.Fatalf("mcp-bashd --http exited before serving: %v\nstderr:\n%s", cmd.ProcessState, d.Stderr.String())
	case <-time.After(time.Until(Deadline(t))):
		t.Fatalf("mcp-bashd --http printed no URL\nstderr:\n%s", d.Stderr.String())
	}
	return d
}

// PID is the daemon's process id.
func (d *HTTPDaemon) PID() int { return d.Cmd.Process.Pid }

// Stop sends SIGTERM and returns how the daemon ended (killing it, and
// failing the test, if it does not end before the deadline).
func (d *HTTPDaemon) Stop(t *testing.T) *os.ProcessState {
	t.Helper()
	select {
	case <-d.Done:
		return d.Cmd.ProcessState
	default:
	}
	d.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.Done:
	case <-time.After(time.Until(Deadline(t))):
		d.Cmd.Process.Kill()
		<-d.Done
		t.Errorf("mcp-bashd --http did not exit after SIGTERM\nstderr:\n%s", d.Stderr.String())
	}
	return d.Cmd.ProcessState
}

// StopClean stops the daemon and expects it to die by that SIGTERM (its
// documented shutdown), leaving no process carrying mark behind.
func (d *HTTPDaemon) StopClean(t *testing.T, mark string) {
	t.Helper()
	ps := d.Stop(t)
	if ws, ok := ps.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("mcp-bashd --http after SIGTERM: %v, want killed by SIGTERM\nstderr:\n%s", ps, d.Stderr.String())
	}
	WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
}

// Post sends one JSON-RPC message to the daemon's URL with client, as
// application/json accepting accept, and returns the response (headers
// read, body not: the caller reads and closes it).
func (d *HTTPDaemon) Post(t *testing.T, client *http.Client, accept, msg string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.URL, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %.80s: %v", msg, err)
	}
	return resp
}
