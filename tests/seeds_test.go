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
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
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
	return "MCPBASHD_TEST_MARK=sd-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.Itoa(os.Getpid())
}

// sdWeatherCmd is ./weatherserver.sh ARGS run from its own directory, as
// the README runs it.
func sdWeatherCmd(t *testing.T, args []string, env ...string) *exec.Cmd {
	cmd := exec.Command("./weatherserver.sh", args...)
	cmd.Dir = repoPath("examples/weather")
	cmd.Env = sdEnv(append([]string{"MCP_BASHD=" + binary, "TMPDIR=" + t.TempDir(), sdMark(t)}, env...)...)
	return cmd
}

// sdDaemonCmd is mcp-bashd ARGS with a clean environment.
func sdDaemonCmd(t *testing.T, args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = sdEnv(append([]string{"TMPDIR=" + t.TempDir(), sdMark(t)}, env...)...)
	return cmd
}

// sdResult is a tools/call response.
type sdResult struct {
	callResponse
}

func sdParse(t *testing.T, line string) sdResult {
	t.Helper()
	var r sdResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	return r
}

// sdText is the single text item of a tools/call result and its isError.
func sdText(t *testing.T, line string) (string, bool) {
	t.Helper()
	r := sdParse(t, line)
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
		if !isKnownMethod(method) && !(revision == sdModern && method == "server/discover") {
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
	ctx, cancel := context.WithDeadline(context.Background(), deadline(t))
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
	return context.WithDeadline(context.Background(), deadline(g.t))
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

// ==== Seed 002: the 2026-07-28 bash SDK's weather server ====

// The example is the README's server file by file: the MCP_* paths set
// before both SDK files are sourced, those files being the shim, the
// config in the README's discovery shape, logs/ kept in the repository,
// and the README's closing case statement.
func TestSdWeatherLayout(t *testing.T) {
	dir := repoPath("examples/weather")
	shim, err := os.ReadFile(repoPath("scripts/mcpserver_core.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"mcpserver_core.sh", "mcpserver_http.sh"} {
		p := filepath.Join(dir, f)
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is not a symlink to the shim: %v", f, err)
			continue
		}
		if target, _ := os.Readlink(p); target != "../../scripts/mcpserver_core.sh" {
			t.Errorf("%s -> %s, want ../../scripts/mcpserver_core.sh", f, target)
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, shim) {
			t.Errorf("%s does not resolve to the shim: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", ".gitkeep")); err != nil {
		t.Errorf("logs/.gitkeep: %v", err)
	}
	script, err := os.ReadFile(filepath.Join(dir, "weatherserver.sh"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(script)
	order := []string{
		`MCP_CONFIG_FILE="$(dirname "${BASH_SOURCE[0]}")/assets/weatherserver_config.json"`,
		`MCP_TOOLS_LIST_FILE="$(dirname "${BASH_SOURCE[0]}")/assets/weatherserver_tools.json"`,
		`MCP_LOG_FILE="$(dirname "${BASH_SOURCE[0]}")/logs/weatherserver.log"`,
		`source "$(dirname "${BASH_SOURCE[0]}")/mcpserver_core.sh"`,
		`source "$(dirname "${BASH_SOURCE[0]}")/mcpserver_http.sh"`,
		`API_KEY="${MCP_API_KEY:-default_key}"`,
		"tool_get_weather() {",
		`case "${1:-}" in`,
		`--http)            shift; run_mcp_http_server "$@" ;;`,
		`handle-connection) run_mcp_http_server handle-connection ;;`,
		`*)                 run_mcp_server "$@" ;;`,
		"esac",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		if i < 0 {
			t.Errorf("weatherserver.sh lacks, after byte %d, the README's line %q", at, want)
			continue
		}
		at += i + len(want)
	}
	for i, line := range strings.Split(s, "\n") {
		code, _, _ := strings.Cut(line, "#")
		for _, w := range []string{"jq", "curl", "wget", "nc "} {
			if strings.Contains(code, w) {
				t.Errorf("weatherserver.sh line %d runs %s: the example must need neither jq nor the network: %s", i+1, w, line)
			}
		}
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "assets", "weatherserver_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !sdSameJSON(t, string(cfg), `{"supportedVersions":["2026-07-28"],"serverInfo":{"name":"WeatherServer","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}},"ttlMs":3600000,"cacheScope":"public","instructions":"This server provides weather information."}`) {
		t.Errorf("weatherserver_config.json is not the README's: %s", cfg)
	}
	tools, err := os.ReadFile(filepath.Join(dir, "assets", "weatherserver_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !sdSameJSON(t, string(tools), `{"tools":[{"name":"get_weather","description":"Get current weather for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or coordinates"}},"required":["location"]}}]}`) {
		t.Errorf("weatherserver_tools.json is not the README's: %s", tools)
	}
}

// ./weatherserver.sh over stdio: the README's 2026 requests (server/discover
// with the per-request _meta, tools/list, tools/call), a tool that fails
// with `return 1` (isError), then an old-style client that initializes.
func TestSdWeatherStdio(t *testing.T) {
	logf := repoPath("examples/weather/logs/weatherserver.log")
	logStart := int64(0)
	if fi, err := os.Stat(logf); err == nil {
		logStart = fi.Size()
	}
	s := startPrepared(t, sdWeatherCmd(t, nil))
	s.revision = sdModern

	sdWantLine(t, "server/discover", s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+sdMeta+`}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},"instructions":"This server provides weather information.","resultType":"complete","ttlMs":3600000,"cacheScope":"public",`+sdWeatherMeta+`}}`)
	sdWantLine(t, "tools/list", s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+sdMeta+`}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get_weather","description":"Get current weather for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or coordinates"}},"required":["location"]}}],"resultType":"complete","ttlMs":3600000,"cacheScope":"public",`+sdWeatherMeta+`}}`)
	sdWantLine(t, "tools/call London", s.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},`+sdMeta+`}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"isError":false,"resultType":"complete",`+sdWeatherMeta+`}}`)

	// The README's failure path: echo a reason, return 1 → isError, and
	// the server keeps serving.
	for i, c := range []struct{ args, reason string }{
		{`{"location":""}`, "Missing required parameter: location"},
		{`{"location":"Atlantis"}`, "No weather data for location: Atlantis"},
	} {
		line := s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":%s,%s}}`, 10+i, c.args, sdMeta))
		if text, isErr := sdText(t, line); !isErr || !strings.HasSuffix(text, c.reason) {
			t.Errorf("get_weather %s: want isError ending in %q, got %s", c.args, c.reason, line)
		}
		if !strings.HasSuffix(line, `"isError":true,"resultType":"complete",`+sdWeatherMeta+`}}`) {
			t.Errorf("failing call's 2026 result shape: %s", line)
		}
	}
	// The schema is enforced before the tool runs.
	if text, isErr := sdText(t, s.roundTrip(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_weather","arguments":{},`+sdMeta+`}}`)); !isErr || !strings.Contains(text, "Missing required parameter(s): location") {
		t.Errorf("get_weather without location: %q isError=%v", text, isErr)
	}
	// A version the config's supportedVersions does not list: -32022 with
	// the supported ones, as the 2026 SDK answers.
	sdWantLine(t, "unsupported version", s.roundTrip(`{"jsonrpc":"2.0","id":13,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`),
		`{"jsonrpc":"2.0","id":13,"error":{"code":-32022,"message":"Unsupported protocol version: 2099-01-01","data":{"requested":"2099-01-01","supported":["2026-07-28"]}}}`)

	// An old-style client: initialize, then calls without _meta.
	sdWantLine(t, "initialize", s.roundTrip(`{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`),
		`{"jsonrpc":"2.0","id":20,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"WeatherServer","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}},"instructions":"This server provides weather information."}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sdWantLine(t, "legacy tools/call", s.roundTrip(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`),
		`{"jsonrpc":"2.0","id":21,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"isError":false}}`)
	if ee := s.closeAndWait(); ee != nil {
		t.Fatalf("exit after stdin EOF: %v\n%s", ee, s.stderr)
	}
	// MCP_LOG_FILE, set by the script before sourcing, is where the daemon
	// logged this run's calls.
	f, err := os.Open(logf)
	if err != nil {
		t.Fatalf("the script's MCP_LOG_FILE: %v", err)
	}
	defer f.Close()
	f.Seek(logStart, io.SeekStart)
	rest, _ := io.ReadAll(f)
	if !bytes.Contains(rest, []byte(`"tool":"get_weather"`)) {
		t.Errorf("logs/weatherserver.log got no record of this run's calls:\n%s", rest)
	}
}

func sdJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// Top-level state: the script reads MCP_API_KEY once, at top level; every
// call sees the value (here one that makes the canned API refuse).
func TestSdWeatherTopLevelEnv(t *testing.T) {
	s := startPrepared(t, sdWeatherCmd(t, nil, "MCP_API_KEY=invalid"))
	s.revision = sdModern
	line := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},` + sdMeta + `}}`)
	if text, isErr := sdText(t, line); !isErr || !strings.HasSuffix(text, "Weather API rejected the API key") {
		t.Errorf("with MCP_API_KEY=invalid: %s", line)
	}
}

// The Go SDK as the host: its default connect (server/discover with
// 2026-07-28, stateless) and a client pinned to 2025-06-18 (initialize).
func TestSdWeatherGoSDKStdio(t *testing.T) {
	for _, c := range []struct{ pin, want string }{{"", sdModern}, {"2025-06-18", "2025-06-18"}} {
		t.Run("version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.CommandTransport{Command: sdWeatherCmd(t, nil)}, c.pin, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			ir := g.cs.InitializeResult()
			if ir.ProtocolVersion != c.want || ir.ServerInfo == nil || ir.ServerInfo.Name != "WeatherServer" || ir.Instructions != "This server provides weather information." {
				t.Errorf("negotiated %q, serverInfo %+v, instructions %q", ir.ProtocolVersion, ir.ServerInfo, ir.Instructions)
			}
			if got := g.toolNames(); !reflect.DeepEqual(got, []string{"get_weather"}) {
				t.Errorf("tools = %q", got)
			}
			if text, isErr := g.call("get_weather", map[string]any{"location": "London"}); text != sdLondon || isErr {
				t.Errorf("London = %q isError=%v", text, isErr)
			}
			if text, isErr := g.call("get_weather", map[string]any{"location": ""}); !isErr || !strings.HasSuffix(text, "Missing required parameter: location") {
				t.Errorf("empty location = %q isError=%v", text, isErr)
			}
			g.closeStdio(c.want)
		})
	}
}

// sdHTTP is ./weatherserver.sh --http.
type sdHTTP struct {
	url    string
	cmd    *exec.Cmd
	stderr *lockedWriter
	done   chan struct{}
	err    error
}

var sdServingRE = regexp.MustCompile(`mcp-bashd: serving (http://127\.0\.0\.1:(\d+)/mcp)\n`)

// sdStartWeatherHTTP starts the server with MCP_HTTP_PORT=0 (the kernel
// picks a free port) and waits for the line naming the address.
func sdStartWeatherHTTP(t *testing.T) *sdHTTP {
	t.Helper()
	h := &sdHTTP{cmd: sdWeatherCmd(t, []string{"--http"}, "MCP_HTTP_PORT=0"), stderr: &lockedWriter{w: &bytes.Buffer{}}, done: make(chan struct{})}
	h.cmd.Stderr = h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.err = h.cmd.Wait(); close(h.done) }()
	t.Cleanup(func() {
		h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.done:
		case <-time.After(30 * time.Second):
			h.cmd.Process.Kill()
			<-h.done
		}
	})
	proctest.WaitUntil(t, deadline(t), "the HTTP server to say where it listens", func() (bool, string) {
		select {
		case <-h.done:
			t.Fatalf("server exited: %v\n%s", h.err, h.stderrText())
		default:
		}
		m := sdServingRE.FindStringSubmatch(h.stderrText())
		if m == nil {
			return false, h.stderrText()
		}
		if m[2] == "3000" {
			t.Fatalf("MCP_HTTP_PORT=0 was not honoured: the server listens on the default port 3000")
		}
		h.url = m[1]
		return true, ""
	})
	return h
}

func (h *sdHTTP) stderrText() string {
	h.stderr.mu.Lock()
	defer h.stderr.mu.Unlock()
	return h.stderr.w.String()
}

// post sends one JSON-RPC message with the given headers (plus
// Content-Type and the Accept the spec requires).
func (h *sdHTTP) post(t *testing.T, hdr map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadline(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// One JSON message; the trailing newline is framing, not content.
	return resp.StatusCode, resp.Header, strings.TrimSuffix(string(b), "\n")
}

// sdModernHeaders are the 2026 request headers for method (and name).
func sdModernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": sdModern, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// ./weatherserver.sh --http: POSTs with the 2026 headers (and the header
// checks the README calls a security control), a legacy initialize with
// its session, then the Go SDK's Streamable HTTP client both ways; SIGTERM
// stops it.
func TestSdWeatherHTTP(t *testing.T) {
	h := sdStartWeatherHTTP(t)
	check := func(rev, method, body string) {
		t.Helper()
		if err := mcpschema.Check(rev, method, []byte(body)); err != nil {
			t.Errorf("not valid for %s (%s): %v\n%s", rev, method, err, body)
		}
	}
	status, _, body := h.post(t, sdModernHeaders("server/discover", ""), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+sdMeta+`}}`)
	if status != 200 {
		t.Errorf("server/discover: HTTP %d %s", status, body)
	}
	sdWantLine(t, "server/discover over HTTP", body, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},"instructions":"This server provides weather information.","resultType":"complete","ttlMs":3600000,"cacheScope":"public",`+sdWeatherMeta+`}}`)
	check(sdModern, "", body)

	status, _, body = h.post(t, sdModernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+sdMeta+`}}`)
	if status != 200 || !strings.Contains(body, `"name":"get_weather"`) {
		t.Errorf("tools/list: HTTP %d %s", status, body)
	}
	check(sdModern, "tools/list", body)

	status, hdr, body := h.post(t, sdModernHeaders("tools/call", "get_weather"), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},`+sdMeta+`}}`)
	if status != 200 {
		t.Errorf("tools/call: HTTP %d %s", status, body)
	}
	sdWantLine(t, "tools/call over HTTP", body, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"isError":false,"resultType":"complete",`+sdWeatherMeta+`}}`)
	check(sdModern, "tools/call", body)
	if hdr.Get("Mcp-Session-Id") != "" {
		t.Errorf("a 2026 response carries Mcp-Session-Id %q", hdr.Get("Mcp-Session-Id"))
	}

	status, _, body = h.post(t, sdModernHeaders("tools/call", "get_weather"), `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":""},`+sdMeta+`}}`)
	if text, isErr := sdText(t, body); status != 200 || !isErr || !strings.HasSuffix(text, "Missing required parameter: location") {
		t.Errorf("failing tool over HTTP: HTTP %d %s", status, body)
	}

	// Headers that disagree with the body: 400 and -32020; the tool does
	// not run.
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want string
	}{
		{"Mcp-Name mismatch", sdModernHeaders("tools/call", "get_forecast"), "Header mismatch: Mcp-Name header get_forecast does not match get_weather"},
		{"Mcp-Name missing", sdModernHeaders("tools/call", ""), "Header mismatch: missing Mcp-Name header"},
		{"Mcp-Method missing", map[string]string{"MCP-Protocol-Version": sdModern, "Mcp-Name": "get_weather"}, "Header mismatch: missing Mcp-Method header"},
		{"Mcp-Method mismatch", map[string]string{"MCP-Protocol-Version": sdModern, "Mcp-Method": "tools/list", "Mcp-Name": "get_weather"}, "Header mismatch: Mcp-Method header tools/list does not match method tools/call"},
		{"version mismatch", map[string]string{"MCP-Protocol-Version": "2025-06-18", "Mcp-Method": "tools/call", "Mcp-Name": "get_weather"}, "Header mismatch: MCP-Protocol-Version header 2025-06-18 does not match _meta version 2026-07-28"},
	} {
		status, _, body := h.post(t, c.hdr, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},`+sdMeta+`}}`)
		want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32020,"message":"` + c.want + `"}}`
		if status != http.StatusBadRequest || body != want {
			t.Errorf("%s: HTTP %d %s\nwant 400 %s", c.name, status, body, want)
		}
	}
	// A foreign Origin is refused (DNS rebinding), as the README's
	// MCP_ALLOWED_ORIGINS allowlist does.
	o := sdModernHeaders("tools/list", "")
	o["Origin"] = "http://evil.example"
	if status, _, body := h.post(t, o, `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{`+sdMeta+`}}`); status != http.StatusForbidden {
		t.Errorf("foreign Origin: HTTP %d %s", status, body)
	}

	// A legacy client: initialize opens a session; its calls carry it.
	status, hdr, body = h.post(t, nil, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if status != 200 || sid == "" {
		t.Fatalf("legacy initialize: HTTP %d session %q %s", status, sid, body)
	}
	sdWantLine(t, "legacy initialize over HTTP", body, `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"WeatherServer","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}},"instructions":"This server provides weather information."}}`)
	check("2025-06-18", "initialize", body)
	legacy := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	if status, _, body := h.post(t, legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Errorf("notifications/initialized: HTTP %d %s", status, body)
	}
	status, _, body = h.post(t, legacy, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`)
	if status != 200 {
		t.Errorf("legacy tools/call: HTTP %d", status)
	}
	sdWantLine(t, "legacy tools/call over HTTP", body, `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"isError":false}}`)
	check("2025-06-18", "tools/call", body)

	// The Go SDK's Streamable HTTP client, default (2026) and pinned.
	for _, c := range []struct{ pin, want string }{{"", sdModern}, {"2025-06-18", "2025-06-18"}} {
		t.Run("GoSDK/version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1}, c.pin, nil)
			if err != nil {
				t.Fatalf("connect: %v\nserver stderr:\n%s", err, h.stderrText())
			}
			if v := g.cs.InitializeResult().ProtocolVersion; v != c.want {
				t.Errorf("negotiated %q, want %q", v, c.want)
			}
			if got := g.toolNames(); !reflect.DeepEqual(got, []string{"get_weather"}) {
				t.Errorf("tools = %q", got)
			}
			if text, isErr := g.call("get_weather", map[string]any{"location": "London"}); text != sdLondon || isErr {
				t.Errorf("London = %q isError=%v", text, isErr)
			}
			if text, isErr := g.call("get_weather", map[string]any{"location": "Atlantis"}); !isErr || !strings.HasSuffix(text, "No weather data for location: Atlantis") {
				t.Errorf("Atlantis = %q isError=%v", text, isErr)
			}
			g.cs.Close()
			g.wire.check(t, c.want)
		})
	}

	// SIGTERM: the server stops and dies by the signal.
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(time.Until(deadline(t))):
		t.Fatalf("server did not stop on SIGTERM\n%s", h.stderrText())
	}
	var ee *exec.ExitError
	if !errors.As(h.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("exit after SIGTERM: %v, want death by SIGTERM", h.err)
	}
}

// ==== Seed 001: a tools/ directory of executables ====

// sdSeedList is the `list` output of the seed README's example provider,
// byte for byte.
const sdSeedList = `{ "name": "echo", "title": "Echo Tool", "description": "Echoes the input text.", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] } }
{ "name": "add", "title": "Addition Tool", "description": "Adds two numbers.", "inputSchema": { "type": "object", "properties": { "a": { "type": "number" }, "b": { "type": "number" } }, "required": ["a","b"] } }
`

// examples/toolsdir/tools/test.sh behaves as the seed README shows when
// run by hand: `list` prints its two objects, `echo`/`add` print a tool
// result.
func TestSdToolsDirProviderByHand(t *testing.T) {
	exe := repoPath("examples/toolsdir/tools/test.sh")
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Env = sdEnv()
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run("list"); out != sdSeedList || code != 0 {
		t.Errorf("list (status %d):\n%s\nwant:\n%s", code, out, sdSeedList)
	}
	for _, c := range []struct{ tool, args, text string }{
		{"echo", `{"text":"Hello"}`, "Hello"},
		{"echo", `{"text":"say \"hi\"\\n"}`, `say \"hi\"\\n`},
		{"add", `{"a":4,"b":4}`, "8"},
		{"add", `{"a":40,"b":2}`, "42"},
		{"add", `{ "b" : -2.5 , "a" : 1.25 }`, "-1.25"},
		{"add", `{"a":0.1,"b":0.2}`, "0.3"},
	} {
		out, code := run(c.tool, c.args)
		want := `{"content":[{"type":"text","text":"` + c.text + `"}],"isError":false}` + "\n"
		if out != want || code != 0 {
			t.Errorf("%s %s (status %d): %q, want %q", c.tool, c.args, code, out, want)
		}
	}
	if _, code := run("add", `{"a":4}`); code != 1 {
		t.Errorf("add with a missing argument: status %d, want 1", code)
	}
	if out, code := run("nope"); code != 1 || out != `{"error":{"message":"Unknown"}}`+"\n" {
		t.Errorf("unknown tool: status %d %q", code, out)
	}
}

// mcp-bashd --tools-dir examples/toolsdir/tools: the seed's provider
// serves tools/list and calls, the argument schema is enforced, and the
// placeholder lists the seed answers are there.
func TestSdToolsDirExample(t *testing.T) {
	s := startPrepared(t, sdDaemonCmd(t, []string{"--tools-dir", repoPath("examples/toolsdir/tools")}))
	s.roundTrip(initLine)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sdWantLine(t, "tools/list", s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","title":"Echo Tool","description":"Echoes the input text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},{"name":"add","title":"Addition Tool","description":"Adds two numbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]}}`)
	sdWantLine(t, "add 4+4", s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":4,"b":4}}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"8"}],"isError":false}}`)
	sdWantLine(t, "add 40+2", s.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"42"}],"isError":false}}`)
	sdWantLine(t, "echo", s.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"Hello"}}}`),
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Hello"}],"isError":false}}`)
	// Arguments the schema rejects never reach the executable: an isError
	// naming what is wrong (the seed let the tool fail with exit 1).
	for i, c := range []struct{ args, want string }{
		{`{"a":40}`, "Missing required parameter(s): b"},
		{`{"a":"40","b":2}`, `Invalid type(s): a expected number, got string ("40")`},
	} {
		text, isErr := sdText(t, s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":%s}}`, 5+i, c.args)))
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("add %s: %q isError=%v, want an isError containing %q", c.args, text, isErr, c.want)
		}
	}
	if r := sdParse(t, s.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mul","arguments":{}}}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown tool: %+v", r)
	}
	for i, c := range []struct{ method, want string }{
		{"resources/list", `{"resources":[]}`},
		{"resources/templates/list", `{"resourceTemplates":[]}`},
		{"prompts/list", `{"prompts":[]}`},
	} {
		id := 8 + i
		sdWantLine(t, c.method, s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, c.method)), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, c.want))
	}
	if ee := s.closeAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.stderr)
	}
}

// The Go SDK as the host of a tools directory.
func TestSdToolsDirGoSDK(t *testing.T) {
	g, err := sdGoConnect(t, &mcp.CommandTransport{Command: sdDaemonCmd(t, []string{"--tools-dir", repoPath("examples/toolsdir/tools")})}, "", nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"echo", "add"}) {
		t.Errorf("tools = %q", got)
	}
	if text, isErr := g.call("add", map[string]any{"a": 1.5, "b": 2.25}); text != "3.75" || isErr {
		t.Errorf("add = %q isError=%v", text, isErr)
	}
	if text, isErr := g.call("echo", map[string]any{"text": "ünïcode \"quoted\"\nline"}); text != "ünïcode \"quoted\"\nline" || isErr {
		t.Errorf("echo = %q isError=%v", text, isErr)
	}
	if text, isErr := g.call("add", map[string]any{"a": 1}); !isErr || !strings.Contains(text, "Missing required parameter(s): b") {
		t.Errorf("add without b = %q isError=%v", text, isErr)
	}
	g.closeStdio(sdModern)
}

// sdWriteExe writes an executable (mode 0755) or a plain file (0644).
func sdWriteExe(t *testing.T, path, body string, exe bool) {
	t.Helper()
	mode := os.FileMode(0o644)
	if exe {
		mode = 0o755
	}
	// Written aside and renamed into place: a directory listing never sees
	// a half-written executable.
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// What a provider prints comes back as the seed's server passed it: a
// tool result (content, isError) as it is, anything else as text; a
// non-zero exit is an isError; a provider that does not answer `list`, a
// file that is not executable and a subdirectory are skipped. Calls run
// under the supervisor like bash tools: own process group, MCP_CALL_TMPDIR
// (removed afterwards), x-mcp-bashd timeouts, cancellation.
func TestSdToolsDirProviders(t *testing.T) {
	dir := t.TempDir()
	sdWriteExe(t, filepath.Join(dir, "p.sh"), `#!/usr/bin/env bash
case $1 in
list)
    echo '{"name":"full","description":"prints a whole result","inputSchema":{"type":"object"}}'
    echo '{"name":"fullerr","description":"a result with isError","inputSchema":{"type":"object"}}'
    echo '{"name":"plain","description":"prints text","inputSchema":{"type":"object"}}'
    echo '{"name":"notresult","description":"JSON that is no result","inputSchema":{"type":"object"}}'
    echo '{"name":"exitfull","description":"a result, then exit 2","inputSchema":{"type":"object"}}'
    echo '{"name":"where","description":"where it runs","inputSchema":{"type":"object"}}'
    echo '{"name":"block","description":"runs until stopped","inputSchema":{"type":"object"}}'
    echo '{"name":"slow","description":"has a timeout","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"1s"}}'
    ;;
full) echo '{"content":[{"type":"text","text":"one"},{"type":"text","text":"two"}],"structuredContent":{"n":2},"isError":false}' ;;
fullerr) echo '{"content":[{"type":"text","text":"refused"}],"isError":true}' ;;
plain) printf 'plain text\n\n' ;;
notresult) echo '{"foo":1}' ;;
exitfull) echo '{"content":[{"type":"text","text":"x"}],"isError":false}'; exit 2 ;;
where)
    read -r _ _ _ _ pgid _ </proc/$$/stat
    [ -d "$MCP_CALL_TMPDIR" ] && printf '%s %s %s %s' "$pgid" "$MCP_CALL_TMPDIR" "$#" "$2"
    ;;
block)
    printf '%s %s' "$$" "$MCP_CALL_TMPDIR" >"$READY.tmp"
    mv "$READY.tmp" "$READY"
    exec sleep 600
    ;;
slow) exec sleep 600 ;;
esac
`, true)
	// Not a provider: `list` is a usage error (text on stdout, exit 64).
	sdWriteExe(t, filepath.Join(dir, "noanswer.sh"), "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo 'usage: noanswer.sh run'; exit 64; }\necho '{\"name\":\"ghost\",\"inputSchema\":{\"type\":\"object\"}}'\n", true)
	sdWriteExe(t, filepath.Join(dir, "notes.txt"), "{\"name\":\"notes\",\"inputSchema\":{\"type\":\"object\"}}\n", false)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	tmp := t.TempDir()
	cmd := sdDaemonCmd(t, []string{"--tools-dir", dir}, "READY="+ready)
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	s := startPrepared(t, cmd)
	s.roundTrip(initLine)

	list := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var lr struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(list), &lr)
	var names []string
	for _, tl := range lr.Result.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"full", "fullerr", "plain", "notresult", "exitfull", "where", "block", "slow"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tools = %q, want %q (noanswer.sh, notes.txt and sub/ skipped)", names, want)
	}
	if strings.Contains(list, "x-mcp-bashd") {
		t.Errorf("the private x-mcp-bashd key reached tools/list: %s", list)
	}
	call := func(id int, name, args string) string {
		return s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
	}
	sdWantLine(t, "full result passed through", call(2, "full", `{}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"one"},{"type":"text","text":"two"}],"structuredContent":{"n":2},"isError":false}}`)
	sdWantLine(t, "isError result passed through", call(3, "fullerr", `{}`),
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"refused"}],"isError":true}}`)
	sdWantLine(t, "plain text", call(4, "plain", `{}`),
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"plain text"}],"isError":false}}`)
	sdWantLine(t, "JSON that is not a result is text", call(5, "notresult", `{}`),
		`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\"foo\":1}"}],"isError":false}}`)
	if text, isErr := sdText(t, call(6, "exitfull", `{}`)); !isErr || !strings.Contains(text, `{"content":[{"type":"text","text":"x"}],"isError":false}`) {
		t.Errorf("non-zero exit after a success result: %q isError=%v, want an isError", text, isErr)
	}
	if r := sdParse(t, call(7, "ghost", `{}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("a tool of the provider that does not answer list: %+v", r)
	}

	// EXE NAME ARGS_JSON in its own process group with a call directory.
	text, isErr := sdText(t, call(8, "where", `{"q":"a b"}`))
	f := strings.SplitN(text, " ", 4)
	if isErr || len(f) != 4 {
		t.Fatalf("where: %q isError=%v", text, isErr)
	}
	daemonPgid, _ := syscall.Getpgid(s.cmd.Process.Pid)
	if pg, _ := strconv.Atoi(f[0]); pg == 0 || pg == daemonPgid {
		t.Errorf("the executable ran in process group %s (the daemon's is %d)", f[0], daemonPgid)
	}
	if !strings.HasPrefix(f[1], tmp+"/mcp-call.") || f[2] != "2" || f[3] != `{"q":"a b"}` {
		t.Errorf("where: tmpdir %q argc %q args %q", f[1], f[2], f[3])
	}
	if _, err := os.Stat(f[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call's MCP_CALL_TMPDIR %s outlived the call: %v", f[1], err)
	}

	// A per-tool timeout from the list line.
	sdWantLine(t, "timeout", call(9, "slow", `{}`),
		`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Tool slow timed out after 1s and was stopped."}],"isError":true}}`)

	// Cancellation: no response for the id, the process is gone, the
	// call directory too, and the server answers the next request.
	s.send(`{"jsonrpc":"2.0","id":"blk","method":"tools/call","params":{"name":"block","arguments":{}}}`)
	var fields []string
	proctest.WaitUntil(t, deadline(t), "the blocking tool to start", func() (bool, string) {
		b, err := os.ReadFile(ready)
		fields = strings.Fields(string(b))
		return err == nil && len(fields) == 2, fmt.Sprint(err)
	})
	pid, _ := strconv.Atoi(fields[0])
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"blk"}}`)
	proctest.WaitUntil(t, deadline(t), "the cancelled executable to be gone", func() (bool, string) {
		p, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true, ""
		}
		_, statErr := os.Stat(fields[1])
		return false, fmt.Sprintf("%s (tmpdir: %v)", p, statErr)
	})
	proctest.WaitUntil(t, deadline(t), "the cancelled call's directory to be removed", func() (bool, string) {
		_, err := os.Stat(fields[1])
		return errors.Is(err, os.ErrNotExist), fmt.Sprint(err)
	})
	sdWantLine(t, "ping after cancel", s.roundTrip(`{"jsonrpc":"2.0","id":10,"method":"ping"}`), `{"jsonrpc":"2.0","id":10,"result":{}}`)

	// The seed's convention passes ARGS_JSON in argv, which Linux caps at
	// 128 KiB per string: a bigger argument is a clear isError, and the
	// server goes on.
	big := strings.Repeat("x", 200<<10)
	if text, isErr := sdText(t, call(11, "where", `{"s":"`+big+`"}`)); !isErr || !strings.Contains(text, "Argument list too long") {
		t.Errorf("a 200 KiB argument: isError=%v %.200q", isErr, text)
	}
	sdWantLine(t, "ping after a refused exec", s.roundTrip(`{"jsonrpc":"2.0","id":12,"method":"ping"}`), `{"jsonrpc":"2.0","id":12,"result":{}}`)
	if ee := s.closeAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "mcp-call.*")); len(left) != 0 {
		t.Errorf("call directories left behind: %q", left)
	}
}

// The seed's contract: a provider prints its tool result on stdout, and its
// stderr is a log (the seed logged it, and parsed stdout alone). A warning
// on stderr must not turn a valid result into text.
func TestSdToolsDirStderrIsNotTheResult(t *testing.T) {
	dir := t.TempDir()
	sdWriteExe(t, filepath.Join(dir, "w.sh"), `#!/usr/bin/env bash
case $1 in
list) echo '{"name":"warn","inputSchema":{"type":"object"}}' ;;
warn)
    echo "warning: cache cold" >&2
    echo '{"content":[{"type":"text","text":"result"}],"isError":false}'
    ;;
esac
`, true)
	s := startPrepared(t, sdDaemonCmd(t, []string{"--tools-dir", dir}))
	s.roundTrip(initLine)
	sdWantLine(t, "a result on stdout with a warning on stderr", s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warn","arguments":{}}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"result"}],"isError":false}}`)
}

// Two executables advertising one name: tools/list fails with the seed's
// -32603 "Duplicate tool names: NAME:NEW,EXISTING" (the later file in
// name order is the new one); the server keeps answering, and removing one
// of the two restores the list.
func TestSdToolsDirDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.sh"), filepath.Join(dir, "b.sh")
	sdWriteExe(t, a, "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"solo\",\"inputSchema\":{\"type\":\"object\"}}'; echo '{\"name\":\"dup\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"a:$1\"\n", true)
	sdWriteExe(t, b, "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"dup\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"b:$1\"\n", true)
	s := startPrepared(t, sdDaemonCmd(t, []string{"--tools-dir", dir}))
	s.roundTrip(initLine)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Duplicate tool names: dup:` + b + `,` + a + `"}}`
	sdWantLine(t, "tools/list with a duplicate", s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), want)
	s.revision = sdModern
	sdWantLine(t, "2026 tools/list with a duplicate", s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+sdMeta+`}}`), want)
	s.revision = "2025-11-25"
	sdWantLine(t, "ping", s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), `{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	list := s.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if !strings.Contains(list, `"name":"solo"`) || !strings.Contains(list, `"name":"dup"`) {
		t.Errorf("after removing b.sh: %s", list)
	}
	if text, isErr := sdText(t, s.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"dup","arguments":{}}}`)); text != "a:dup" || isErr {
		t.Errorf("dup after the fix: %q isError=%v", text, isErr)
	}
}

// A `list` that prints something other than one tool object per line:
// tools/list fails naming the file and the line; fixing the file (no
// restart) restores the list.
func TestSdToolsDirInvalidList(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "c.sh")
	good := `{"name":"fine","inputSchema":{"type":"object"}}`
	provider := func(lines string) string {
		return "#!/usr/bin/env bash\n[ \"$1\" = list ] && cat <<'EOF'\n" + lines + "EOF\n"
	}
	sdWriteExe(t, exe, provider(good+"\n"), true)
	s := startPrepared(t, sdDaemonCmd(t, []string{"--tools-dir", dir}))
	s.roundTrip(initLine)
	for i, c := range []struct {
		name, lines, want string
	}{
		{"invalid JSON on line 2", good + "\n" + `{"name":"broken",` + "\n", "line 2: not valid JSON"},
		{"blank lines count", good + "\n\n" + `{"name": nope}` + "\n", "line 3: not valid JSON"},
		{"not an object", `["fine"]` + "\n", "line 1: is not a JSON object"},
		{"two documents on a line", good + " " + good + "\n", "line 1: holds more than one JSON document"},
		{"no name", good + "\n" + `{"inputSchema":{"type":"object"}}` + "\n", "line 2: no string name"},
	} {
		sdWriteExe(t, exe, provider(c.lines), true)
		r := sdParse(t, s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)))
		prefix := "Invalid tool JSON from " + exe + " " + c.want
		if r.Error == nil || r.Error.Code != -32603 || !strings.HasPrefix(r.Error.Message, prefix) {
			t.Errorf("%s: got %+v, want -32603 starting %q", c.name, r.Error, prefix)
		}
	}
	sdWriteExe(t, exe, "#!/usr/bin/env bash\n[ \"$1\" = list ] && echo '"+good+"'\n", true)
	if list := s.roundTrip(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); !strings.Contains(list, `"name":"fine"`) {
		t.Errorf("after the fix: %s", list)
	}
}

// --tools-dir together with a server script: tools.json's tools first,
// then the directory's; both kinds of call work in one server.
func TestSdToolsDirWithServerScript(t *testing.T) {
	dir := writeServer(t, map[string]string{
		"server.sh":  "PREFIX=from-script\ntool_scripted() { echo \"$PREFIX\"; }\n",
		"tools.json": toolsJSON("scripted"),
	})
	tools := filepath.Join(dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	sdWriteExe(t, filepath.Join(tools, "t.sh"), "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"listed\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"from-dir $1 $2\"\n", true)
	g, err := sdGoConnect(t, &mcp.CommandTransport{Command: sdDaemonCmd(t, []string{"--tools-dir", tools, filepath.Join(dir, "server.sh")})}, "2025-11-25", nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"scripted", "listed"}) {
		t.Errorf("tools = %q", got)
	}
	if text, isErr := g.call("scripted", map[string]any{}); text != "from-script" || isErr {
		t.Errorf("scripted = %q isError=%v", text, isErr)
	}
	if text, isErr := g.call("listed", map[string]any{"k": 1}); text != `from-dir listed {"k":1}` || isErr {
		t.Errorf("listed = %q isError=%v", text, isErr)
	}
	g.closeStdio("2025-11-25")
}

// ==== Seed 003: the tutorial's minimal handshake ====

// The tutorial's client messages, byte for byte, and the answers its
// server gives. Its tools/list answer has an inputSchema without
// "type":"object", which every MCP schema revision requires; the example's
// tools.json adds it (docs/migration.md).
func TestSdTutorialExactMessages(t *testing.T) {
	s := startPrepared(t, sdDaemonCmd(t, []string{repoPath("examples/tutorial/server.sh")}))
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
		s.send(e.client)
		if e.server == "" {
			continue // a notification: nothing comes back (the next recv is the next request's answer)
		}
		got := string(s.recv())
		if !sdSameJSON(t, got, e.server) {
			t.Errorf("client: %s\n got %s\nwant %s", e.client, got, e.server)
		}
	}
	if s.revision != "2024-11-05" {
		t.Errorf("negotiated %q, want the tutorial's 2024-11-05", s.revision)
	}
	// The tutorial's first JSON-RPC example (method "add", array params):
	// its final server answers Method not found, and so do we.
	if r := sdParse(t, s.roundTrip(`{"jsonrpc": "2.0","method": "add","params": [5, 3],"id": 1}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("method add: %+v", r)
	}
	// Where the tutorial evaluated the client's strings as bash arithmetic,
	// the example refuses anything but integers.
	if text, isErr := sdText(t, s.roundTrip(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"addition","arguments":{"num1":"a[$(echo pwned >&2)]","num2":"2"}}}`)); !isErr || !strings.HasSuffix(text, "num1 and num2 must be integers") {
		t.Errorf("non-integer num1: %q isError=%v", text, isErr)
	}
	if ee := s.closeAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.stderr)
	}
}

// A real host on the tutorial server: the Go SDK pinned to the tutorial's
// 2024-11-05, and with its default.
func TestSdTutorialGoSDK(t *testing.T) {
	for _, c := range []struct{ pin, want string }{{"2024-11-05", "2024-11-05"}, {"", sdModern}} {
		t.Run("version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.CommandTransport{Command: sdDaemonCmd(t, []string{repoPath("examples/tutorial/server.sh")})}, c.pin, nil)
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
func TestSdInProcessAPI(t *testing.T) {
	dir := writeServer(t, map[string]string{
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
	cmd.Env = sdEnv("MCP_BASHD="+binary, "SHIM="+repoPath("scripts/mcpserver_core.sh"), "TMPDIR="+tmp, "HOOK_LOG="+hookLog, "MCP_LOG_FILE="+logf, sdMark(t))
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
