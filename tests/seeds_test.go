package tests

// Every seed system (shared/seeds/, issue 5) runs unchanged under
// mcp-bashd, with servers written exactly as their documents show:
//
//   - 002, the 2026-07-28 bash SDK: examples/weather is that README's
//     weather server, both SDK files swapped for the shim; ./weatherserver.sh
//     over stdio and ./weatherserver.sh --http, by hand and with the Go SDK.
//   - 001, a tools/ directory of executables answering `list`:
//     examples/toolsdir, served by mcp-bashd --tools-dir, plus duplicate
//     names, bad `list` output, skipped executables, pass-through results.
//   - 003, the tutorial's minimal handshake: its exact client messages
//     against examples/tutorial.
//   - 000, the SDK's in-process API that server authors' own tests call
//     (process_request, handle_*, validate_tool_arguments, ...).

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
)

// sdModern is the stateless revision the 2026 SDK speaks.
const sdModern = "2026-07-28"

// sdMeta is the _meta every 2026-07-28 request carries (the README's
// Quick Start sends exactly this).
const sdMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// sdWeatherMeta is what every 2026 result of the weather server ends with.
const sdWeatherMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"WeatherServer","version":"1.0.0"}}`

// sdLondon is the weather server's canned answer for London.
const sdLondon = `{"location":"London","temperature_c":11,"conditions":"Light rain","humidity":82}`

// sdEnv is the test's environment without MCP_* variables (a developer's
// MCP_LOG_STDERR or MCP_HTTP_PORT must not leak in), plus extra.
func sdEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCP_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// sdMark tags a daemon and everything it starts (found through /proc).
func sdMark(t *testing.T) string {
	return harness.MarkKey + "=" + harness.Mark(t, "sd")
}

// sdWeather is ./weatherserver.sh ARGS run from its own directory, as
// the README runs it.
func sdWeather(args []string, env ...string) harness.Options {
	return harness.Options{Exe: "./weatherserver.sh", Args: append([]string{}, args...), WorkDir: harness.RepoPath("examples/weather"),
		CleanEnv: true, TempDir: true, Mark: "sd", Env: append([]string{"MCP_BASHD=" + harness.Binary}, env...)}
}

// sdDaemon is mcp-bashd ARGS with a clean environment.
func sdDaemon(args []string, env ...string) harness.Options {
	return harness.Options{Args: args, CleanEnv: true, TempDir: true, Mark: "sd", Env: env}
}

// sdText is the single text item of a tools/call result and its isError.
func sdText(t *testing.T, line string) (string, bool) {
	t.Helper()
	r := harness.Parse(t, line)
	if r.Result == nil || len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" {
		t.Fatalf("want a result with one text item, got %s", line)
	}
	return r.Result.Content[0].Text, r.Result.IsError
}

// sdWantLine compares a response line with the exact bytes expected.
func sdWantLine(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// sdSameJSON reports whether two JSON texts hold the same value (member
// order aside).
func sdSameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// ---- Go SDK client ----

// sdWire keeps what the Go SDK's LoggingTransport saw the server send, to
// check it against the official schema.
type sdWire struct {
	mu   sync.Mutex
	in   []string
	sent map[string]string // request id -> method
}

func (w *sdWire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "read: "):
			w.in = append(w.in, strings.TrimPrefix(line, "read: "))
		case strings.HasPrefix(line, "write: "):
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "write: ")), &m) == nil && m.ID != nil {
				if w.sent == nil {
					w.sent = map[string]string{}
				}
				w.sent[string(m.ID)] = m.Method
			}
		}
	}
	return len(p), nil
}

// check validates every server message against the revision's schema.
func (w *sdWire) check(t *testing.T, revision string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.in) == 0 {
		t.Errorf("no server message was recorded")
	}
	for _, line := range w.in {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(line), &m)
		method := w.sent[string(m.ID)]
		if !harness.IsKnownMethod(method) && !(revision == sdModern && method == "server/discover") {
			method = ""
		}
		if err := mcpschema.Check(revision, method, []byte(line)); err != nil {
			t.Errorf("server message not valid for %s (%s): %v\n%s", revision, method, err, line)
		}
	}
}

// sdGo is a Go SDK client session.
type sdGo struct {
	t    *testing.T
	cs   *mcp.ClientSession
	wire *sdWire
}

// sdGoConnect connects a Go SDK client through transport; version "" is
// the SDK's default (server/discover with 2026-07-28 first).
func sdGoConnect(t *testing.T, transport mcp.Transport, version string, copts *mcp.ClientOptions) (*sdGo, error) {
	t.Helper()
	wire := &sdWire{}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-bashd-seeds", Version: "0"}, copts)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.LoggingTransport{Transport: transport, Writer: wire}, opts)
	if err != nil {
		return nil, err
	}
	g := &sdGo{t: t, cs: cs, wire: wire}
	t.Cleanup(func() { cs.Close() })
	return g, nil
}

func (g *sdGo) ctx() (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), harness.Deadline(g.t))
}

// call calls a tool and returns its single text item and isError.
func (g *sdGo) call(name string, args any) (string, bool) {
	g.t.Helper()
	ctx, cancel := g.ctx()
	defer cancel()
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		g.t.Fatalf("tools/call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		g.t.Fatalf("tools/call %s: want one content item, got %d", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		g.t.Fatalf("tools/call %s: content is %T, not text", name, res.Content[0])
	}
	return text.Text, res.IsError
}

func (g *sdGo) toolNames() []string {
	g.t.Helper()
	ctx, cancel := g.ctx()
	defer cancel()
	res, err := g.cs.ListTools(ctx, nil)
	if err != nil {
		g.t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// closeStdio closes a CommandTransport session: stdin EOF, exit 0.
func (g *sdGo) closeStdio(revision string) {
	g.t.Helper()
	if err := g.cs.Close(); err != nil {
		g.t.Errorf("server exit after the client closed stdin: %v", err)
	}
	g.wire.check(g.t, revision)
}

// ==== Seed 003: the tutorial's minimal handshake ====

// The tutorial's client messages, byte for byte, and the answers its
// server gives. Its tools/list answer has an inputSchema without
// "type":"object", which every MCP schema revision requires; the example's
// tools.json adds it (docs/migration.md).
func TestTutorialExactMessages(t *testing.T) {
	s := harness.Start(t, sdDaemon([]string{harness.RepoPath("examples/tutorial/server.sh")}))
	exchange := []struct{ client, server string }{
		{`{"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1.0"}},"jsonrpc":"2.0","id":0}`,
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{"experimental":{},"prompts":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}},"serverInfo":{"name":"math","version":"0.0.1"}}}`},
		{`{"method":"notifications/initialized","jsonrpc":"2.0"}`, ""},
		{`{"method":"resources/list","params":{},"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`},
		{`{"method":"tools/list","params":{},"jsonrpc":"2.0","id":2}`,
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"addition","description":"addition of two numbers.\n\nArgs:\n    num1, num2\n","inputSchema":{"type":"object","properties":{"num1":{"title":"Number1","type":"string"},"num2":{"title":"Number2","type":"string"}},"required":["num1", "num2"]}}]}}`},
		{`{"method":"prompts/list","params":{},"jsonrpc":"2.0","id":3}`, `{"jsonrpc":"2.0","id":3,"result":{"prompts":[]}}`},
		{`{"jsonrpc":"2.0","id":20, "method":"tools/call","params":{"name":"addition","arguments":{"num1":"1","num2":"2"}}}`,
			`{"jsonrpc":"2.0","id":20,"result":{"content":[{"type":"text","text":"\n sum of two numbers is 3"}],"isError":false}}`},
	}
	for _, e := range exchange {
		s.Send(e.client)
		if e.server == "" {
			continue // a notification: nothing comes back (the next recv is the next request's answer)
		}
		got := string(s.Recv())
		if !sdSameJSON(t, got, e.server) {
			t.Errorf("client: %s\n got %s\nwant %s", e.client, got, e.server)
		}
	}
	if s.Revision != "2024-11-05" {
		t.Errorf("negotiated %q, want the tutorial's 2024-11-05", s.Revision)
	}
	// The tutorial's first JSON-RPC example (method "add", array params):
	// its final server answers Method not found, and so do we.
	if r := harness.Parse(t, s.RoundTrip(`{"jsonrpc": "2.0","method": "add","params": [5, 3],"id": 1}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("method add: %+v", r)
	}
	// Where the tutorial evaluated the client's strings as bash arithmetic,
	// the example refuses anything but integers.
	if text, isErr := sdText(t, s.RoundTrip(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"addition","arguments":{"num1":"a[$(echo pwned >&2)]","num2":"2"}}}`)); !isErr || !strings.HasSuffix(text, "num1 and num2 must be integers") {
		t.Errorf("non-integer num1: %q isError=%v", text, isErr)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.Stderr)
	}
}

// A real host on the tutorial server: the Go SDK pinned to the tutorial's
// 2024-11-05, and with its default.
func TestTutorialGoSDK(t *testing.T) {
	for _, c := range []struct{ pin, want string }{{"2024-11-05", "2024-11-05"}, {"", sdModern}} {
		t.Run("version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.CommandTransport{Command: harness.Command(t, sdDaemon([]string{harness.RepoPath("examples/tutorial/server.sh")}))}, c.pin, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			ir := g.cs.InitializeResult()
			if ir.ProtocolVersion != c.want || ir.ServerInfo == nil || ir.ServerInfo.Name != "math" || ir.ServerInfo.Version != "0.0.1" {
				t.Errorf("negotiated %q serverInfo %+v", ir.ProtocolVersion, ir.ServerInfo)
			}
			if got := g.toolNames(); !reflect.DeepEqual(got, []string{"addition"}) {
				t.Errorf("tools = %q", got)
			}
			if text, isErr := g.call("addition", map[string]any{"num1": "40", "num2": "2"}); text != "\n sum of two numbers is 42" || isErr {
				t.Errorf("addition = %q isError=%v", text, isErr)
			}
			g.closeStdio(c.want)
		})
	}
}

// ==== Seed 000: the SDK's in-process API, as authors' tests use it ====

// sdAPIScript is a server author's own test: it sources the shim (the
// SDK's file), defines tools and a before-tool hook in its own shell, and
// calls the in-process API. Each step prints a label, its stdout and its
// status.
const sdAPIScript = `set -euo pipefail
source "$SHIM"
trap 'echo "caller EXIT trap" >&2' EXIT
GREETING=Hello
mcp_before_tool_call() { printf '%s %s\n' "$1" "$MCP_CALL_TMPDIR" >>"$HOOK_LOG"; }
tool_greet() {
    local re='"name"[[:space:]]*:[[:space:]]*"([^"]*)"'
    [[ $1 =~ $re ]]
    false # errexit is off in a tool, whatever the caller set
    printf '%s, %s\n' "$GREETING" "${BASH_REMATCH[1]}"
}
tool_fail() { echo "no luck" >&2; return 3; }
tool_where() { printf '%s' "$MCP_CALL_TMPDIR"; }
tool_stdin() { if IFS= read -r l; then echo "tool read: $l"; else echo "tool stdin: EOF"; fi; }
tool_outer() {
    local inner
    inner=$(handle_tools_call '"in"' '{"name":"where","arguments":{}}')
    printf 'outer=%s\ninner=%s\n' "$MCP_CALL_TMPDIR" "$inner"
}
step() {
    local st=0
    printf -- '--- %s\n' "$1"
    shift
    "$@" || st=$?
    printf 'status=%d\n' "$st"
}
captured() {
    local out st=0
    printf -- '--- %s\n' "$1"
    shift
    out=$("$@") || st=$?
    printf 'out=[%s] status=%d\n' "$out" "$st"
}
step ping process_request '{"jsonrpc":"2.0","id":1,"method":"ping"}'
step initialize process_request '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}'
step list process_request '{"jsonrpc":"2.0","id":"7","method":"tools/list"}'
step call process_request '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}'
step notification process_request '{"jsonrpc":"2.0","method":"notifications/initialized"}'
step garbage process_request 'not json'
step handle_initialize handle_initialize 3 '{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"0"}}'
step handle_tools_list handle_tools_list '"t"'
step handle_tools_call-fail handle_tools_call 4 '{"name":"fail","arguments":{}}'
step handle_tools_call-unknown-arg handle_tools_call 5 '{"name":"greet","arguments":{"name":"Ada","x":1}}'
step handle_tools_call-undeclared handle_tools_call 6 '{"name":"nonexistent","arguments":{}}'
step handle_tools_call-stdin handle_tools_call 7 '{"name":"stdin","arguments":{}}'
GREETING=Howdy
tool_late() { echo "defined after the first calls"; }
step handle_tools_call-state handle_tools_call 8 '{"name":"greet","arguments":{"name":"Bo"}}'
step handle_tools_call-late handle_tools_call 9 '{"name":"late","arguments":{}}'
step nested handle_tools_call 10 '{"name":"outer","arguments":{}}'
captured validate-ok validate_tool_arguments greet '{"name":"Ada"}'
captured validate-missing validate_tool_arguments greet '{}'
captured validate-undeclared validate_tool_arguments nope '{}'
captured read_json_file read_json_file config.json
captured read_json_file-missing read_json_file absent.json
captured log log INFO "hello from the author's test"
captured create_response create_response 11 '{"ok":true}'
captured create_error_response create_error_response '"e"' -32602 "Invalid params" '{"field":"name"}'
IFS= read -r line
echo "caller stdin: $line"
`

// The in-process API from a test script that sources the shim: exact
// stdout and status of every function, envelope key order, ids echoed as
// written (9007199254740993, "7"), the caller's functions and variables as
// they are at each call, errexit off in tools, a nested handle_tools_call
// with its own MCP_CALL_TMPDIR and the hook run again, the caller's stdin
// never read and its EXIT trap run once, by the caller.
func TestInProcessAPI(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"tools.json": `{"tools":[
{"name":"greet","description":"d","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}},
{"name":"fail","description":"d","inputSchema":{"type":"object"}},
{"name":"where","description":"d","inputSchema":{"type":"object"}},
{"name":"stdin","description":"d","inputSchema":{"type":"object"}},
{"name":"late","description":"d","inputSchema":{"type":"object"}},
{"name":"outer","description":"d","inputSchema":{"type":"object"}}]}`,
		"config.json": `{"protocolVersion":"2025-06-18","serverInfo":{"name":"api","version":"2.0.0"},"capabilities":{"tools":{}}}`,
		"t.sh":        sdAPIScript,
	})
	tmp := t.TempDir()
	hookLog := filepath.Join(dir, "hook.log")
	logf := filepath.Join(dir, "server.log")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--noprofile", "--norc", "t.sh")
	cmd.Dir = dir
	cmd.Env = sdEnv("MCP_BASHD="+harness.Binary, "SHIM="+harness.RepoPath("scripts/mcpserver_core.sh"), "TMPDIR="+tmp, "HOOK_LOG="+hookLog, "MCP_LOG_FILE="+logf, sdMark(t))
	cmd.Stdin = strings.NewReader("the caller's own input\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("test script: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	list := `{"tools":[{"name":"greet","description":"d","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}},{"name":"fail","description":"d","inputSchema":{"type":"object"}},{"name":"where","description":"d","inputSchema":{"type":"object"}},{"name":"stdin","description":"d","inputSchema":{"type":"object"}},{"name":"late","description":"d","inputSchema":{"type":"object"}},{"name":"outer","description":"d","inputSchema":{"type":"object"}}]}`
	// The nested step's directories vary; everything else is exact.
	nestedRE := regexp.MustCompile(`(?m)^--- nested\n(\{.*\})\nstatus=0\n`)
	m := nestedRE.FindStringSubmatchIndex(stdout.String())
	if m == nil {
		t.Fatalf("no nested step in:\n%s", stdout.String())
	}
	nested := stdout.String()[m[2]:m[3]]
	got := stdout.String()[:m[2]] + "NESTED" + stdout.String()[m[3]:]
	want := `--- ping
{"jsonrpc":"2.0","id":1,"result":{}}
status=0
--- initialize
{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"api","version":"2.0.0"},"capabilities":{"tools":{}}}}
status=0
--- list
{"jsonrpc":"2.0","id":"7","result":` + list + `}
status=0
--- call
{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"Hello, Ada"}],"isError":false}}
status=0
--- notification
status=0
--- garbage
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}
status=0
--- handle_initialize
{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2024-11-05","serverInfo":{"name":"api","version":"2.0.0"},"capabilities":{"tools":{}}}}
status=0
--- handle_tools_list
{"jsonrpc":"2.0","id":"t","result":` + list + `}
status=0
--- handle_tools_call-fail
{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Error executing fail: no luck"}],"isError":true}}
status=0
--- handle_tools_call-unknown-arg
{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Unknown parameter(s): x. Allowed parameters: name."}],"isError":true}}
status=0
--- handle_tools_call-undeclared
{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Tool not found: nonexistent"}}
status=0
--- handle_tools_call-stdin
{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"tool stdin: EOF"}],"isError":false}}
status=0
--- handle_tools_call-state
{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"Howdy, Bo"}],"isError":false}}
status=0
--- handle_tools_call-late
{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"defined after the first calls"}],"isError":false}}
status=0
--- nested
NESTED
status=0
--- validate-ok
out=[] status=0
--- validate-missing
out=[Missing required parameter(s): name.] status=1
--- validate-undeclared
out=[Cannot validate arguments for nope: the tool list at tools.json does not declare it.] status=1
--- read_json_file
out=[{"protocolVersion":"2025-06-18","serverInfo":{"name":"api","version":"2.0.0"},"capabilities":{"tools":{}}}] status=0
--- read_json_file-missing
out=[] status=1
--- log
out=[] status=0
--- create_response
out=[{"jsonrpc":"2.0","id":11,"result":{"ok":true}}] status=0
--- create_error_response
out=[{"jsonrpc":"2.0","id":"e","error":{"code":-32602,"message":"Invalid params","data":{"field":"name"}}}] status=0
caller stdin: the caller's own input
`
	if got != want {
		t.Errorf("the author's test script printed:\n%s\nwant:\n%s", got, want)
	}
	if n := strings.Count(stderr.String(), "caller EXIT trap"); n != 1 {
		t.Errorf("the caller's EXIT trap ran %d times (want once, by the caller):\n%s", n, stderr.String())
	}

	// The nested dispatch: its own directory, the hook run for it too.
	var outer struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(nested), &outer); err != nil || len(outer.Result.Content) != 1 || outer.Result.IsError {
		t.Fatalf("nested: %v %s", err, nested)
	}
	nm := regexp.MustCompile(`^outer=(\S+)\ninner=(\{.*\})$`).FindStringSubmatch(outer.Result.Content[0].Text)
	if nm == nil {
		t.Fatalf("outer tool printed %q", outer.Result.Content[0].Text)
	}
	outerDir := nm[1]
	innerText, innerErr := sdText(t, nm[2])
	if innerErr || !strings.HasPrefix(nm[2], `{"jsonrpc":"2.0","id":"in","result":{"content":[{"type":"text","text":`) {
		t.Errorf("inner response %s", nm[2])
	}
	if !strings.HasPrefix(outerDir, tmp+"/mcp-call.") || !strings.HasPrefix(innerText, tmp+"/mcp-call.") || outerDir == innerText ||
		filepath.Dir(outerDir) == filepath.Dir(innerText) {
		t.Errorf("outer MCP_CALL_TMPDIR %q, inner %q: want two distinct call directories under %s", outerDir, innerText, tmp)
	}
	hooks, err := os.ReadFile(hookLog)
	if err != nil {
		t.Fatal(err)
	}
	// One hook line per dispatched call that passed validation, in order.
	hookRE := regexp.MustCompile(`^greet \S+\nfail \S+\nstdin \S+\ngreet \S+\nlate \S+\nouter (\S+)\nwhere (\S+)\n$`)
	if hm := hookRE.FindStringSubmatch(string(hooks)); hm == nil || hm[1] != outerDir || hm[2] != innerText {
		t.Errorf("before-tool hook log:\n%s\nwant the hook run for each dispatched call, the nested one included (outer %s, inner %s)", hooks, outerDir, innerText)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "mcp-call.*")); len(left) != 0 {
		t.Errorf("call directories left behind: %q", left)
	}
	lb, _ := os.ReadFile(logf)
	if !regexp.MustCompile(`(?m)^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] \[INFO\] hello from the author's test$`).Match(lb) {
		t.Errorf("log did not append the SDK's line to MCP_LOG_FILE:\n%s", lb)
	}
}
