// Drop-in answers (issue 11): what the side-by-side runs found beyond the
// issue's list. Servers written for an SDK keep that SDK's behaviour; a server in
// the 2026 SDK's shape is one whose config.json declares supportedVersions.
//
//   - N1/N2: a 2026 server's tool results are that SDK's: no isError on
//     success; a failing tool's text is its stdout as it is, or "Tool 'x'
//     failed with exit status N" when it printed nothing; its stderr goes
//     to the server's stderr, not into the result. bash-mcp-sdk servers
//     keep "Error executing x: " and the merged output.
//   - N3: a 2026 server's tools/list takes ttlMs and cacheScope from the
//     tools file, then MCP_DEFAULT_TTL_MS / MCP_DEFAULT_CACHE_SCOPE, then
//     60000 / public, in that SDK's member order (config.json's are
//     server/discover's).
//   - N4: tools, before-tool hooks and cancel hooks receive the arguments
//     as the SDK's jq printed them (jq -c: escapes decoded, 1e2 as 1E+2),
//     not as the client spelled them.
//   - N5/N6: HTTP answers and texts are the 2026 SDK's: an empty 405, a
//     JSON-RPC 404 for another path, its Origin, header and body texts.
//
// Every expected line is what the original SDK printed for the same
// request: from the side-by-side rig's runs (scenario named at each), or,
// where the rig had no such tool, from running the SDK's own
// mcpserver_core.sh (with jq 1.7.1) on the same server and requests.

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// ==== N1, N2: tool results ====

// rgHelpersConfig is the rig's 2026 server's config.json (T05, T06).
const rgHelpersConfig = `{"supportedVersions":["2026-07-28"],"serverInfo":{"name":"Helpers","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}},"ttlMs":1000,"cacheScope":"private"}`

// rgHelpersMeta ends every 2026 result of that server.
const rgHelpersMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Helpers","version":"1.0.0"}}`

// rgTools are the tools of both test servers, the same bodies under both
// SDKs' conventions.
const rgTools = `
tool_multiline() { printf 'line one\nline two\nline three'; }
tool_silent_failure() { return 1; }
tool_ok() { echo "fine"; echo "diag on stderr" >&2; }
tool_refuse() { echo "Must be at least 13"; return 1; }
tool_noisy() { echo "partial"; echo "why it failed" >&2; return 3; }
tool_erronly() { echo "only stderr" >&2; return 2; }
tool_killed() { kill -9 "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }
tool_outerr() { echo "out line"; echo "err line" >&2; printf 'tail\n\n\n'; }
tool_fail() { echo "bad thing"; return 3; }
tool_failsilent() { return 4; }
tool_bkilled() { echo "before"; kill -KILL "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }
tool_args() { printf '%s' "$1"; }
tool_v_int() { printf 'args=%s' "$1"; }
`

var rgToolNames = []string{"multiline", "silent_failure", "ok", "refuse", "noisy", "erronly", "killed",
	"outerr", "fail", "failsilent", "bkilled", "args", "v_int"}

// rgServer writes a server in the 2026 SDK's layout (paths set before the
// core is sourced, assets/ and logs/ beside it) with config as its
// config.json, and body before run_mcp_server.
func rgServer(t *testing.T, config, tools, body string) string {
	t.Helper()
	return harness.WriteFiles(t, map[string]string{
		"assets/config.json": config,
		"assets/tools.json":  tools,
		"logs/.keep":         "",
		"server.sh": `#!/bin/bash
MCP_CONFIG_FILE="$(dirname "${BASH_SOURCE[0]}")/assets/config.json"
MCP_TOOLS_LIST_FILE="$(dirname "${BASH_SOURCE[0]}")/assets/tools.json"
MCP_LOG_FILE="$(dirname "${BASH_SOURCE[0]}")/logs/server.log"
` + body + `
source "$SHIM"
` + rgTools + `
run_mcp_server "$@"
`,
	})
}

// rgBashServer writes a server as bash-mcp-sdk's README writes one.
func rgBashServer(t *testing.T, body string) string {
	t.Helper()
	return harness.WriteFiles(t, map[string]string{
		"config.json": `{"serverInfo":{"name":"bms","version":"1.0.0"}}`,
		"tools.json":  harness.ToolsJSON(append(rgToolNames, "slow")...),
		"server.sh": `#!/usr/bin/env bash
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export MCP_TOOLS_LIST_FILE="${HERE}/tools.json"
export MCP_CONFIG_FILE="${HERE}/config.json"
export MCP_LOG_FILE="${HERE}/server.log"
source "$SHIM"
` + rgTools + body + `
run_mcp_server
`,
	})
}

// rgCall is a 2026-07-28 tools/call of name with the id "name".
func rgCall(name, args string) string {
	return `{"jsonrpc":"2.0","id":"` + name + `","method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + sdMeta + `}}`
}

// rgByID sends every request, then collects one answer per id (calls
// run concurrently, so answers come in any order).
func rgByID(t *testing.T, s *harness.Daemon, requests ...string) map[string]string {
	t.Helper()
	for _, r := range requests {
		s.Send(r)
	}
	got := map[string]string{}
	for range requests {
		line := string(s.Recv())
		got[strings.Trim(cfgID(t, line), `"`)] = line // "ok" and 7 alike
	}
	return got
}

// A server written for the 2026 SDK: a success carries no isError, a
// failure's text is the tool's stdout as it is (or the SDK's sentence when
// it printed nothing, with 128+N for a signal), and the tool's stderr goes
// to the server's stderr. A bash-mcp-sdk server keeps its own shaping.
func TestSDK2026ToolResults(t *testing.T) {
	tools := harness.ToolsJSON(rgToolNames...)
	s := harness.Start(t, dropInScript(rgServer(t, rgHelpersConfig, tools, ""), sdModern))
	text := func(id, text string, isError bool) string {
		flag := ""
		if isError {
			flag = `"isError":true,`
		}
		return `{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"text","text":` + string(sdJSONString(text)) + `}],` + flag + `"resultType":"complete",` + rgHelpersMeta + `}}`
	}
	want := map[string]string{
		// The rig's T05 (helpers.sh), ids 5 and 6, with these ids.
		"multiline":      text("multiline", "line one\nline two\nline three", false),
		"silent_failure": text("silent_failure", "Tool 'silent_failure' failed with exit status 1", true),
		// The SDK's core run on these tools (T01's validate_age is refuse).
		"ok":      text("ok", "fine", false),
		"refuse":  text("refuse", "Must be at least 13", true),
		"noisy":   text("noisy", "partial", true),
		"erronly": text("erronly", "Tool 'erronly' failed with exit status 2", true),
		"killed":  text("killed", "Tool 'killed' failed with exit status 137", true),
	}
	var reqs []string
	for name := range want {
		reqs = append(reqs, rgCall(name, "{}"))
	}
	got := rgByID(t, s, reqs...)
	for id, w := range want {
		sdWantLine(t, "tools/call "+id, got[id], w)
	}
	// An older client's call to the same server: the same dialect.
	s.Revision = "2024-11-05"
	sdWantLine(t, "legacy-era tools/call", s.RoundTrip(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ok","arguments":{}}}`),
		`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"fine"}]}}`)
	if e := s.CloseAndWait(); e != nil {
		t.Fatalf("exit: %v; stderr:\n%s", e, s.Stderr.String())
	}
	// The SDK's tools wrote their stderr to the server's.
	for _, line := range []string{"diag on stderr", "why it failed", "only stderr"} {
		if !strings.Contains(s.Stderr.String(), line+"\n") {
			t.Errorf("the server's stderr lacks the tool's %q:\n%s", line, s.Stderr.String())
		}
	}

	t.Run("bash-mcp-sdk server", func(t *testing.T) {
		s := harness.Start(t, dropInScript(rgBashServer(t, ""), "2024-11-05"))
		call := func(id int, name string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, name)
		}
		// The rig's B05, ids 10–13 (tool_bkilled is its tool_killed).
		got := rgByID(t, s, call(10, "outerr"), call(11, "fail"), call(12, "failsilent"), call(13, "bkilled"))
		for id, w := range map[string]string{
			"10": `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"out line\nerr line\ntail"}],"isError":false}}`,
			"11": `{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"Error executing fail: bad thing"}],"isError":true}}`,
			"12": `{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"Error executing failsilent: "}],"isError":true}}`,
			"13": `{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"Error executing bkilled: before"}],"isError":true}}`,
		} {
			sdWantLine(t, "tools/call "+id, got[id], w)
		}
	})
}

// ==== N3: cache hints ====

// tools/list of a 2026 server: the tools file's ttlMs and cacheScope, then
// MCP_DEFAULT_TTL_MS and MCP_DEFAULT_CACHE_SCOPE as the script set them,
// then 60000 and public — never config.json's, which server/discover
// answers (then the same defaults) — in the SDK's member order.
func TestSDK2026CacheHints(t *testing.T) {
	tools := `{"tools":[{"name":"ok","description":"d","inputSchema":{"type":"object"}}]}`
	toolsWithHints := `{"tools":[{"name":"ok","description":"d","inputSchema":{"type":"object"}}],"ttlMs":5000,"cacheScope":"private"}`
	configNoHints := `{"supportedVersions":["2026-07-28"],"serverInfo":{"name":"Helpers","version":"1.0.0"},"capabilities":{"tools":{"listChanged":false}}}`
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + sdMeta + `}}`
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + sdMeta + `}}`
	listAnswer := func(hints string) string {
		return `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"ok","description":"d","inputSchema":{"type":"object"}}],` + hints + `"resultType":"complete",` + rgHelpersMeta + `}}`
	}
	discoverAnswer := func(hints string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},` + hints + `"resultType":"complete",` + rgHelpersMeta + `}}`
	}
	for _, c := range []struct {
		name, config, tools, script string
		list, discover              string
	}{
		// The rig's T01 (tools/list, id 2) and T06 (server/discover, id 1).
		{"config's hints", rgHelpersConfig, tools, "",
			`"ttlMs":60000,"cacheScope":"public",`, `"ttlMs":1000,"cacheScope":"private",`},
		{"tools file's hints", rgHelpersConfig, toolsWithHints, "",
			`"ttlMs":5000,"cacheScope":"private",`, `"ttlMs":1000,"cacheScope":"private",`},
		{"the script's defaults", configNoHints, tools, "MCP_DEFAULT_TTL_MS=42\nMCP_DEFAULT_CACHE_SCOPE=private",
			`"ttlMs":42,"cacheScope":"private",`, `"ttlMs":42,"cacheScope":"private",`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := harness.Start(t, dropInScript(rgServer(t, c.config, c.tools, c.script), sdModern))
			sdWantLine(t, "tools/list", s.RoundTrip(list), listAnswer(c.list))
			sdWantLine(t, "server/discover", s.RoundTrip(discover), discoverAnswer(c.discover))
		})
	}
}

// ==== N4: the arguments a tool receives ====

// The arguments reach the tool, its before-tool hook and its cancel hook
// as the SDK's jq printed them (bash-mcp-sdk's two jq -c passes, the 2026
// SDK's one tojson; the two differ only past decNumber's range, which the
// validator refuses). Big integers and fractions keep their digits.
func TestToolArgsAsJqPrintsThem(t *testing.T) {
	t.Run("bash-mcp-sdk server", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		s := harness.Start(t, dropInScript(rgBashServer(t, `
mcp_before_tool_call() { printf '%s' "$2" >"$RG_DIR/hook-$1"; }
tool_slow() { echo started >"$RG_FIFO"; sleep 600; }
tool_slow_cancel() { printf '%s\n' "$1" >"$RG_FIFO"; }
`), "2024-11-05", "RG_DIR="+dir, "RG_FIFO="+fifo))
		call := func(id int, name, args string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
		}
		got := rgByID(t, s,
			call(99, "args", `{ "b" : [1, 2],  "a": "x\u0041" , "n": 1.50 }`),
			call(114, "v_int", `{"i":1e2}`), call(115, "v_int", `{"i":1.5e3}`), call(121, "v_int", `{"i":1E400}`))
		for id, w := range map[string]string{
			// The rig's B05 id 99 and B02 ids 114, 115 and 121.
			"99":  `{"jsonrpc":"2.0","id":99,"result":{"content":[{"type":"text","text":"{\"b\":[1,2],\"a\":\"xA\",\"n\":1.50}"}],"isError":false}}`,
			"114": `{"jsonrpc":"2.0","id":114,"result":{"content":[{"type":"text","text":"args={\"i\":1E+2}"}],"isError":false}}`,
			"115": `{"jsonrpc":"2.0","id":115,"result":{"content":[{"type":"text","text":"args={\"i\":1.5E+3}"}],"isError":false}}`,
			"121": `{"jsonrpc":"2.0","id":121,"result":{"content":[{"type":"text","text":"args={\"i\":1E+400}"}],"isError":false}}`,
		} {
			sdWantLine(t, "tools/call "+id, got[id], w)
		}
		// Escapes jq writes otherwise, a big integer, a small fraction
		// (jq 1.7.1's text: internal/jq's golden table); the before-tool
		// hook's argsJSON is the same text.
		const printed = `{"big":9007199254740993,"j":1.5E-7,"s":"/é😀\u001f"}`
		sdWantLine(t, "tools/call 7", s.RoundTrip(call(7, "args", `{"big":9007199254740993,"j":1.5e-7,"s":"\/\u00e9\ud83d\ude00\u001F"}`)),
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":`+string(sdJSONString(printed))+`}],"isError":false}}`)
		if hook, err := os.ReadFile(filepath.Join(dir, "hook-args")); err != nil || string(hook) != printed {
			t.Errorf("before-tool hook's argsJSON = %q, %v; want %q", hook, err, printed)
		}

		// The cancel hook gets the same text.
		s.Send(call(8, "slow", `{"x":1e2,"y":"\u0041"}`))
		f, err := os.OpenFile(fifo, os.O_RDWR, 0) // RDWR: never blocks, never sees EOF
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := bufio.NewReader(f)
		if line, err := r.ReadString('\n'); err != nil || line != "started\n" {
			t.Fatalf("tool_slow: %q, %v", line, err)
		}
		s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`)
		if line, err := r.ReadString('\n'); err != nil || line != `{"x":1E+2,"y":"A"}`+"\n" {
			t.Errorf("cancel hook's argument = %q, %v", line, err)
		}
		if hook, err := os.ReadFile(filepath.Join(dir, "hook-slow")); err != nil || string(hook) != `{"x":1E+2,"y":"A"}` {
			t.Errorf("before-tool hook's argsJSON = %q, %v", hook, err)
		}
	})
	t.Run("2026 server", func(t *testing.T) {
		s := harness.Start(t, dropInScript(rgServer(t, rgHelpersConfig, harness.ToolsJSON(rgToolNames...), ""), sdModern))
		// The SDK's core on the same request.
		sdWantLine(t, "tools/call args", s.RoundTrip(rgCall("args", `{ "b" : [1, 2], "a": "x\u0041\/", "n": 1.50, "i":1e2, "j":1.5e-7, "big":9007199254740993, "k":1E400 }`)),
			`{"jsonrpc":"2.0","id":"args","result":{"content":[{"type":"text","text":"{\"b\":[1,2],\"a\":\"xA/\",\"n\":1.50,\"i\":1E+2,\"j\":1.5E-7,\"big\":9007199254740993,\"k\":1E+400}"}],"resultType":"complete",`+rgHelpersMeta+`}}`)
	})
}

// ==== N5, N6: HTTP ====

// handle-connection (and --http: the same handler) answers as the 2026
// SDK's HTTP transport did: the rig's T07/T08 (moviemcpserver.sh) and the
// SDK's transport run on the same requests.
func TestSDK2026HTTPAnswers(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + sdMeta + `}}`
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},` + sdMeta + `}}`
	post := func(target, body string, headers ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", target)
		for _, h := range headers {
			b.WriteString(h + "\r\n")
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		return b.String()
	}
	v, m := "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"
	for _, c := range []struct {
		name, request string
		status        int
		body          string
	}{
		{"GET", "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", 405, ""},
		{"DELETE", "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405, ""},
		{"another path", post("/other", list, v, m), 404, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"No MCP endpoint at /other"}}`},
		{"another path and a query", post("/other?x=1", "{}"), 404, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"No MCP endpoint at /other?x=1"}}`},
		{"foreign Origin", post("/mcp", list, v, m, "Origin: http://evil.example"), 403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Origin not allowed: http://evil.example"}}`},
		{"Mcp-Method mismatch", post("/mcp", list, v, "Mcp-Method: tools/call"), 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method header 'tools/call' does not match body value 'tools/list'"}}`},
		{"no MCP-Protocol-Version", post("/mcp", list, m), 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Missing required header: MCP-Protocol-Version"}}`},
		{"version mismatch", post("/mcp", call, "MCP-Protocol-Version: 2025-06-18", "Mcp-Method: tools/call", "Mcp-Name: get_weather"), 400, `{"jsonrpc":"2.0","id":5,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header '2025-06-18' does not match body value '2026-07-28'"}}`},
		{"no Mcp-Name", post("/mcp", call, v, "Mcp-Method: tools/call"), 400, `{"jsonrpc":"2.0","id":5,"error":{"code":-32020,"message":"Header mismatch: Missing required header: Mcp-Name"}}`},
		{"Mcp-Name mismatch", post("/mcp", call, v, "Mcp-Method: tools/call", "Mcp-Name: nope"), 400, `{"jsonrpc":"2.0","id":5,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header 'nope' does not match body value 'get_weather'"}}`},
		{"not JSON", post("/mcp", "this is not json", v, m), 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: body is not valid JSON"}}`},
		{"blank body", post("/mcp", "   ", v, m), 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: body is not valid JSON"}}`},
		{"empty body", post("/mcp", "", v, m), 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Empty request body"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := harness.Command(t, sdWeather([]string{"handle-connection"}))
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout = strings.NewReader(c.request), &out
			dr2Run(t, cmd)()
			resp, got := dr2Response(t, out.Bytes())
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
			sdWantLine(t, "body", got, c.body)
			if c.body == "" {
				if cl := resp.Header.Get("Content-Length"); cl != "0" || resp.Header.Get("Content-Type") != "" {
					t.Errorf("Content-Length %q, Content-Type %q: want an empty answer\n%s", cl, resp.Header.Get("Content-Type"), out.String())
				}
			} else if resp.Header.Get("X-Accel-Buffering") != "no" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v, want the SDK's Content-Type and X-Accel-Buffering\n%s", resp.Header, out.String())
			}
		})
	}
}
