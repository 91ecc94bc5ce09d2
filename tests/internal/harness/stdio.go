package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
)

// Daemon is a running mcp-bashd driven over its stdio.
type Daemon struct {
	T   *testing.T
	Cmd *exec.Cmd
	Layout
	Stdin    io.WriteCloser
	Lines    chan []byte // the daemon's stdout, one line each (newline kept)
	Stderr   *Output     // the daemon's stderr; read with String
	Revision string      // the negotiated revision the schema checks use
	Methods  sync.Map    // id literal -> method, for schema checks
	Done     chan struct{}
	WaitErr  error // how the daemon ended, once Done is closed

	next  int               // the last id Request used
	early map[string]string // responses that arrived while another was awaited
	Notes []string          // notifications and requests seen by Await
}

// Start writes o.Files and starts the daemon o describes over stdio. The
// daemon's stdin is closed at the test's cleanup (it is killed if it has
// not exited 30 s later).
func Start(t *testing.T, o Options) *Daemon {
	t.Helper()
	cmd, l := o.command(t)
	d := StartCmd(t, cmd)
	d.Layout = l
	if o.Revision != "" {
		d.Revision = o.Revision
	}
	if o.Init {
		if got := d.RoundTrip(InitLine); !strings.Contains(got, `"result"`) {
			t.Fatalf("initialize: %s", got)
		}
	}
	return d
}

// Exec starts an executable (a server script that runs mcp-bashd itself,
// bash with a script) with env added to this process's environment.
func Exec(t *testing.T, path string, args, env []string) *Daemon {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(Environ(false), env...)
	return StartCmd(t, cmd)
}

// StartCmd starts a prepared command over stdio: its stdin and stdout are
// the harness's, its stderr is captured in Stderr.
func StartCmd(t *testing.T, cmd *exec.Cmd) *Daemon {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{T: t, Cmd: cmd, Stdin: stdin, Lines: make(chan []byte, 1024), Stderr: &Output{}, Revision: "2024-11-05", Done: make(chan struct{}), early: map[string]string{}}
	cmd.Stderr = d.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go PumpLines(stdout, d.Lines)
	go func() { d.WaitErr = cmd.Wait(); close(d.Done) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-d.Done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-d.Done
		}
	})
	return d
}

// PID is the daemon's process id.
func (d *Daemon) PID() int { return d.Cmd.Process.Pid }

// Send writes one raw line (a newline is added).
func (d *Daemon) Send(line string) {
	d.T.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
		d.Methods.Store(string(m.ID), m.Method)
	}
	if _, err := io.WriteString(d.Stdin, line+"\n"); err != nil {
		d.T.Fatalf("write to server: %v", err)
	}
}

// Recv returns the next line from the daemon, after checking it is valid
// JSON and valid against the official schema of the current revision.
func (d *Daemon) Recv() []byte {
	d.T.Helper()
	select {
	case line, ok := <-d.Lines:
		if !ok {
			d.T.Fatalf("server closed stdout; stderr:\n%s", d.Stderr.String())
		}
		d.Check(line)
		return bytes.TrimSuffix(line, []byte("\n"))
	case <-time.After(time.Until(Deadline(d.T))):
		d.T.Fatalf("no response before the deadline; stderr:\n%s", d.Stderr.String())
	}
	return nil
}

// Check fails the test unless line is JSON valid against the schema of
// the negotiated revision (for a response: of the method it answers).
func (d *Daemon) Check(line []byte) {
	d.T.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		d.T.Fatalf("server wrote a line that is not JSON: %q", line)
	}
	method := ""
	if v, ok := d.Methods.Load(string(m.ID)); ok {
		method = v.(string)
	}
	if method == "initialize" && m.Result != nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Result, &r)
		d.Revision = r.ProtocolVersion
	}
	if !IsKnownMethod(method) {
		method = ""
	}
	if err := mcpschema.Check(d.Revision, method, line); err != nil {
		d.T.Errorf("response not valid for %s (%s): %v\n%s", d.Revision, method, err, line)
	}
}

// IsKnownMethod reports whether the schema checks know the result of m.
func IsKnownMethod(m string) bool {
	switch m {
	case "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/templates/list", "prompts/list":
		return true
	case "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/get", "completion/complete", "subscriptions/listen":
		return true
	}
	return false
}

// RoundTrip sends a request and returns the next line.
func (d *Daemon) RoundTrip(line string) string {
	d.T.Helper()
	d.Send(line)
	return string(d.Recv())
}

// Call sends tools/call for tool with args (a JSON object; "" leaves
// "arguments" out) under id and returns the next line, decoded.
func (d *Daemon) Call(id int, tool, args string) Response {
	d.T.Helper()
	return Parse(d.T, d.RoundTrip(CallLine(id, tool, args)))
}

// Request sends method with params ("" for none) under a fresh id and
// returns the response to it (see Await).
func (d *Daemon) Request(method, params string) string {
	d.T.Helper()
	d.next++
	id := fmt.Sprint(d.next)
	p := ""
	if params != "" {
		p = `,"params":` + params
	}
	d.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"` + p + `}`)
	return d.Await(id)
}

// Await returns the response to id (a JSON literal: 7, "x"), keeping the
// daemon's notifications and requests (in Notes) and responses to other
// ids (for a later Await) aside.
func (d *Daemon) Await(id string) string {
	d.T.Helper()
	if line, ok := d.early[id]; ok {
		delete(d.early, id)
		return line
	}
	for {
		line := string(d.Recv())
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal([]byte(line), &m)
		switch {
		case m.Method != "":
			d.Notes = append(d.Notes, line)
		case string(m.ID) == id:
			return line
		default:
			d.early[string(m.ID)] = line
		}
	}
}

// CloseAndWait closes stdin and waits for the exit, returning the status
// (nil for exit status 0).
func (d *Daemon) CloseAndWait() *exec.ExitError {
	d.T.Helper()
	d.Stdin.Close()
	select {
	case <-d.Done:
	case <-time.After(time.Until(Deadline(d.T))):
		d.T.Fatalf("server did not exit after stdin EOF; stderr:\n%s", d.Stderr.String())
	}
	if d.WaitErr == nil {
		return nil
	}
	ee, _ := d.WaitErr.(*exec.ExitError)
	return ee
}

// PumpLines sends every line read from r (newline kept) to lines, and
// closes lines at EOF or on a read error.
func PumpLines(r io.Reader, lines chan<- []byte) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			lines <- line
		}
		if err != nil {
			close(lines)
			return
		}
	}
}

// AwaitNote waits for the notification line want: first among Notes, then
// on the wire, for at most bound (a bound for a hang, not a timing
// assertion; after says since what, for the failure message). Responses
// that arrive meanwhile are kept for Await.
func (d *Daemon) AwaitNote(t *testing.T, want string, bound time.Duration, after string) {
	t.Helper()
	take := func() bool {
		for i, n := range d.Notes {
			if n == want {
				d.Notes = append(d.Notes[:i], d.Notes[i+1:]...)
				return true
			}
		}
		return false
	}
	if take() {
		return
	}
	timeout := time.After(min(bound, time.Until(Deadline(t))))
	for {
		select {
		case line, ok := <-d.Lines:
			if !ok {
				t.Fatalf("server closed stdout waiting for %s after %s\nstderr:\n%s", want, after, d.Stderr)
			}
			d.Check(line)
			line = bytes.TrimSuffix(line, []byte("\n"))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(line, &m)
			if m.Method == "" {
				d.early[string(m.ID)] = string(line)
				continue
			}
			d.Notes = append(d.Notes, string(line))
			if take() {
				return
			}
		case <-timeout:
			t.Fatalf("no %s within %v after %s; notifications seen: %q", want, bound, after, d.Notes)
		}
	}
}
