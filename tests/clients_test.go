package tests

// Real MCP clients over stdio: the official Go SDK (in process) and the
// official TypeScript SDK (node tests/clients/ts_client.mjs). Each one
// negotiates, lists, calls and cancels the way hosts do, and every message
// the daemon sends is also checked against the official schema of the
// negotiated revision.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// clTSSDKVersion is the TypeScript SDK that tests/clients/package.json pins.
const clTSSDKVersion = "1.32.2"

// clStopBound bounds how long a cancelled call's processes may outlive the
// cancel: the grace (2 s by default) plus a generous allowance for a loaded
// machine. It is a bound for a hang, not a timing assertion.
const clStopBound = 20 * time.Second

// clModernVersion is the stateless revision (server/discover, no session).
const clModernVersion = "2026-07-28"

// clLegacyVersions are the initialize revisions mcp-bashd negotiates.
var clLegacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// clHangServer is a manifest-mode server with a tool that runs until it is
// stopped. When it is running, with a child, it writes "PID PGID CHILD" to
// $CL_READY (atomically: written aside, then renamed).
const clHangServer = `tool_hang() {
    sleep 600 &
    local pgid rest
    read -r _ _ _ _ pgid rest </proc/$BASHPID/stat
    printf '%s %s %s\n' "$BASHPID" "$pgid" "$!" >"$CL_READY.tmp"
    mv -f -- "$CL_READY.tmp" "$CL_READY"
    wait
    echo "hang was not stopped"
}
tool_hello() { echo hello; }
`

// clMsg is one JSON-RPC message as it crossed the wire.
type clMsg struct {
	In   bool // read from the server (false: written to it)
	Line json.RawMessage
}

type clFields struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m clMsg) fields(t *testing.T) clFields {
	t.Helper()
	var f clFields
	if err := json.Unmarshal(m.Line, &f); err != nil {
		t.Fatalf("wire message is not JSON: %v: %s", err, m.Line)
	}
	return f
}

// clWire collects the messages the Go SDK's LoggingTransport reports; it
// writes one "read: MSG" or "write: MSG" line per message.
type clWire struct {
	mu    sync.Mutex
	msgs  []clMsg
	other []string
}

func (w *clWire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "read: "):
			w.msgs = append(w.msgs, clMsg{In: true, Line: json.RawMessage(strings.TrimPrefix(line, "read: "))})
		case strings.HasPrefix(line, "write: "):
			w.msgs = append(w.msgs, clMsg{Line: json.RawMessage(strings.TrimPrefix(line, "write: "))})
		default:
			w.other = append(w.other, line) // "read error: EOF" when the session closes
		}
	}
	return len(p), nil
}

func (w *clWire) all() []clMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// clCheckWire checks every message the server sent against the official
// schema of revision, knowing each response's method from the client's
// request with the same id.
func clCheckWire(t *testing.T, revision string, msgs []clMsg) {
	t.Helper()
	methods := map[string]string{}
	for _, m := range msgs {
		if f := m.fields(t); !m.In && f.ID != nil {
			methods[string(f.ID)] = f.Method
		}
	}
	n := 0
	for _, m := range msgs {
		if !m.In {
			continue
		}
		n++
		method := methods[string(m.fields(t).ID)]
		if !harness.IsKnownMethod(method) && !(revision == clModernVersion && method == "server/discover") {
			method = ""
		}
		if err := mcpschema.Check(revision, method, m.Line); err != nil {
			t.Errorf("server message not valid for %s (%s): %v\n%s", revision, method, err, m.Line)
		}
	}
	if n == 0 {
		t.Errorf("no server message was recorded")
	}
}

// clResponsesTo lists the server's responses to request id.
func clResponsesTo(t *testing.T, msgs []clMsg, id json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		if f := m.fields(t); m.In && f.Method == "" && bytes.Equal(f.ID, id) {
			out = append(out, string(m.Line))
		}
	}
	return out
}

// clRequestID is the id of the first request the client wrote for method
// (and, for tools/call, tool).
func clRequestID(t *testing.T, msgs []clMsg, method, tool string) json.RawMessage {
	t.Helper()
	for _, m := range msgs {
		f := m.fields(t)
		if m.In || f.Method != method || f.ID == nil {
			continue
		}
		if tool != "" {
			var p struct{ Name string }
			json.Unmarshal(f.Params, &p)
			if p.Name != tool {
				continue
			}
		}
		return f.ID
	}
	t.Fatalf("the client sent no %s %s request", method, tool)
	return nil
}

// clCancelsFor lists the notifications/cancelled the client wrote for id.
func clCancelsFor(t *testing.T, msgs []clMsg, id json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		f := m.fields(t)
		if m.In || f.Method != "notifications/cancelled" {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    *string         `json:"reason"`
		}
		json.Unmarshal(f.Params, &p)
		if bytes.Equal(p.RequestID, id) {
			out = append(out, string(m.Line))
		}
	}
	return out
}

// clReady waits for the hang tool's readiness file and checks that its
// processes are alive and carry the marker: without that, the later "gone"
// check could pass on processes the scan never saw.
func clReady(t *testing.T, path, mark string, daemon int) (pid, pgid, child int) {
	t.Helper()
	var fields []string
	proctest.WaitUntil(t, harness.Deadline(t), "the hang tool to report it is running", func() (bool, string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, err.Error()
		}
		fields = strings.Fields(string(b))
		return len(fields) == 3, fmt.Sprintf("%q", b)
	})
	ints := make([]int, 3)
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("readiness file %q: %v", fields, err)
		}
		ints[i] = n
	}
	pid, pgid, child = ints[0], ints[1], ints[2]
	marked, err := harness.Marked(mark, daemon)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range marked {
		seen[p.PID] = true
	}
	if !seen[pid] || !seen[child] {
		t.Fatalf("the running tool (bash %d, child %d) is not among the marked live processes: %v", pid, child, marked)
	}
	if pgid == daemon {
		t.Fatalf("the tool runs in the daemon's process group %d", pgid)
	}
	return pid, pgid, child
}

// clWaitGone waits until no process of the call is left: nothing marked but
// the daemon, nothing alive in the call's group.
func clWaitGone(t *testing.T, mark string, daemon, pgid int) {
	t.Helper()
	bound := time.Now().Add(clStopBound)
	if d := harness.Deadline(t); d.Before(bound) {
		bound = d
	}
	proctest.WaitUntil(t, bound, "the cancelled call's processes to be gone", func() (bool, string) {
		marked, err := harness.Marked(mark, daemon)
		if err != nil {
			return false, err.Error()
		}
		group, err := proctest.InGroup(pgid)
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range append(marked, proctest.Alive(group)...) {
			left = append(left, p.String())
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
}

// ---- Go SDK ----

// clGoConn is a Go SDK client session on a daemon it started.
type clGoConn struct {
	t         *testing.T
	cs        *mcp.ClientSession
	cmd       *exec.Cmd
	wire      *clWire
	stderr    *harness.Output
	closeOnce sync.Once
	closeErr  error
}

// clGoConnect starts `mcp-bashd args...` through the Go SDK's
// CommandTransport and connects. version "" is the SDK's default (probe
// server/discover with 2026-07-28, fall back to initialize). The daemon
// and everything it starts carry mark.
func clGoConnect(t *testing.T, version, mark string, env []string, args ...string) *clGoConn {
	t.Helper()
	// Marked processes are killed at cleanup, after the session's close.
	cmd := harness.Command(t, harness.Options{Args: args, Env: env, Marked: mark})
	c := &clGoConn{t: t, cmd: cmd, wire: &clWire{}, stderr: &harness.Output{}}
	cmd.Stderr = c.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-bashd-e2e-go", Version: "0"}, nil)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	transport := &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: c.wire}
	cs, err := client.Connect(ctx, transport, opts)
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		t.Fatalf("connect (version %q): %v\nwire: %v\nstderr:\n%s", version, err, c.wire.all(), c.stderr.String())
	}
	c.cs = cs
	t.Cleanup(func() { c.close() })
	return c
}

// close closes stdin and waits for the daemon to exit; the error is the
// daemon's exit status (nil: exit 0).
func (c *clGoConn) close() error {
	c.closeOnce.Do(func() { c.closeErr = c.cs.Close() })
	return c.closeErr
}

func (c *clGoConn) ctx() (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), harness.Deadline(c.t))
}

// call calls a tool and returns its single text item and isError.
func (c *clGoConn) call(name string, args any) (string, bool) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("tools/call %s: %v\nstderr:\n%s", name, err, c.stderr.String())
	}
	if len(res.Content) != 1 {
		c.t.Fatalf("tools/call %s: want one content item, got %d: %+v", name, len(res.Content), res.Content)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		c.t.Fatalf("tools/call %s: content is %T, not text", name, res.Content[0])
	}
	return text.Text, res.IsError
}

func (c *clGoConn) toolNames() []string {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// closeClean closes the session, expects exit 0, and checks the wire.
func (c *clGoConn) closeClean(revision string) {
	c.t.Helper()
	if err := c.close(); err != nil {
		c.t.Errorf("daemon exit after the client closed stdin: %v\nstderr:\n%s", err, c.stderr.String())
	}
	clCheckWire(c.t, revision, c.wire.all())
}

func clGreeterEnv(t *testing.T) []string {
	tmp := t.TempDir()
	return []string{"TMPDIR=" + tmp, "MCP_LOG_FILE=" + filepath.Join(tmp, "server.log")}
}

// clCheckGreeter runs the greeter's tools through a Go SDK session.
func clCheckGreeter(t *testing.T, c *clGoConn) {
	t.Helper()
	if got, want := c.toolNames(), []string{"greet", "count", "fail"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools/list names = %q, want %q", got, want)
	}
	if text, isErr := c.call("greet", map[string]any{"name": "Ada"}); text != "Hello, Ada" || isErr {
		t.Errorf("greet = %q isError=%v", text, isErr)
	}
	for i := 1; i <= 2; i++ {
		if text, isErr := c.call("count", map[string]any{}); text != strconv.Itoa(i) || isErr {
			t.Errorf("count #%d = %q isError=%v", i, text, isErr)
		}
	}
	if text, isErr := c.call("fail", map[string]any{}); text != "Error executing fail: this tool always fails" || !isErr {
		t.Errorf("fail = %q isError=%v", text, isErr)
	}
	if text, isErr := c.call("greet", map[string]any{"name": "Ada", "x": 1}); !strings.Contains(text, "Unknown parameter(s): x") || !isErr {
		t.Errorf("greet with an unknown argument = %q isError=%v", text, isErr)
	}
}

// The Go SDK's default connect probes server/discover with 2026-07-28.
// mcp-bashd speaks that revision, so the session is stateless: no
// initialize, and every request carries the version in its _meta. The
// greeter (manifest mode) then lists and calls, its count state kept across
// stateless calls.
func TestGoSDKDefaultGreeter(t *testing.T) {
	mark := harness.Mark(t, "cl")
	c := clGoConnect(t, "", mark, clGreeterEnv(t), harness.RepoPath("examples/greeter/server.sh"))
	ir := c.cs.InitializeResult()
	if ir.ProtocolVersion != clModernVersion {
		t.Errorf("negotiated %q, want %s", ir.ProtocolVersion, clModernVersion)
	}
	if ir.ServerInfo == nil || ir.ServerInfo.Name != "greeter" || ir.ServerInfo.Version != "1.0.0" {
		t.Errorf("serverInfo = %+v", ir.ServerInfo)
	}
	if ir.Instructions != "Use greet to say hello, count to count calls." {
		t.Errorf("instructions = %q", ir.Instructions)
	}
	if ir.Capabilities == nil || ir.Capabilities.Tools == nil {
		t.Errorf("capabilities declare no tools: %+v", ir.Capabilities)
	}

	msgs := c.wire.all()
	if len(msgs) < 2 {
		t.Fatalf("no discovery exchange: %v", msgs)
	}
	probe := msgs[0].fields(t)
	if msgs[0].In || probe.Method != "server/discover" || !strings.Contains(string(probe.Params), `"`+clModernVersion+`"`) {
		t.Fatalf("first message is not the SDK's server/discover probe with %s: %s", clModernVersion, msgs[0].Line)
	}
	answers := clResponsesTo(t, msgs, probe.ID)
	if len(answers) != 1 {
		t.Fatalf("server/discover answered %d times: %q", len(answers), answers)
	}
	var disc struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(answers[0]), &disc); !slices.Contains(disc.Result.SupportedVersions, clModernVersion) {
		t.Errorf("server/discover answer does not offer %s: %s", clModernVersion, answers[0])
	}

	clCheckGreeter(t, c)
	for _, m := range c.wire.all() {
		f := m.fields(t)
		if m.In || f.ID == nil {
			continue
		}
		if f.Method == "initialize" {
			t.Errorf("the SDK sent initialize on a %s session: %s", clModernVersion, m.Line)
		}
		if !strings.Contains(string(f.Params), `"io.modelcontextprotocol/protocolVersion":"`+clModernVersion+`"`) {
			t.Errorf("a request went out without the %s _meta version (not a stateless session?): %s", clModernVersion, m.Line)
		}
	}
	c.closeClean(ir.ProtocolVersion)
	harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
}

// Pinned to each older revision, the Go SDK skips the probe and the daemon
// answers initialize with exactly that revision.
func TestGoSDKPinnedVersions(t *testing.T) {
	for _, v := range clLegacyVersions {
		t.Run(v, func(t *testing.T) {
			c := clGoConnect(t, v, harness.Mark(t, "cl"), clGreeterEnv(t), harness.RepoPath("examples/greeter/server.sh"))
			if got := c.cs.InitializeResult().ProtocolVersion; got != v {
				t.Errorf("negotiated %q, want %q", got, v)
			}
			for _, m := range c.wire.all() {
				if f := m.fields(t); !m.In && f.Method == "server/discover" {
					t.Errorf("pinned to %s the SDK still probed: %s", v, m.Line)
				}
			}
			clCheckGreeter(t, c)
			c.closeClean(v)
		})
	}
}

// examples/plain in manifest mode: arguments arrive as the client's JSON.
func TestGoSDKPlainTools(t *testing.T) {
	c := clGoConnect(t, "", harness.Mark(t, "cl"), []string{"TMPDIR=" + t.TempDir()}, harness.RepoPath("examples/plain/tools.sh"))
	if got, want := c.toolNames(), []string{"echo", "sysinfo", "slow"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools/list names = %q, want %q", got, want)
	}
	args := map[string]any{"s": "$(touch /nonexistent/pwned) '\"quoted\"' `id` \\n new\nline", "n": 3.5, "list": []any{true, nil, "ü"}}
	text, isErr := c.call("echo", args)
	var back map[string]any
	if err := json.Unmarshal([]byte(text), &back); err != nil || isErr || !reflect.DeepEqual(back, args) {
		t.Errorf("echo round trip: isError=%v text %q, want the JSON of %#v", isErr, text, args)
	}
	if text, isErr := c.call("slow", map[string]any{"seconds": 0}); text != "slept 0s" || isErr {
		t.Errorf("slow 0 = %q isError=%v", text, isErr)
	}
	if text, isErr := c.call("sysinfo", map[string]any{}); !strings.HasPrefix(text, "bash ") || isErr {
		t.Errorf("sysinfo = %q isError=%v", text, isErr)
	}
	if text, isErr := c.call("slow", map[string]any{"seconds": "x"}); !isErr || !strings.Contains(text, "seconds") {
		t.Errorf("slow with a string = %q isError=%v, want a validation error naming seconds", text, isErr)
	}
	c.closeClean(c.cs.InitializeResult().ProtocolVersion)
}

// A context cancel around CallTool, in the SDK's default (stateless
// 2026-07-28) session and pinned to 2025-11-25: the SDK returns at once and
// sends notifications/cancelled; the daemon stops the tool's whole group,
// never answers that id, and the session goes on.
func TestGoSDKContextCancelStopsTool(t *testing.T) {
	for _, tc := range []struct{ pin, want string }{{"", clModernVersion}, {"2025-11-25", "2025-11-25"}} {
		t.Run(tc.want, func(t *testing.T) { clGoCancel(t, tc.pin, tc.want) })
	}
}

func clGoCancel(t *testing.T, pin, want string) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": clHangServer, "tools.json": harness.ToolsJSON("hang", "hello")})
	ready := filepath.Join(t.TempDir(), "ready")
	mark := harness.Mark(t, "cl")
	c := clGoConnect(t, pin, mark, []string{"CL_READY=" + ready, "TMPDIR=" + t.TempDir()}, filepath.Join(dir, "server.sh"))
	if got := c.cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated %q, want %q", got, want)
	}
	daemon := c.cmd.Process.Pid

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang", Arguments: map[string]any{}})
		errc <- err
	}()
	_, pgid, _ := clReady(t, ready, mark, daemon)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("CallTool after cancel returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("CallTool did not return after its context was cancelled")
	}
	clWaitGone(t, mark, daemon, pgid)

	msgs := c.wire.all()
	hangID := clRequestID(t, msgs, "tools/call", "hang")
	if cancels := clCancelsFor(t, msgs, hangID); len(cancels) != 1 {
		t.Errorf("the SDK sent %d notifications/cancelled for id %s, want 1: %q", len(cancels), hangID, cancels)
	}
	if text, isErr := c.call("hello", map[string]any{}); text != "hello" || isErr {
		t.Errorf("call after the cancel = %q isError=%v", text, isErr)
	}
	c.closeClean(want)
	if got := clResponsesTo(t, c.wire.all(), hangID); len(got) != 0 {
		t.Errorf("the daemon answered the cancelled request %s: %q", hangID, got)
	}
	harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
}

// ---- TypeScript SDK ----

// clNodeScript returns the TS client driver. Without node_modules it skips
// locally and fails under CI, where .ci/run installs them.
func clNodeScript(t *testing.T) string {
	t.Helper()
	pkg := harness.RepoPath("tests/clients/node_modules/@modelcontextprotocol/sdk/package.json")
	b, err := os.ReadFile(pkg)
	if err != nil {
		const why = "tests/clients/node_modules is not installed (run: npm ci --prefix tests/clients)"
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil || p.Version != clTSSDKVersion {
		t.Fatalf("installed @modelcontextprotocol/sdk is %q, package.json pins %s: run npm ci --prefix tests/clients", p.Version, clTSSDKVersion)
	}
	return harness.RepoPath("tests/clients/ts_client.mjs")
}

// clNode is a running ts_client.mjs.
type clNode struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *harness.Output
	done   chan struct{}
}

// clStartNode runs ts_client.mjs SCENARIO on `mcp-bashd serverArgs...`;
// the daemon gets the SDK's default environment plus mark and env.
func clStartNode(t *testing.T, scenario, mark string, env []string, serverArgs ...string) *clNode {
	t.Helper()
	args := []string{clNodeScript(t), scenario}
	for _, kv := range append([]string{harness.MarkKey + "=" + mark}, env...) {
		args = append(args, "--env", kv)
	}
	args = append(append(args, "--", harness.Binary), serverArgs...)
	cmd := exec.Command(cmNode22(), args...)
	return clRunNode(t, cmd, func() { harness.KillMarked(mark) })
}

// clRunNode starts a node client as a clNode: its stdout lines on a
// channel, stdin for the test's words; at cleanup stdin is closed, node
// gets 10 s to exit, then after() runs.
func clRunNode(t *testing.T, cmd *exec.Cmd, after func()) *clNode {
	t.Helper()
	n := &clNode{t: t, cmd: cmd, lines: make(chan []byte, 64), stderr: &harness.Output{}, done: make(chan struct{})}
	cmd.Stderr = n.stderr
	// The daemon inherits node's stderr: should node die first, Wait must
	// not wait for the daemon to let go of the pipe.
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n.stdin = stdin
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	go harness.PumpLines(stdout, n.lines)
	go func() { cmd.Wait(); close(n.done) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-n.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-n.done
		}
		if after != nil {
			after()
		}
	})
	return n
}

// event waits for the next JSON line from node and checks its "event".
func (n *clNode) event(want string, v any) {
	n.t.Helper()
	select {
	case line, ok := <-n.lines:
		if !ok {
			<-n.done
			n.t.Fatalf("node exited before %q: %v\nstderr:\n%s", want, n.cmd.ProcessState, n.stderr.String())
		}
		var e struct{ Event, Error string }
		if err := json.Unmarshal(line, &e); err != nil {
			n.t.Fatalf("node printed a non-JSON line: %q", line)
		}
		if e.Event != want {
			n.t.Fatalf("node event %q (want %q): %s\nstderr:\n%s", e.Event, want, line, n.stderr.String())
		}
		if err := json.Unmarshal(line, v); err != nil {
			n.t.Fatalf("decode %s event: %v", want, err)
		}
	case <-time.After(time.Until(harness.Deadline(n.t))):
		n.t.Fatalf("no %q event from node before the deadline\nstderr:\n%s", want, n.stderr.String())
	}
}

func (n *clNode) tell(word string) {
	n.t.Helper()
	if _, err := n.stdin.Write([]byte(word + "\n")); err != nil {
		n.t.Fatalf("tell node %q: %v", word, err)
	}
}

type clTSWire []struct {
	Dir string          `json:"dir"`
	Msg json.RawMessage `json:"msg"`
}

func (w clTSWire) msgs() []clMsg {
	var out []clMsg
	for _, m := range w {
		out = append(out, clMsg{In: m.Dir == "in", Line: m.Msg})
	}
	return out
}

type clTSResult struct {
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Name    string `json:"name"`
		Code    *int   `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// text is the single text item of a successful request.
func (r clTSResult) text(t *testing.T, what string) (string, bool) {
	t.Helper()
	if r.Error != nil || r.Result == nil {
		t.Errorf("%s: request failed: %+v", what, r.Error)
		return "", false
	}
	if len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" {
		t.Errorf("%s: want one text item, got %+v", what, r.Result.Content)
		return "", false
	}
	return r.Result.Content[0].Text, r.Result.IsError
}

type clTSExit struct {
	Code   *int    `json:"code"`
	Signal *string `json:"signal"`
}

func (e clTSExit) clean() bool { return e.Signal == nil && e.Code != nil && *e.Code == 0 }

func (e clTSExit) String() string {
	if e.Signal != nil {
		return "signal " + *e.Signal
	}
	if e.Code != nil {
		return "exit " + strconv.Itoa(*e.Code)
	}
	return "unknown"
}

// The TypeScript SDK (host manifest form: `mcp-bashd server.sh` with only
// the SDK's six variables plus ours) negotiates, lists and calls.
func TestTypeScriptSDKGreeter(t *testing.T) {
	mark := harness.Mark(t, "cl")
	n := clStartNode(t, "greeter", mark, clGreeterEnv(t), harness.RepoPath("examples/greeter/server.sh"))
	var done struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name, Version string }
		Instructions    string
		Capabilities    map[string]json.RawMessage
		Tools           []struct{ Name string }
		Calls           map[string]clTSResult
		Errors          []string
		Exit            clTSExit
		Wire            clTSWire
	}
	n.event("done", &done)
	if done.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", done.ProtocolVersion)
	}
	if done.ServerInfo.Name != "greeter" || done.ServerInfo.Version != "1.0.0" {
		t.Errorf("serverInfo = %+v", done.ServerInfo)
	}
	if done.Instructions != "Use greet to say hello, count to count calls." {
		t.Errorf("instructions = %q", done.Instructions)
	}
	if _, ok := done.Capabilities["tools"]; !ok {
		t.Errorf("capabilities declare no tools: %v", done.Capabilities)
	}
	var names []string
	for _, tool := range done.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"greet", "count", "fail"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tools/list names = %q, want %q", names, want)
	}
	check := func(call, wantText string, wantErr bool) {
		t.Helper()
		if text, isErr := done.Calls[call].text(t, call); text != wantText || isErr != wantErr {
			t.Errorf("%s = %q isError=%v, want %q isError=%v", call, text, isErr, wantText, wantErr)
		}
	}
	check("greet", "Hello, Ada", false)
	check("count1", "1", false)
	check("count2", "2", false)
	check("fail", "Error executing fail: this tool always fails", true)
	if text, isErr := done.Calls["invalid"].text(t, "invalid"); !strings.Contains(text, "Unknown parameter(s): x") || !isErr {
		t.Errorf("greet with an unknown argument = %q isError=%v", text, isErr)
	}
	if len(done.Errors) != 0 {
		t.Errorf("the SDK reported errors: %q", done.Errors)
	}
	if !done.Exit.clean() {
		t.Errorf("daemon after the client closed stdin: %s, want exit 0\nnode stderr:\n%s", done.Exit, n.stderr.String())
	}
	clCheckWire(t, done.ProtocolVersion, done.Wire.msgs())
	harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
}

// An AbortSignal on a slow call: the SDK sends notifications/cancelled and
// rejects at once; the daemon stops the tool's whole group, never answers
// that id (checked up to the daemon's exit), and serves the next call.
func TestTypeScriptSDKAbortStopsTool(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": clHangServer, "tools.json": harness.ToolsJSON("hang", "hello")})
	ready := filepath.Join(t.TempDir(), "ready")
	mark := harness.Mark(t, "cl")
	n := clStartNode(t, "abort", mark, []string{"CL_READY=" + ready, "TMPDIR=" + t.TempDir()}, filepath.Join(dir, "server.sh"))
	var connected struct {
		ServerPid       int    `json:"serverPid"`
		ProtocolVersion string `json:"protocolVersion"`
	}
	n.event("connected", &connected)
	if connected.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", connected.ProtocolVersion)
	}
	var calling struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	n.event("calling", &calling)
	if len(calling.RequestID) == 0 || string(calling.RequestID) == "null" {
		t.Fatal("node did not see its tools/call request go out")
	}
	_, pgid, _ := clReady(t, ready, mark, connected.ServerPid)

	n.tell("abort")
	var aborted struct {
		Outcome clTSResult
		Cancels []struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
				Reason    *string         `json:"reason"`
			} `json:"params"`
		}
	}
	n.event("aborted", &aborted)
	if aborted.Outcome.Error == nil || !strings.Contains(aborted.Outcome.Error.Message, "aborted") {
		t.Errorf("the aborted call did not reject with the abort error: %+v", aborted.Outcome)
	}
	if len(aborted.Cancels) != 1 || !bytes.Equal(aborted.Cancels[0].Params.RequestID, calling.RequestID) || aborted.Cancels[0].Params.Reason == nil {
		t.Errorf("want one notifications/cancelled {requestId: %s, reason}, got %+v", calling.RequestID, aborted.Cancels)
	}
	clWaitGone(t, mark, connected.ServerPid, pgid)

	n.tell("continue")
	var done struct {
		FollowUp clTSResult
		Errors   []string
		Exit     clTSExit
		Wire     clTSWire
	}
	n.event("done", &done)
	if text, isErr := done.FollowUp.text(t, "hello after the abort"); text != "hello" || isErr {
		t.Errorf("call after the abort = %q isError=%v", text, isErr)
	}
	if len(done.Errors) != 0 {
		t.Errorf("the SDK reported errors (a response for the aborted id shows up here): %q", done.Errors)
	}
	if !done.Exit.clean() {
		t.Errorf("daemon after the client closed stdin: %s, want exit 0\nnode stderr:\n%s", done.Exit, n.stderr.String())
	}
	msgs := done.Wire.msgs()
	if got := clResponsesTo(t, msgs, calling.RequestID); len(got) != 0 {
		t.Errorf("the daemon answered the aborted request %s: %q", calling.RequestID, got)
	}
	clCheckWire(t, connected.ProtocolVersion, msgs)
	harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
}
