// Issue 11, items 12–14: servers written for the 2026-07-28 bash SDK
// (mcp-server-bash-sdk) keep its per-connection HTTP entry point
// (`server.sh handle-connection`, run by socat/ncat/inetd/systemd for each
// connection), its dialect (a whitespace line unanswered, -32600 for a
// malformed tool name in the 2026 era) and its helper signatures
// (`create_response ID` with the result on stdin, `handle_tools_call ID
// NAME ARGS`), beside bash-mcp-sdk's.

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// ==== Item 12: per-connection HTTP ====

// dr2Post is one raw HTTP/1.1 POST to /mcp with the 2026 headers for
// method (and Mcp-Name when name is set) plus extra header lines.
func dr2Post(host, method, name, body string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nMCP-Protocol-Version: %s\r\nMcp-Method: %s\r\n", host, sdModern, method)
	if name != "" {
		fmt.Fprintf(&b, "Mcp-Name: %s\r\n", name)
	}
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return b.String()
}

// dr2Run runs a handle-connection process and returns the wait for its
// exit 0. The wait fails at the deadline: a server that binds a port
// instead of serving its stdin never exits on its own (it is killed at
// cleanup).
func dr2Run(t *testing.T, cmd *exec.Cmd) (wait func()) {
	t.Helper()
	p := harness.Run(t, cmd)
	return func() {
		t.Helper()
		if err := p.Wait(t, "handle-connection, serving its one connection,"); err != nil {
			t.Errorf("handle-connection exited with %v, want 0; stderr:\n%s", err, p.Stderr)
		}
	}
}

// dr2Response parses the one HTTP response a connection got, and checks
// it closes the connection, as the SDK's did.
func dr2Response(t *testing.T, raw []byte) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("not an HTTP response: %v\n%q", err, raw)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("response body: %v\n%q", err, raw)
	}
	if !resp.Close {
		t.Errorf("response without Connection: close (the SDK served one request per connection):\n%q", raw)
	}
	return resp, strings.TrimSuffix(string(body), "\n")
}

// dr2Weather is the weather example's tools/list answer.
const dr2WeatherList = `{"jsonrpc":"2.0","id":14,"result":{"tools":[{"name":"get_weather","description":"Get current weather for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or coordinates"}},"required":["location"]}}],"ttlMs":60000,"cacheScope":"public","resultType":"complete",` + sdWeatherMeta + `}}`

// ./weatherserver.sh handle-connection with stdin and stdout pipes: the
// SDK's own test_handle_connection_entry_point (printf REQUEST | server.sh
// handle-connection, so stdin ends right after the request), then one
// process per case: the answer, the Origin and Host checks of --http, one
// request per connection, and an exit 0 every time.
func TestHandleConnectionOverAPipe(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{` + sdMeta + `}}`
	sdkRequest := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: localhost\r\nMCP-Protocol-Version: %s\r\nMcp-Method: tools/list\r\nContent-Length: %d\r\n\r\n%s", sdModern, len(body), body)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},` + sdMeta + `}}`
	callAnswer := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":` + string(sdJSONString(sdLondon)) + `}],"resultType":"complete",` + sdWeatherMeta + `}}`
	for _, c := range []struct {
		name, stdin string
		status      int
		body        string // exact; "" for none
		contains    string
	}{
		{"the SDK's entry-point test", sdkRequest, 200, dr2WeatherList, ""},
		{"tools/call", dr2Post("127.0.0.1:3000", "tools/call", "get_weather", call), 200, callAnswer, ""},
		// Pipelined: only the first is answered, then the connection closes.
		{"one request per connection", sdkRequest + dr2Post("localhost", "tools/call", "get_weather", call), 200, dr2WeatherList, ""},
		{"notification", dr2Post("localhost", "notifications/cancelled", "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`), 202, "", ""},
		{"foreign Origin", dr2Post("localhost", "tools/list", "", body, "Origin: http://evil.example"), 403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Origin not allowed: http://evil.example"}}`, ""},
		{"foreign Host (DNS rebinding)", dr2Post("evil.example:3000", "tools/list", "", body), 403, "", "Host evil.example:3000 is not allowed"},
		{"GET", "GET /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n", 405, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := harness.Command(t, sdWeather([]string{"handle-connection"}))
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout = strings.NewReader(c.stdin), &out
			dr2Run(t, cmd)()
			if n := strings.Count(out.String(), "HTTP/1.1 "); n != 1 {
				t.Fatalf("want exactly one HTTP response on stdout, got %d:\n%q", n, out.String())
			}
			resp, got := dr2Response(t, out.Bytes())
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, c.status, got)
			}
			if c.body != "" || c.contains == "" {
				sdWantLine(t, "body", got, c.body)
			}
			if c.contains != "" && !strings.Contains(got, c.contains) {
				t.Errorf("body %s lacks %q", got, c.contains)
			}
		})
	}
	// A connection that closes before sending anything: nothing written,
	// exit 0.
	t.Run("no request", func(t *testing.T) {
		cmd := harness.Command(t, sdWeather([]string{"handle-connection"}))
		var out bytes.Buffer
		cmd.Stdin, cmd.Stdout = strings.NewReader(""), &out
		dr2Run(t, cmd)()
		if out.Len() != 0 {
			t.Errorf("stdout %q, want nothing", out.String())
		}
	})
}

// dr2Serve runs ./weatherserver.sh handle-connection with f as stdin and
// stdout (f is closed here once the child has it) and returns a function
// that waits for its exit 0.
func dr2Serve(t *testing.T, f *os.File, env ...string) func() {
	t.Helper()
	cmd := harness.Command(t, sdWeather([]string{"handle-connection"}, env...))
	cmd.Stdin, cmd.Stdout = f, f
	wait := dr2Run(t, cmd)
	f.Close()
	return wait
}

// dr2SocketPair is a connected pair of Unix stream sockets: the child's
// end as a file, ours as a net.Conn — how socat's EXEC hands a connection
// to its child (one socket as both stdin and stdout).
func dr2SocketPair(t *testing.T) (*os.File, *net.UnixConn) {
	t.Helper()
	// Close-on-exec under the fork lock: macOS has no SOCK_CLOEXEC.
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	child := os.NewFile(uintptr(fds[0]), "child")
	mine := os.NewFile(uintptr(fds[1]), "mine")
	defer mine.Close()
	c, err := net.FileConn(mine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return child, c.(*net.UnixConn)
}

// dr2ReadAll reads a connection to its end (the server closing it).
func dr2ReadAll(t *testing.T, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(harness.Deadline(t))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the answer: %v (so far %q)", err, b)
	}
	return b
}

// One socket as stdin and stdout (socat's socketpair, systemd's
// Accept=yes): a client that half-closes after its request (as `socat -`
// or `nc -N` do) still gets its answer, then sees the connection end;
// the Host check follows the listening address the launcher names
// (SOCAT_SOCKADDR): loopback keeps the DNS-rebinding check, a public
// address does not.
func TestHandleConnectionOverASocketpair(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},` + sdMeta + `}}`
	for _, c := range []struct {
		name, host string
		env        []string
		status     int
	}{
		{"half-close", "127.0.0.1:3000", nil, 200},
		{"loopback listener, foreign Host", "evil.example:3000", []string{"SOCAT_SOCKADDR=127.0.0.1", "SOCAT_SOCKPORT=3000"}, 403},
		{"public listener, its own Host", "mcp.example:3000", []string{"SOCAT_SOCKADDR=192.0.2.7", "SOCAT_SOCKPORT=3000"}, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			child, conn := dr2SocketPair(t)
			wait := dr2Serve(t, child, c.env...)
			if _, err := io.WriteString(conn, dr2Post(c.host, "tools/call", "get_weather", call)); err != nil {
				t.Fatal(err)
			}
			if err := conn.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			resp, body := dr2Response(t, dr2ReadAll(t, conn))
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == 200 {
				sdWantLine(t, "tools/call", body, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":`+string(sdJSONString(sdLondon))+`}],"resultType":"complete",`+sdWeatherMeta+`}}`)
			}
			wait()
		})
	}
}

// inetd's and systemd's form: the accepted TCP socket itself as stdin and
// stdout. Its own address (127.0.0.1) makes the Host check apply.
func TestHandleConnectionOverTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	body := `{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{` + sdMeta + `}}`
	for _, c := range []struct {
		host   string
		status int
	}{{ln.Addr().String(), 200}, {"evil.example", 403}} {
		t.Run("Host="+c.host, func(t *testing.T) {
			client, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			server, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			f, err := server.(*net.TCPConn).File()
			server.Close()
			if err != nil {
				t.Fatal(err)
			}
			wait := dr2Serve(t, f)
			if _, err := io.WriteString(client, dr2Post(c.host, "tools/list", "", body)); err != nil {
				t.Fatal(err)
			}
			resp, got := dr2Response(t, dr2ReadAll(t, client))
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, c.status, got)
			}
			if c.status == 200 {
				sdWantLine(t, "tools/list", got, dr2WeatherList)
			}
			wait()
		})
	}
}

var dr2SocatListening = regexp.MustCompile(`listening on AF=2 127\.0\.0\.1:(\d+)`)

// The README's deployment: socat TCP-LISTEN:…,fork EXEC:"./server.sh
// handle-connection", one server process per connection, driven by the
// Go SDK's Streamable HTTP client both as a 2026-07-28 client and as a
// 2025-06-18 one (which, with no session surviving its process, works
// without Mcp-Session-Id). Stopping socat leaves nothing running.
func TestHandleConnectionBehindSocat(t *testing.T) {
	socat, err := exec.LookPath("socat")
	if err != nil {
		const why = "socat is not installed (.ci/run installs it)"
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	mark := sdMark(t)
	cmd := exec.Command(socat, "-d", "-d", "TCP-LISTEN:0,bind=127.0.0.1,reuseaddr,fork", "EXEC:./weatherserver.sh handle-connection")
	cmd.Dir = harness.RepoPath("examples/weather")
	cmd.Env = sdEnv("MCP_BASHD="+harness.Binary, "TMPDIR="+t.TempDir(), mark)
	p := harness.Run(t, cmd)
	stderr, done := p.Stderr, p.Done
	var url string
	proctest.WaitUntil(t, harness.Deadline(t), "socat to say where it listens", func() (bool, string) {
		m := dr2SocatListening.FindStringSubmatch(stderr.String())
		if m == nil {
			return false, stderr.String()
		}
		url = "http://127.0.0.1:" + m[1] + "/mcp"
		return true, ""
	})
	for _, c := range []struct{ pin, want string }{{"", sdModern}, {"2025-06-18", "2025-06-18"}} {
		t.Run("GoSDK/version="+c.want, func(t *testing.T) {
			g, err := sdGoConnect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, c.pin, nil)
			if err != nil {
				t.Fatalf("connect: %v\nsocat stderr:\n%s", err, stderr)
			}
			ir := g.cs.InitializeResult()
			if ir.ProtocolVersion != c.want || ir.ServerInfo == nil || ir.ServerInfo.Name != "WeatherServer" {
				t.Errorf("negotiated %q, serverInfo %+v", ir.ProtocolVersion, ir.ServerInfo)
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
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	proctest.WaitUntil(t, harness.Deadline(t), "no per-connection server left after socat stopped", func() (bool, string) {
		ps, err := proctest.WithEnv(harness.MarkKey, strings.TrimPrefix(mark, harness.MarkKey+"="))
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range proctest.Alive(ps) {
			left = append(left, p.String())
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
}

// The SDK's HTTP settings are shell variables it reads when the script
// runs (MCP_HTTP_PORT="${MCP_HTTP_PORT:-3000}"), so a script may set them
// without exporting: ./server.sh --http honours them.
func TestSDK2026HTTPSettingsFromScript(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"tools.json":  harness.ToolsJSON("hello"),
		"config.json": `{"supportedVersions":["2026-07-28"]}`,
		"server.sh": `#!/bin/bash
MCP_HTTP_PORT=0
MCP_HTTP_PATH=/custom
source "$SHIM"
tool_hello() { echo hello; }
case "${1:-}" in
--http) shift; run_mcp_http_server "$@" ;;
handle-connection) run_mcp_http_server handle-connection ;;
*) run_mcp_server "$@" ;;
esac
`,
	})
	cmd := exec.Command("./server.sh", "--http")
	cmd.Dir = dir
	cmd.Env = ctShimEnv("TMPDIR="+t.TempDir(), sdMark(t))
	p := harness.Run(t, cmd)
	stderr, done := p.Stderr, p.Done
	serving := regexp.MustCompile(`mcp-bashd: serving (http://127\.0\.0\.1:(\d+)(/\S*))\n`)
	proctest.WaitUntil(t, harness.Deadline(t), "the server to say where it listens", func() (bool, string) {
		select {
		case <-done:
			t.Fatalf("server exited:\n%s", stderr)
		default:
		}
		return serving.MatchString(stderr.String()), stderr.String()
	})
	m := serving.FindStringSubmatch(stderr.String())
	if m[2] == "3000" || m[3] != "/custom" {
		t.Errorf("the script's MCP_HTTP_PORT=0 and MCP_HTTP_PATH=/custom were not honoured: %s", m[0])
	}
	status, _, body := sdPost(t, m[1], sdModernHeaders("tools/call", "hello"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{},`+sdMeta+`}}`)
	if text, isErr := sdText(t, body); status != 200 || isErr || text != "hello" {
		t.Errorf("tools/call on %s: HTTP %d %s", m[1], status, body)
	}
}

// ==== Item 13: the 2026 SDK's dialect, per server ====

// dr2Server writes a drop-in server with the given config.json: tools
// echo and 1abc (a leading digit, which the 2026 SDK's name rule allows)
// and wrap, which uses both SDKs' helper forms from inside a tool.
func dr2Server(t *testing.T, config string) string {
	return harness.WriteFiles(t, map[string]string{
		"config.json": config,
		"tools.json":  harness.ToolsJSON("echo", "1abc", "wrap"),
		"server.sh": `#!/bin/bash
source "$SHIM"
tool_echo() { printf 'got %s' "$1"; }
tool_1abc() { printf 'digit'; }
tool_wrap() {
    printf '{"content":[{"type":"text","text":"hi"}]}' | create_response 5
    create_response 6 '{"a":1}'
    handle_tools_call 7 echo '{"x":1}'
    handle_tools_call 8 '{"name":"echo","arguments":{"y":2}}'
    handle_tools_call 9 'bad-name!' '{}'
}
run_mcp_server "$@"
`,
	})
}

const (
	dr2Config2026   = `{"supportedVersions":["2026-07-28"],"serverInfo":{"name":"Dr2","version":"2.0.0"}}`
	dr2ConfigBash   = `{"serverInfo":{"name":"Dr2","version":"2.0.0"}}`
	dr2Meta2026Info = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Dr2","version":"2.0.0"}}`
)

// dropInScript runs ./server.sh in dir (as the SDK's servers are run:
// tools.json and config.json are found relative to the working
// directory), with the shim and the binary in its environment, for a
// client speaking revision.
func dropInScript(dir, revision string, env ...string) harness.Options {
	return harness.Options{Exe: "./server.sh", Args: []string{}, Dir: dir, WorkDir: dir, Shim: true, CleanEnv: true,
		TempDir: true, Mark: "sd", Revision: revision, Env: env}
}

// dr2Serves serves a 2026 server's dir, logging to its server.log.
func dr2Serves(dir string) harness.Options {
	o := dropInScript(dir, sdModern)
	o.LogFile = filepath.Join(dir, "server.log")
	return o
}

// A line of whitespace (what bash's [[:space:]] matches) gets no answer
// from a server in the 2026 SDK's shape; a bash-mcp-sdk server keeps
// answering -32700. Over stdio, and through process_request at the
// script's top level (the SDK's test_blank_line_is_silent).
func TestSDK2026BlankLineUnanswered(t *testing.T) {
	blanks := []string{"   ", "\t \r", "\v\f "}
	t.Run("2026 config", func(t *testing.T) {
		s := harness.Start(t, dr2Serves(dr2Server(t, dr2Config2026)))
		s.Revision = "2025-11-25" // ping is of the legacy era
		for _, b := range blanks {
			s.Send(b)
		}
		sdWantLine(t, "the first answer", s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), `{"jsonrpc":"2.0","id":1,"result":{}}`)
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, s.Stderr)
		}
		for line := range s.Lines {
			t.Errorf("answered a blank line: %s", line)
		}
	})
	t.Run("bash-mcp-sdk config", func(t *testing.T) {
		s := harness.Start(t, dr2Serves(dr2Server(t, dr2ConfigBash)))
		for _, b := range blanks[:2] {
			sdWantLine(t, fmt.Sprintf("%q", b), s.RoundTrip(b), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Expected exactly one JSON document per line"}}`)
		}
	})
	t.Run("process_request", func(t *testing.T) {
		dir := dr2Server(t, dr2Config2026)
		os.WriteFile(filepath.Join(dir, "t.sh"), []byte(`source "$SHIM"
out=$(process_request '   ')
printf '[%s] %d\n' "$out" "$?"
`), 0o644)
		cmd := exec.Command("bash", "--noprofile", "--norc", "t.sh")
		cmd.Dir = dir
		cmd.Env = ctShimEnv("TMPDIR="+t.TempDir(), sdMark(t))
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "[] 0\n" {
			t.Errorf("process_request '   ': %v %q, want no answer", err, out)
		}
	})
}

// In the 2026 era a 2026-shaped server answers a tool name with a
// character other than a letter, a digit or _ with -32600 "Invalid tool
// name format: …" (the SDK's test_invalid_tool_name), and lets a leading
// digit through to the lookup as that SDK did; legacy-era requests, and
// every request to a bash-mcp-sdk server, keep -32602 "Invalid tool name".
func TestSDK2026ToolNameDialect(t *testing.T) {
	call := func(id int, name string, modern bool) string {
		meta := ""
		if modern {
			// The SDK's own test request carries clientInfo too.
			meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"TestClient","version":"1.0.0"}}`
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":{}%s}}`, id, sdJSONString(name), meta)
	}
	t.Run("2026 config", func(t *testing.T) {
		s := harness.Start(t, dr2Serves(dr2Server(t, dr2Config2026)))
		sdWantLine(t, "2026 era, bad name", s.RoundTrip(call(6, "invalid-tool-name!", true)), `{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid tool name format: invalid-tool-name!"}}`)
		sdWantLine(t, "2026 era, empty name", s.RoundTrip(call(7, "", true)), `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid tool name format: "}}`)
		sdWantLine(t, "2026 era, leading digit", s.RoundTrip(call(8, "1abc", true)), `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"digit"}],"resultType":"complete",`+dr2Meta2026Info+`}}`)
		sdWantLine(t, "2026 era, undeclared leading digit", s.RoundTrip(call(9, "9x", true)), `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Tool not found: 9x"}}`)
		s.Revision = "2025-11-25"
		sdWantLine(t, "legacy era, bad name", s.RoundTrip(call(10, "invalid-tool-name!", false)), `{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"Invalid tool name: invalid-tool-name!"}}`)
	})
	t.Run("bash-mcp-sdk config", func(t *testing.T) {
		s := harness.Start(t, dr2Serves(dr2Server(t, dr2ConfigBash)))
		sdWantLine(t, "2026 era, bad name", s.RoundTrip(call(6, "invalid-tool-name!", true)), `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid tool name: invalid-tool-name!"}}`)
		sdWantLine(t, "2026 era, leading digit", s.RoundTrip(call(8, "1abc", true)), `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid tool name: 1abc"}}`)
	})
}

// ==== Item 14: the 2026 SDK's helper signatures ====

// dr2Script runs a bash test script (sourcing the shim) in dir and
// returns its stdout; it must exit 0.
func dr2Script(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "t.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "t.sh")
	cmd.Dir = dir
	cmd.Env = ctShimEnv(append([]string{"TMPDIR=" + t.TempDir(), sdMark(t)}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := harness.Run(t, cmd).Wait(t, "t.sh"); err != nil {
		t.Fatalf("t.sh: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// create_response ID with the result on stdin (the SDK's 0.4.1 form) adds
// resultType and config.json's serverInfo exactly as its jq did, logs the
// line as RESPONSE, and fails with the SDK's log line on a result that is
// not an object; create_response ID RESULT keeps bash-mcp-sdk's plain
// envelope.
func TestSDK2026CreateResponseReadsStdin(t *testing.T) {
	dir := dr2Server(t, dr2Config2026)
	logf := filepath.Join(dir, "helpers.log")
	out := dr2Script(t, dir, `set -euo pipefail
MCP_CONFIG_FILE=config.json
source "$SHIM"
printf '{"content":[{"type":"text","text":"hi"}]}' | create_response 1
printf '{"content":[],"_meta":{"k":1}}' | create_response '"s"'
printf '{"resultType":null,"a":1,"a":2}' | create_response 2
printf '{"_meta":false,"resultType":"x"}' | create_response 3
st=0; out=$(printf '[1]' | create_response 4 2>/dev/null) || st=$?
printf 'array: [%s] %d\n' "$out" "$st"
st=0; out=$(printf '{"_meta":"s"}' | create_response 5 2>/dev/null) || st=$?
printf 'string _meta: [%s] %d\n' "$out" "$st"
create_response 6 '{"a":1}'
`, "MCP_LOG_FILE="+logf)
	// Each expected line was checked against the SDK's own jq program.
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete",` + dr2Meta2026Info + `}}
{"jsonrpc":"2.0","id":"s","result":{"content":[],"_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{"name":"Dr2","version":"2.0.0"}},"resultType":"complete"}}
{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","a":2,` + dr2Meta2026Info + `}}
{"jsonrpc":"2.0","id":3,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Dr2","version":"2.0.0"}},"resultType":"x"}}
array: [] 1
string _meta: [] 1
{"jsonrpc":"2.0","id":6,"result":{"a":1}}
`
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	log, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`] [RESPONSE] {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete",` + dr2Meta2026Info + `}}` + "\n",
		"] [ERROR] Failed to build response for id 4\n",
		"] [ERROR] Failed to build response for id 5\n",
	} {
		if !strings.Contains(string(log), w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	if strings.Contains(string(log), `"id":6`) {
		t.Errorf("bash-mcp-sdk's create_response logged its line:\n%s", log)
	}
}

// handle_tools_call ID NAME ARGS (the 2026 SDK's convention: a 2026-07-28
// call answered in its shape) beside handle_tools_call ID PARAMS
// (bash-mcp-sdk's), from the script's top level and from inside a tool.
func TestSDK2026HandleToolsCallForms(t *testing.T) {
	dir := dr2Server(t, dr2Config2026)
	out := dr2Script(t, dir, `set -euo pipefail
source "$SHIM"
tool_echo() { printf 'got %s' "$1"; }
handle_tools_call 1 echo '{"z":3}'
handle_tools_call 2 echo
handle_tools_call 3 'bad-name!' '{}'
handle_tools_call 4 '{"name":"echo","arguments":{"w":4}}'
handle_tools_call 5
`)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"got {\"z\":3}"}],"resultType":"complete",` + dr2Meta2026Info + `}}
{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"got {}"}],"resultType":"complete",` + dr2Meta2026Info + `}}
{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid tool name format: bad-name!"}}
{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"got {\"w\":4}"}]}}
{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid tool name: "}}
`
	if out != want {
		t.Errorf("top level:\n%s\nwant:\n%s", out, want)
	}

	// From a tool: both create_response forms and both handle_tools_call
	// forms (nested dispatch), their lines the tool's text.
	s := harness.Start(t, dr2Serves(dir))
	line := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wrap","arguments":{},` + sdMeta + `}}`)
	text, isErr := sdText(t, line)
	wantText := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete",` + dr2Meta2026Info + `}}
{"jsonrpc":"2.0","id":6,"result":{"a":1}}
{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"got {\"x\":1}"}],"resultType":"complete",` + dr2Meta2026Info + `}}
{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"got {\"y\":2}"}]}}
{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid tool name format: bad-name!"}}`
	if isErr || text != wantText {
		t.Errorf("tool wrap: isError=%v text:\n%s\nwant:\n%s", isErr, text, wantText)
	}
}
