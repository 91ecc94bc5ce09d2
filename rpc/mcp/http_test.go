package mcp_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/stdio"
	"github.com/mcp-bashd/mcp-bashd/rpc/streamhttp"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// httpFixture is a real server (real supervisor, real bash) behind the
// Streamable HTTP transport in httptest.
type httpFixture struct {
	t   *testing.T
	srv *mcp.Server
	ts  *httptest.Server
	dir string
}

const httpTestScript = `
tool_hello() { echo "hello"; }
tool_hello2() { echo "hello2"; }
tool_progress() { mcp_progress 1 3 first; mcp_progress 2 3; mcp_progress 3 3 last; echo done; }
tool_slow() { echo started > "$READY"; while :; do sleep 0.05; done; }
tool_slow_cancel() { echo cancelled > "$CANCELLED"; }
`

const httpTestTools = `{"tools":[
{"name":"hello","description":"d","inputSchema":{"type":"object"}},
{"name":"progress","description":"d","inputSchema":{"type":"object"}},
{"name":"slow","description":"d","inputSchema":{"type":"object"}},
{"name":"hello2","description":"d","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}}]}`

func newHTTPFixture(t *testing.T, opt streamhttp.Options) *httpFixture {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	must(t, os.WriteFile(script, []byte(httpTestScript), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tools.json"), []byte(httpTestTools), 0o644))
	t.Setenv("TMPDIR", dir)
	t.Setenv("READY", filepath.Join(dir, "ready"))
	t.Setenv("CANCELLED", filepath.Join(dir, "cancelled"))
	bash, err := exec.LookPath("bash")
	must(t, err)
	sup, err := supervisor.New(supervisor.Config{Bash: bash, Script: script, OutputCap: 1 << 20, Grace: time.Second, HookBudget: 2 * time.Second, Log: zaptest.NewLogger(t)})
	must(t, err)
	t.Cleanup(func() { sup.Close() })
	snap, err := sup.Load(context.Background())
	must(t, err)
	src := catalog.NewSource(catalog.Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json")})
	srv := mcp.New(mcp.Options{
		Catalog: src, Runner: sup, Snapshot: func() *supervisor.Snapshot { return snap }, Log: zaptest.NewLogger(t),
	})
	if opt.Path == "" {
		opt.Path = "/mcp"
	}
	opt.Loopback = true
	opt.ModernEnabled, opt.Stopping, opt.Serve = srv.ModernEnabled, srv.Stopping, srv.Serve
	opt.LegacyVersions = mcp.LegacyVersions()
	ts := httptest.NewServer(streamhttp.New(opt))
	t.Cleanup(ts.Close)
	return &httpFixture{t: t, srv: srv, ts: ts, dir: dir}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type httpReq struct {
	method  string
	path    string
	body    string
	headers map[string]string
}

func (f *httpFixture) do(r httpReq) (*http.Response, string) {
	f.t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.path == "" {
		r.path = "/mcp"
	}
	req, err := http.NewRequest(r.method, f.ts.URL+r.path, strings.NewReader(r.body))
	must(f.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range r.headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(f.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const (
	modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
)

func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func TestHTTPStatusRules(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	cases := []struct {
		name   string
		req    httpReq
		status int
		body   string // substring the body must contain
	}{
		{"wrong path", httpReq{path: "/other", body: legacyInit}, 404, ""},
		{"GET has no stream", httpReq{method: "GET"}, 405, ""},
		{"DELETE without session", httpReq{method: "DELETE"}, 405, ""},
		{"foreign Host", httpReq{body: legacyInit, headers: map[string]string{"Host": "evil.example:80"}}, 403, "Host"},
		{"foreign Origin", httpReq{body: legacyInit, headers: map[string]string{"Origin": "http://evil.example"}}, 403, "Origin"},
		{"loopback Origin", httpReq{body: legacyInit, headers: map[string]string{"Origin": "http://localhost:5173"}}, 200, `"protocolVersion":"2025-06-18"`},
		{"notification", httpReq{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, 202, ""},
		{"client response", httpReq{body: `{"jsonrpc":"2.0","id":5,"result":{}}`}, 202, ""},
		{"parse error", httpReq{body: `{not json`}, 400, `"code":-32700`},
		{"not an object", httpReq{body: `[1,2]`}, 400, `"code":-32600`},
		{"unknown session", httpReq{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headers: map[string]string{"Mcp-Session-Id": "nope"}}, 404, ""},
		{"legacy without session", httpReq{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}, 200, `"name":"hello"`},
		{"legacy unknown method stays 200", httpReq{body: `{"jsonrpc":"2.0","id":2,"method":"nope"}`}, 200, `"code":-32601`},
		{"modern without _meta", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{}}`, headers: modernHeaders("server/discover", "")}, 400, `"code":-32602`},
		{"modern without clientCapabilities", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, headers: modernHeaders("server/discover", "")}, 400, `"code":-32602`},
		{"modern discover", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + modernMeta + `}}`, headers: modernHeaders("server/discover", "")}, 200, `"supportedVersions":["2026-07-28"]`},
		{"modern missing Mcp-Method", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`, headers: map[string]string{"MCP-Protocol-Version": "2026-07-28"}}, 400, `"code":-32020`},
		{"modern method mismatch", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`, headers: modernHeaders("tools/call", "")}, 400, `"code":-32020`},
		{"modern missing Mcp-Name", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello",` + modernMeta + `}}`, headers: modernHeaders("tools/call", "")}, 400, `"code":-32020`},
		{"modern name mismatch", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello",` + modernMeta + `}}`, headers: modernHeaders("tools/call", "other")}, 400, `"code":-32020`},
		{"modern name trimmed", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello",` + modernMeta + `}}`, headers: modernHeaders("tools/call", "  hello  ")}, 200, `"resultType":"complete"`},
		{"modern name base64", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello",` + modernMeta + `}}`, headers: modernHeaders("tools/call", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("hello"))+"?=")}, 200, `"text":"hello"`},
		{"modern header vs body version", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}`, headers: modernHeaders("server/discover", "")}, 400, `"code":-32020`},
		{"modern unsupported version", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}`, headers: map[string]string{"MCP-Protocol-Version": "v999", "Mcp-Method": "server/discover"}}, 400, `"supported":["2026-07-28"]`},
		{"modern initialize is unknown", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{` + modernMeta + `}}`, headers: modernHeaders("initialize", "")}, 404, `"code":-32601`},
		{"modern ping is unknown", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + modernMeta + `}}`, headers: modernHeaders("ping", "")}, 404, `"code":-32601`},
		{"modern unknown tool", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope",` + modernMeta + `}}`, headers: modernHeaders("tools/call", "nope")}, 400, `"code":-32602`},
		{"param header matches", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello2","arguments":{"region":"eu","n":10},` + modernMeta + `}}`, headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "hello2", "Mcp-Param-Region": "=?base64?ZXU=?=", "Mcp-Param-N": "1e1"}}, 200, `"text":"hello2"`},
		{"param header missing", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello2","arguments":{"region":"eu"},` + modernMeta + `}}`, headers: modernHeaders("tools/call", "hello2")}, 400, `"code":-32020`},
		{"param header bad base64", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello2","arguments":{"region":"eu"},` + modernMeta + `}}`, headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "hello2", "Mcp-Param-Region": "=?base64?ZX!U?="}}, 400, `"code":-32020`},
		{"modern prompts undeclared", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{` + modernMeta + `}}`, headers: modernHeaders("prompts/list", "")}, 404, `"code":-32601`},
		{"modern session id ignored", httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`, headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Session-Id": "whatever"}}, 200, `"ttlMs"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := f.do(c.req)
			if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, body, c.status, c.body)
			}
			if c.status == 202 && body != "" {
				t.Fatalf("202 with a body: %q", body)
			}
			if c.req.body != "" && strings.Contains(c.req.body, "2026-07-28") && resp.Header.Get("Mcp-Session-Id") != "" {
				t.Fatalf("a 2026 response minted a session id")
			}
		})
	}
}

func TestHTTPLegacySessionLifecycle(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	resp, body := f.do(httpReq{body: legacyInit})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %q session %q", resp.StatusCode, body, sid)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	if resp, body := f.do(httpReq{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: hdr}); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":2,"result":{}}`+"\n" {
		t.Fatalf("ping in session: %d %q", resp.StatusCode, body)
	}
	bad := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"}
	if resp, _ := f.do(httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"ping"}`, headers: bad}); resp.StatusCode != 400 {
		t.Fatalf("unsupported MCP-Protocol-Version: %d", resp.StatusCode)
	}
	if resp, _ := f.do(httpReq{method: "DELETE", headers: hdr}); resp.StatusCode != 204 {
		t.Fatalf("DELETE session: %d", resp.StatusCode)
	}
	if resp, _ := f.do(httpReq{body: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, headers: hdr}); resp.StatusCode != 404 {
		t.Fatalf("ended session: %d", resp.StatusCode)
	}
}

// A missing or wrong token is 403 without a challenge: a 401 would send
// an MCP client into an OAuth flow this server does not have.
func TestHTTPBearerToken(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{Token: []byte("s3cret")})
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}} {
		if resp, _ := f.do(httpReq{body: legacyInit, headers: h}); resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != "" {
			t.Fatalf("headers %v: %d (WWW-Authenticate %q)", h, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp, _ := f.do(httpReq{body: legacyInit, headers: map[string]string{"Authorization": "Bearer s3cret"}}); resp.StatusCode != 200 {
		t.Fatalf("right token: %d", resp.StatusCode)
	}
}

// Progress reaches the client before the result, over SSE; a client that
// accepts only JSON gets the result without the notifications.
func TestHTTPProgressOverSSE(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p1"}}}`
	resp, out := f.do(httpReq{body: body})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q body %q", ct, out)
	}
	var datas []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			datas = append(datas, d)
		}
	}
	if len(datas) != 4 || !strings.Contains(datas[0], `"progress":1`) || !strings.Contains(datas[2], `"progress":3`) || !strings.Contains(datas[3], `"id":7`) {
		t.Fatalf("events: %q", datas)
	}
	req, _ := http.NewRequest("POST", f.ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json")
	r2, err := http.DefaultClient.Do(req)
	must(t, err)
	b, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), `"text":"done"`) {
		t.Fatalf("JSON-only client: %q %q", r2.Header.Get("Content-Type"), b)
	}
}

// A client that drops its connection cancels its call: the cancel hook runs.
func TestHTTPDisconnectCancelsCall(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFile(t, filepath.Join(f.dir, "ready"))
	cancel()
	<-errc
	waitFile(t, filepath.Join(f.dir, "cancelled"))
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHTTPStoppingRefuses(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	f.srv.Stop(0)
	if resp, _ := f.do(httpReq{body: legacyInit}); resp.StatusCode != 503 {
		t.Fatalf("after Stop: %d", resp.StatusCode)
	}
}

// A config.json whose supportedVersions omits 2026-07-28 makes the server
// legacy-only: the server/discover probe gets -32601 at once, so probing
// clients fall back to initialize.
func TestLegacyOnlyServerRefusesDiscover(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	must(t, os.WriteFile(filepath.Join(f.dir, "config.json"), []byte(`{"supportedVersions":["2025-11-25"]}`), 0o644))
	var out strings.Builder
	lb := &lockedBuilder{b: &out}
	in := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}` + "\n"
	conn := stdio.New(strings.NewReader(in), lb, stdio.Options{ModernEnabled: f.srv.ModernEnabled})
	must(t, f.srv.Serve(conn))
	conn.Flush(time.Minute) // small answers are queued; the process flushes before it exits
	if got := lb.String(); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: server/discover"}}`+"\n" {
		t.Fatalf("discover on a legacy-only server: %q", got)
	}
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server/discover keeps its last result only while the catalog it was made
// of is the one in use: an edit of config.json shows in the next discover.
func TestDiscoverFollowsConfigEdits(t *testing.T) {
	f := newHTTPFixture(t, streamhttp.Options{})
	discover := func() string {
		t.Helper()
		resp, body := f.do(httpReq{body: `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + modernMeta + `}}`, headers: modernHeaders("server/discover", "")})
		if resp.StatusCode != 200 {
			t.Fatalf("discover: %d %s", resp.StatusCode, body)
		}
		return body
	}
	first := discover()
	if strings.Contains(first, "instructions") || discover() != first {
		t.Fatalf("discover without config.json: %s", first)
	}
	must(t, os.WriteFile(filepath.Join(f.dir, "config.json"), []byte(`{"instructions":"ask nicely"}`), 0o644))
	edited := discover()
	if !strings.Contains(edited, `"instructions":"ask nicely"`) {
		t.Fatalf("discover after config.json was written: %s", edited)
	}
	if again := discover(); again != edited {
		t.Fatalf("discover changed with nothing edited:\n%s\n%s", edited, again)
	}
}
