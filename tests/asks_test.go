package tests

// Issue 15 with real clients: tools that ask the client. The official Go
// SDK (v1.8.0, in process) answers elicitation/create, sampling/
// createMessage and roots/list with its handlers, over stdio and over
// Streamable HTTP in a session era; the tool echoes what each helper got,
// so every answer is checked to reach the tool, and every message the
// daemon sends (its requests to the client included) is checked against
// the official schema. A call cancelled, or timed out, while a helper waits
// for the client leaves no process behind.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// akServer is a manifest-mode server whose tools ask the client.
//
//   - ask: an elicitation (from the tool's shell), a sampling request
//     (from a background child), the roots (from a command substitution's
//     subshell), and the three again as one unit (mcp_ask_all); it prints
//     what each helper printed, one line each.
//   - confirm: the README's example: deletes only when the user accepts.
//   - wait: writes "PID PGID" to $AK_READY, then asks and waits; it
//     prints the helper's status if the helper ever returns.
const akServer = `tool_ask() {
    local e s r all
    e=$(mcp_elicit "Delete the file?" '{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}') || return
    mcp_sample '{"messages":[{"role":"user","content":{"type":"text","text":"Summarise: bash"}}],"maxTokens":20}' >"$MCP_CALL_TMPDIR/s" &
    wait $! || return
    s=$(<"$MCP_CALL_TMPDIR/s")
    r=$(mcp_roots) || return
    all=$(mcp_ask_all '{"r":{"method":"roots/list"},"p":{"method":"ping"}}') || return
    printf 'elicit=%s\nsample=%s\nroots=%s\nall=%s\n' "$e" "$s" "$r" "$all"
}
tool_confirm() {
    if ! mcp_elicit "Delete $1?" '{"type":"object","properties":{}}' >/dev/null 2>&1; then
        echo "kept"
        return 0
    fi
    echo "deleted"
}
tool_elicit() {
    mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'
}
tool_wait() {
    local pgid rest
    read -r _ _ _ _ pgid rest </proc/$BASHPID/stat
    printf '%s %s\n' "$BASHPID" "$pgid" >"$AK_READY.tmp"
    mv -f -- "$AK_READY.tmp" "$AK_READY"
    mcp_elicit "Wait for me" '{"type":"object","properties":{}}'
    echo "helper returned $?"
}
`

// akTools declares the tools; wait has a timeout only in the timeout case.
func akTools(waitTimeout string) string {
	wait := `{"name":"wait","description":"asks and waits","inputSchema":{"type":"object"}}`
	if waitTimeout != "" {
		wait = `{"name":"wait","description":"asks and waits","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"` + waitTimeout + `"}}`
	}
	return `{"tools":[{"name":"ask","description":"asks everything","inputSchema":{"type":"object"}},` +
		`{"name":"confirm","description":"deletes after a yes","inputSchema":{"type":"object"}},` +
		`{"name":"elicit","description":"asks a name","inputSchema":{"type":"object"}},` + wait + `]}`
}

// akClient is a Go SDK client whose handlers answer the daemon's requests
// and record what they were asked.
type akClient struct {
	elicited  chan *mcp.ElicitParams
	sampled   chan *mcp.CreateMessageParams
	decline   bool
	block     chan struct{} // when set, the first elicitation handler waits on it (or its ctx)
	blocked   atomic.Bool
	asked     chan struct{} // closed when a blocked handler was entered
	handlerCx chan error    // the blocked handler's ctx error when it gave up
}

func newAkClient() *akClient {
	return &akClient{elicited: make(chan *mcp.ElicitParams, 8), sampled: make(chan *mcp.CreateMessageParams, 8),
		asked: make(chan struct{}), handlerCx: make(chan error, 1)}
}

func (a *akClient) client() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcp-bashd-e2e-asks", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.elicited <- r.Params
			if a.block != nil && a.blocked.CompareAndSwap(false, true) {
				close(a.asked)
				select {
				case <-a.block:
				case <-ctx.Done():
					a.handlerCx <- ctx.Err()
					return nil, ctx.Err()
				}
			}
			if a.decline {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			a.sampled <- r.Params
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", StopReason: "endTurn",
				Content: &mcp.TextContent{Text: "bash is a shell"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///srv/project", Name: "project"})
	return c
}

// akSession is one connected client and how to look at its wire.
type akSession struct {
	cs     *mcp.ClientSession
	daemon int
	stderr *harness.Output
	wire   func() []clMsg
	check  func() // the schema check of everything the daemon sent
}

// akConnect starts the daemon (stdio, or --http behind the recording
// proxy) on a server dir and connects the client, pinned to version.
func akConnect(t *testing.T, a *akClient, overHTTP bool, version, mark string, env []string, script string) *akSession {
	t.Helper()
	t.Cleanup(func() { harness.KillMarked(mark) })
	s := &akSession{}
	var transport mcp.Transport
	if overHTTP {
		d := harness.StartHTTP(t, harness.Options{Script: script, Env: env, Marked: mark})
		proxy := cmStartProxy(t, d.URL)
		s.stderr, s.daemon = d.Stderr, d.Cmd.Process.Pid
		transport = &mcp.StreamableClientTransport{Endpoint: proxy.url, HTTPClient: &http.Client{}, MaxRetries: -1}
		s.wire = proxy.wire
		s.check = func() { cmCheckExchanges(t, proxy) }
	} else {
		cmd := harness.Command(t, harness.Options{Script: script, Env: env, Marked: mark})
		s.stderr = &harness.Output{}
		cmd.Stderr = s.stderr
		w := &clWire{}
		transport = &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: w}
		s.wire = w.all
		s.check = func() { clCheckWire(t, version, w.all()) }
		defer func() {
			if cmd.Process != nil { // started by Connect
				s.daemon = cmd.Process.Pid
			}
		}()
	}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	cs, err := a.client().Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, s.stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %q, want %q", got, version)
	}
	s.cs = cs
	return s
}

func akServerDir(t *testing.T, waitTimeout string) string {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": akServer, "tools.json": akTools(waitTimeout)})
	return filepath.Join(dir, "server.sh")
}

// Every helper's request reaches the client's handler as the tool wrote
// it, and every answer reaches the tool, over stdio and HTTP.
func TestAskAnswersFromTheGoSDKReachTheTool(t *testing.T) {
	for _, c := range []struct {
		name, version string
		http          bool
	}{{"stdio-2025-06-18", "2025-06-18", false}, {"stdio-2025-11-25", "2025-11-25", false}, {"http-2025-11-25", "2025-11-25", true}} {
		t.Run(c.name, func(t *testing.T) {
			a := newAkClient()
			s := akConnect(t, a, c.http, c.version, harness.Mark(t, "cl"), []string{"TMPDIR=" + t.TempDir()}, akServerDir(t, ""))
			ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
			defer cancel()
			res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("tools/call ask: %v\nstderr:\n%s", err, s.stderr.String())
			}
			text := akText(t, res)
			want := "elicit={\"action\":\"accept\",\"content\":{\"confirm\":true}}\n" +
				"sample={\"content\":{\"type\":\"text\",\"text\":\"bash is a shell\"},\"model\":\"test-model\",\"role\":\"assistant\",\"stopReason\":\"endTurn\"}\n" +
				"roots={\"roots\":[{\"name\":\"project\",\"uri\":\"file:///srv/project\"}]}\n" +
				"all={\"p\":{},\"r\":{\"roots\":[{\"name\":\"project\",\"uri\":\"file:///srv/project\"}]}}"
			if res.IsError || text != want {
				t.Fatalf("ask: isError=%v\n%s\nwant\n%s\nstderr:\n%s", res.IsError, text, want, s.stderr.String())
			}
			e := <-a.elicited
			schema, _ := json.Marshal(e.RequestedSchema)
			if e.Message != "Delete the file?" || string(schema) != `{"properties":{"confirm":{"type":"boolean"}},"required":["confirm"],"type":"object"}` {
				t.Errorf("the client was asked %q with schema %s", e.Message, schema)
			}
			p := <-a.sampled
			if len(p.Messages) != 1 || p.MaxTokens != 20 || p.Messages[0].Content.(*mcp.TextContent).Text != "Summarise: bash" {
				t.Errorf("the sampling request: %+v", p)
			}
			// A declined confirmation keeps the file (README example).
			a.decline = true
			res, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{"path": "x"}})
			if err != nil || akText(t, res) != "kept" {
				t.Errorf("confirm, declined: %+v %v", res, err)
			}
			a.decline = false
			res, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{"path": "x"}})
			if err != nil || akText(t, res) != "deleted" {
				t.Errorf("confirm, accepted: %+v %v", res, err)
			}
			// The server's requests use an id space of their own.
			for _, m := range s.wire() {
				if f := m.fields(t); m.In && f.Method == "elicitation/create" && !bytes.HasPrefix(f.ID, []byte(`"mcp-bashd-`)) {
					t.Errorf("server request id %s", f.ID)
				}
			}
			s.cs.Close()
			s.check()
		})
	}
}

// A client that did not declare a capability is never asked: the helper
// fails with a message naming it.
func TestAskForAnUndeclaredCapabilityFailsTheHelper(t *testing.T) {
	c := mcp.NewClient(&mcp.Implementation{Name: "no-caps", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cmd := harness.Command(t, harness.Options{Args: []string{akServerDir(t, "")}, TempDir: true})
	w := &clWire{}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	want := "mcp_elicit: the client did not declare the elicitation capability (in initialize), so it cannot be asked elicitation/create"
	if text := akText(t, res); !res.IsError || !strings.Contains(text, want) {
		t.Errorf("ask without capabilities: isError=%v %q, want %q", res.IsError, text, want)
	}
	for _, m := range w.all() {
		if f := m.fields(t); m.In && f.Method != "" && f.ID != nil {
			t.Errorf("the daemon sent a request to a client that declared nothing: %s", m.Line)
		}
	}
}

// The call is cancelled by the client, or its timeout passes, while the
// helper waits for the client's answer: the call's processes are gone, the
// client's handler is told to stop (notifications/cancelled), and its late
// answer, if any, is dropped without disturbing the session.
func TestCallEndsWhileTheAskHelperWaits(t *testing.T) {
	for _, c := range []struct {
		name    string
		http    bool
		timeout string
	}{{"stdio-cancel", false, ""}, {"stdio-timeout", false, "2s"}, {"http-cancel", true, ""}, {"http-timeout", true, "2s"}} {
		t.Run(c.name, func(t *testing.T) {
			a := newAkClient()
			a.block = make(chan struct{})
			mark := harness.Mark(t, "cl")
			ready := filepath.Join(t.TempDir(), "ready")
			s := akConnect(t, a, c.http, "2025-11-25", mark, []string{"TMPDIR=" + t.TempDir(), "AK_READY=" + ready}, akServerDir(t, c.timeout))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
				done <- outcome{res, err}
			}()
			select {
			case <-a.asked:
			case <-time.After(time.Until(harness.Deadline(t))):
				t.Fatalf("the client was never asked\nstderr:\n%s", s.stderr.String())
			}
			pgid := akReadyGroup(t, ready)
			if c.timeout == "" {
				cancel()
			}
			var o outcome
			select {
			case o = <-done:
			case <-time.After(time.Until(harness.Deadline(t))):
				t.Fatalf("the call did not end\nstderr:\n%s", s.stderr.String())
			}
			switch {
			case c.timeout == "" && !errors.Is(o.err, context.Canceled):
				t.Errorf("CallTool after cancel: %v, want context.Canceled", o.err)
			case c.timeout != "" && (o.err != nil || !o.res.IsError || !strings.Contains(akText(t, o.res), "timed out")):
				t.Errorf("CallTool past the timeout: %+v %v, want a timed-out error result", o.res, o.err)
			}
			akWaitCallGone(t, mark, s.daemon, pgid)
			// The daemon told the client to stop asking the user.
			select {
			case err := <-a.handlerCx:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the handler's context ended with %v", err)
				}
			case <-time.After(time.Until(harness.Deadline(t))):
				t.Errorf("the client's handler was never cancelled")
			}
			// The session goes on.
			close(a.block)
			cctx, ccancel := context.WithDeadline(context.Background(), harness.Deadline(t))
			defer ccancel()
			if res, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}}); err != nil || akText(t, res) != "deleted" {
				t.Errorf("a call after: %+v %v", res, err)
			}
			s.cs.Close()
			s.check()
		})
	}
}

// akWaitCallGone waits until nothing of the call is left: its group is
// empty and no marked process is alive but the daemon and the idle warm
// processes it keeps ready for later calls (their own groups, "# warm" in
// their command line; they carry the marker too).
func akWaitCallGone(t *testing.T, mark string, daemon, pgid int) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), "the call's processes to be gone", func() (bool, string) {
		marked, err := harness.Marked(mark, daemon)
		if err != nil {
			return false, err.Error()
		}
		group, err := proctest.InGroup(pgid)
		if err != nil {
			return false, err.Error()
		}
		warm := map[int]bool{}
		for _, p := range marked {
			if strings.Contains(strings.Join(p.Cmdline, " "), "# warm") {
				warm[p.PGID] = true
			}
		}
		var left []string
		for _, p := range append(marked, proctest.Alive(group)...) {
			if !warm[p.PGID] || p.PGID == pgid {
				left = append(left, p.String())
			}
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
}

// akReadyGroup reads the wait tool's "PID PGID" readiness file.
func akReadyGroup(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	f := strings.Fields(string(b))
	if err != nil || len(f) != 2 {
		t.Fatalf("readiness file: %q %v", b, err)
	}
	pgid, err := strconv.Atoi(f[1])
	if err != nil || pgid <= 1 {
		t.Fatalf("readiness file: %q", b)
	}
	return pgid
}

// akText is a result's text, without the newline the daemon may keep or
// drop at its end.
func akText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, not text", c)
		}
		b.WriteString(tc.Text)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// The TypeScript SDK v1 over stdio answers the tool's elicitation: the
// request it sees is the tool's, the answer reaches the tool, and every
// daemon message is valid for the negotiated revision.
func TestAskElicitationFromTheTypeScriptSDK(t *testing.T) {
	cmNodeModules(t)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	args := []string{harness.RepoPath("tests/clients/asks_client.mjs"), "--sdk", "v1"}
	for _, kv := range []string{harness.MarkKey + "=" + mark, "TMPDIR=" + t.TempDir()} {
		args = append(args, "--env", kv)
	}
	args = append(args, "--", harness.Binary, akServerDir(t, ""))
	n := cmStartNode(t, cmNode22(), "", nil, args...)
	var connected struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	n.event("connected", &connected)
	var r struct {
		Asked []struct {
			Message         string
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		Call struct {
			Result struct {
				Content []struct{ Type, Text string }
				IsError bool `json:"isError"`
			}
			Error *struct{ Message string }
		}
	}
	n.event("results", &r)
	if len(r.Asked) != 1 || r.Asked[0].Message != "Your name?" ||
		string(r.Asked[0].RequestedSchema) != `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}` {
		t.Errorf("the handler was asked %+v", r.Asked)
	}
	want := `{"action":"accept","content":{"name":"Ada from TypeScript"}}`
	if c := r.Call.Result.Content; r.Call.Error != nil || r.Call.Result.IsError || len(c) != 1 || strings.TrimSuffix(c[0].Text, "\n") != want {
		t.Errorf("the call: %+v, want the text %s", r.Call, want)
	}
	var done struct {
		ErrorsBeforeClose []string
		Exit              *clTSExit
		Wire              clTSWire
	}
	n.event("done", &done)
	if len(done.ErrorsBeforeClose) != 0 {
		t.Errorf("the SDK reported errors: %q", done.ErrorsBeforeClose)
	}
	if done.Exit == nil || !done.Exit.clean() {
		t.Errorf("daemon after the client closed stdin: %v", done.Exit)
	}
	clCheckWire(t, connected.ProtocolVersion, done.Wire.msgs())
}

// The README's example, as printed there: declined, the file stays;
// accepted, it is gone — with the Go SDK over stdio.
func TestAskReadmeDeleteExample(t *testing.T) {
	readme, err := os.ReadFile(harness.RepoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(readme, []byte("tool_delete_file() {"))
	end := bytes.Index(readme[max(start, 0):], []byte("\n}\n"))
	if start < 0 || end < 0 {
		t.Fatal("the README has no tool_delete_file example")
	}
	code := string(readme[start : start+end+3])
	dir := harness.WriteFiles(t, map[string]string{"server.sh": code, "tools.json": `{"tools":[{"name":"delete_file","description":"Deletes a file once the user agrees",` +
		`"inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]}`})
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newAkClient()
	s := akConnect(t, a, false, "2025-11-25", harness.Mark(t, "cl"), []string{"TMPDIR=" + t.TempDir()}, filepath.Join(dir, "server.sh"))
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	call := func() string {
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_file", Arguments: map[string]any{"path": victim}})
		if err != nil {
			t.Fatal(err)
		}
		return akText(t, res)
	}
	a.decline = true
	if got := call(); got != "Kept "+victim+": not confirmed." {
		t.Errorf("declined: %q", got)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("declined, yet the file is gone: %v", err)
	}
	a.decline = false
	if got := call(); got != "Deleted "+victim+"." {
		t.Errorf("accepted: %q", got)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Errorf("accepted, yet the file is still there: %v", err)
	}
	if e := <-a.elicited; e.Message != "Delete "+victim+"?" {
		t.Errorf("the question: %q", e.Message)
	}
	s.cs.Close()
	s.check()
}

// On the wire (stdio, 2025-06-18): the server's request carries an id of
// its own; when the client cancels the call while it waits, the daemon
// cancels its own request too, the call's group is gone, and the answer
// the client sends afterwards is dropped — nothing is written for it, the
// next request is answered, and the log says so at debug.
// akOwnID is the form of the ids the daemon gives its requests.
var akOwnID = regexp.MustCompile(`^"mcp-bashd-[0-9a-f]{32}"$`)

func TestAskLateAnswerIsDropped(t *testing.T) {
	tmp := t.TempDir()
	ready, logFile := filepath.Join(tmp, "ready"), filepath.Join(tmp, "daemon.log")
	s := harness.Start(t, harness.Options{Args: []string{akServerDir(t, "")}, Env: []string{"TMPDIR=" + tmp, "AK_READY=" + ready, "MCP_LOG_FILE=" + logFile}})
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"wire","version":"0"}}}`)
	s.Recv()
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	var asked struct {
		ID     json.RawMessage
		Method string
		Params struct{ Message string }
	}
	// The id: the server's own, and not one another client could guess.
	if err := json.Unmarshal(s.Recv(), &asked); err != nil || asked.Method != "elicitation/create" || !akOwnID.Match(asked.ID) || asked.Params.Message != "Wait for me" {
		t.Fatalf("the server's request: %+v %v", asked, err)
	}
	id := string(asked.ID)
	pgid := akReadyGroup(t, ready)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	if got := string(s.Recv()); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"the tool call ended"}}` {
		t.Errorf("after the client cancelled the call: %s", got)
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the call's group to be gone", func() (bool, string) {
		g, err := proctest.InGroup(pgid)
		return err == nil && len(proctest.Alive(g)) == 0, fmt.Sprint(g, err)
	})
	s.Send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{}}}`)
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("the line after the late answer: %s", got)
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the late answer's log line", func() (bool, string) {
		b, _ := os.ReadFile(logFile)
		return bytes.Contains(b, []byte(`"level":"debug"`)) && bytes.Contains(b, []byte(`"msg":"response to no pending request dropped","id":"\"`+strings.Trim(id, `"`)+`\""`)), string(b)
	})
}
