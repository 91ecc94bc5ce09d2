// Seed 002: servers written for the 2026-07-28 bash SDK, served unchanged.

package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ==== Seed 002: the 2026-07-28 bash SDK's weather server ====

// The example is the README's server file by file: the MCP_* paths set
// before both SDK files are sourced, those files being the shim, the
// config in the README's discovery shape, logs/ kept in the repository,
// and the README's closing case statement.
func TestWeatherLayout(t *testing.T) {
	dir := harness.RepoPath("examples/weather")
	shim, err := os.ReadFile(harness.RepoPath("scripts/mcpserver_core.sh"))
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
func TestWeatherStdio(t *testing.T) {
	logf := harness.RepoPath("examples/weather/logs/weatherserver.log")
	logStart := int64(0)
	if fi, err := os.Stat(logf); err == nil {
		logStart = fi.Size()
	}
	s := harness.Start(t, sdWeather(nil))
	s.Revision = sdModern

	sdWantLine(t, "server/discover", s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+sdMeta+`}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},"ttlMs":3600000,"cacheScope":"public","resultType":"complete","instructions":"This server provides weather information.",`+sdWeatherMeta+`}}`)
	sdWantLine(t, "tools/list", s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+sdMeta+`}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get_weather","description":"Get current weather for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or coordinates"}},"required":["location"]}}],"ttlMs":60000,"cacheScope":"public","resultType":"complete",`+sdWeatherMeta+`}}`)
	sdWantLine(t, "tools/call London", s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},`+sdMeta+`}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"resultType":"complete",`+sdWeatherMeta+`}}`)

	// The README's failure path: echo a reason, return 1 → isError, and
	// the server keeps serving.
	for i, c := range []struct{ args, reason string }{
		{`{"location":""}`, "Missing required parameter: location"},
		{`{"location":"Atlantis"}`, "No weather data for location: Atlantis"},
	} {
		line := s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":%s,%s}}`, 10+i, c.args, sdMeta))
		if text, isErr := sdText(t, line); !isErr || !strings.HasSuffix(text, c.reason) {
			t.Errorf("get_weather %s: want isError ending in %q, got %s", c.args, c.reason, line)
		}
		if !strings.HasSuffix(line, `"isError":true,"resultType":"complete",`+sdWeatherMeta+`}}`) {
			t.Errorf("failing call's 2026 result shape: %s", line)
		}
	}
	// The schema is enforced before the tool runs.
	if text, isErr := sdText(t, s.RoundTrip(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_weather","arguments":{},`+sdMeta+`}}`)); !isErr || !strings.Contains(text, "Missing required parameter(s): location") {
		t.Errorf("get_weather without location: %q isError=%v", text, isErr)
	}
	// A version the config's supportedVersions does not list: -32022 with
	// the supported ones, as the 2026 SDK answers (server/discover it
	// answers at any version: sdk2026_version_first_test.go).
	sdWantLine(t, "unsupported version", s.RoundTrip(`{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`),
		`{"jsonrpc":"2.0","id":13,"error":{"code":-32022,"message":"Unsupported protocol version: 2099-01-01","data":{"requested":"2099-01-01","supported":["2026-07-28"]}}}`)

	// An old-style client: initialize, then calls without _meta.
	sdWantLine(t, "initialize", s.RoundTrip(`{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`),
		`{"jsonrpc":"2.0","id":20,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"WeatherServer","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}},"instructions":"This server provides weather information."}}`)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sdWantLine(t, "legacy tools/call", s.RoundTrip(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`),
		`{"jsonrpc":"2.0","id":21,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}]}}`)
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after stdin EOF: %v\n%s", ee, s.Stderr)
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
func TestWeatherTopLevelEnv(t *testing.T) {
	s := harness.Start(t, sdWeather(nil, "MCP_API_KEY=invalid"))
	s.Revision = sdModern
	line := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},` + sdMeta + `}}`)
	if text, isErr := sdText(t, line); !isErr || !strings.HasSuffix(text, "Weather API rejected the API key") {
		t.Errorf("with MCP_API_KEY=invalid: %s", line)
	}
}

// The Go SDK as the host: its default connect (server/discover with
// 2026-07-28, stateless) and a client pinned to 2025-06-18 (initialize).
func TestWeatherGoSDKStdio(t *testing.T) {
	for _, c := range []struct{ pin, want string }{{"", sdModern}, {"2025-06-18", "2025-06-18"}} {
		t.Run("version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.CommandTransport{Command: harness.Command(t, sdWeather(nil))}, c.pin, nil)
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

var sdServingRE = regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/mcp$`)

// sdStartWeatherHTTP starts the server with MCP_HTTP_PORT=0 (the kernel
// picks a free port) and waits for the line naming the address.
func sdStartWeatherHTTP(t *testing.T) *harness.HTTPDaemon {
	t.Helper()
	h := harness.StartHTTP(t, sdWeather([]string{"--http"}, "MCP_HTTP_PORT=0"))
	m := sdServingRE.FindStringSubmatch(h.URL)
	if m == nil {
		t.Fatalf("the server serves %q, not http://127.0.0.1:PORT/mcp\n%s", h.URL, h.Stderr)
	}
	if m[1] == "3000" {
		t.Fatalf("MCP_HTTP_PORT=0 was not honoured: the server listens on the default port 3000")
	}
	return h
}

// sdPost sends one JSON-RPC message to url with the given headers (plus
// Content-Type and the Accept the spec requires).
func sdPost(t *testing.T, url string, hdr map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
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
func TestWeatherHTTP(t *testing.T) {
	h := sdStartWeatherHTTP(t)
	check := func(rev, method, body string) {
		t.Helper()
		if err := mcpschema.Check(rev, method, []byte(body)); err != nil {
			t.Errorf("not valid for %s (%s): %v\n%s", rev, method, err, body)
		}
	}
	status, _, body := sdPost(t, h.URL, sdModernHeaders("server/discover", ""), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+sdMeta+`}}`)
	if status != 200 {
		t.Errorf("server/discover: HTTP %d %s", status, body)
	}
	sdWantLine(t, "server/discover over HTTP", body, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},"ttlMs":3600000,"cacheScope":"public","resultType":"complete","instructions":"This server provides weather information.",`+sdWeatherMeta+`}}`)
	check(sdModern, "", body)

	status, _, body = sdPost(t, h.URL, sdModernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+sdMeta+`}}`)
	if status != 200 || !strings.Contains(body, `"name":"get_weather"`) {
		t.Errorf("tools/list: HTTP %d %s", status, body)
	}
	check(sdModern, "tools/list", body)

	status, hdr, body := sdPost(t, h.URL, sdModernHeaders("tools/call", "get_weather"), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},`+sdMeta+`}}`)
	if status != 200 {
		t.Errorf("tools/call: HTTP %d %s", status, body)
	}
	sdWantLine(t, "tools/call over HTTP", body, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"resultType":"complete",`+sdWeatherMeta+`}}`)
	check(sdModern, "tools/call", body)
	if hdr.Get("Mcp-Session-Id") != "" {
		t.Errorf("a 2026 response carries Mcp-Session-Id %q", hdr.Get("Mcp-Session-Id"))
	}

	status, _, body = sdPost(t, h.URL, sdModernHeaders("tools/call", "get_weather"), `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":""},`+sdMeta+`}}`)
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
		{"Mcp-Name mismatch", sdModernHeaders("tools/call", "get_forecast"), "Header mismatch: Mcp-Name header 'get_forecast' does not match body value 'get_weather'"},
		{"Mcp-Name missing", sdModernHeaders("tools/call", ""), "Header mismatch: Missing required header: Mcp-Name"},
		{"Mcp-Method missing", map[string]string{"MCP-Protocol-Version": sdModern, "Mcp-Name": "get_weather"}, "Header mismatch: Missing required header: Mcp-Method"},
		{"Mcp-Method mismatch", map[string]string{"MCP-Protocol-Version": sdModern, "Mcp-Method": "tools/list", "Mcp-Name": "get_weather"}, "Header mismatch: Mcp-Method header 'tools/list' does not match body value 'tools/call'"},
		{"version mismatch", map[string]string{"MCP-Protocol-Version": "2025-06-18", "Mcp-Method": "tools/call", "Mcp-Name": "get_weather"}, "Header mismatch: MCP-Protocol-Version header '2025-06-18' does not match body value '2026-07-28'"},
	} {
		status, _, body := sdPost(t, h.URL, c.hdr, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},`+sdMeta+`}}`)
		want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32020,"message":"` + c.want + `"}}`
		if status != http.StatusBadRequest || body != want {
			t.Errorf("%s: HTTP %d %s\nwant 400 %s", c.name, status, body, want)
		}
	}
	// A foreign Origin is refused (DNS rebinding), as the README's
	// MCP_ALLOWED_ORIGINS allowlist does.
	o := sdModernHeaders("tools/list", "")
	o["Origin"] = "http://evil.example"
	if status, _, body := sdPost(t, h.URL, o, `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{`+sdMeta+`}}`); status != http.StatusForbidden {
		t.Errorf("foreign Origin: HTTP %d %s", status, body)
	}

	// A legacy client: initialize opens a session; its calls carry it.
	status, hdr, body = sdPost(t, h.URL, nil, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if status != 200 || sid == "" {
		t.Fatalf("legacy initialize: HTTP %d session %q %s", status, sid, body)
	}
	sdWantLine(t, "legacy initialize over HTTP", body, `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"WeatherServer","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}},"instructions":"This server provides weather information."}}`)
	check("2025-06-18", "initialize", body)
	legacy := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	if status, _, body := sdPost(t, h.URL, legacy, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Errorf("notifications/initialized: HTTP %d %s", status, body)
	}
	status, _, body = sdPost(t, h.URL, legacy, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`)
	if status != 200 {
		t.Errorf("legacy tools/call: HTTP %d", status)
	}
	sdWantLine(t, "legacy tools/call over HTTP", body, `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}]}}`)
	check("2025-06-18", "tools/call", body)

	// The Go SDK's Streamable HTTP client, default (2026) and pinned.
	for _, c := range []struct{ pin, want string }{{"", sdModern}, {"2025-06-18", "2025-06-18"}} {
		t.Run("GoSDK/version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.StreamableClientTransport{Endpoint: h.URL, MaxRetries: -1}, c.pin, nil)
			if err != nil {
				t.Fatalf("connect: %v\nserver stderr:\n%s", err, h.Stderr.String())
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
	h.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.Done:
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("server did not stop on SIGTERM\n%s", h.Stderr.String())
	}
	if ws := h.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("exit after SIGTERM: %v, want death by SIGTERM", h.Cmd.ProcessState)
	}
}
