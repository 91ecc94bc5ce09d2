package mcp_test

import (
	"bufio"
	"context"
	"fmt"
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
	"github.com/mcp-bashd/mcp-bashd/rpc/streamhttp"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Listen streams opened, fed and dropped concurrently, then torn down by
// Stop: every stream gets its acknowledgment first and ends (its client
// gone, or with a result at Stop), and nothing races (go test -race).
func TestListenStreamsUnderLoad(t *testing.T) {
	srv, sup, url := newResourcesFixture(t)
	fwd, stopFwd := context.WithCancel(context.Background())
	defer stopFwd()
	go srv.ForwardResourceUpdates(fwd, sup.ResourceUpdates())
	post := func(ctx context.Context, method, name, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modernHeaders(method, name) {
			req.Header.Set(k, v)
		}
		return http.DefaultClient.Do(req)
	}
	listenLoad(t, srv, post)
}

// newResourcesFixture is a real server (real supervisor, real bash) with a
// tool that calls mcp_resource_updated and a resources.json, behind the
// Streamable HTTP transport in httptest; url is its endpoint.
func newResourcesFixture(t *testing.T) (*mcp.Server, *supervisor.Supervisor, string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	must(t, os.WriteFile(script, []byte(`tool_touch() { mcp_resource_updated notes://a; echo ok; }
resource_a() { echo a; }
`), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tools.json"), []byte(`{"tools":[{"name":"touch","inputSchema":{"type":"object"}}]}`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "resources.json"), []byte(`{"resources":[{"uri":"notes://a","name":"a"}]}`), 0o644))
	t.Setenv("TMPDIR", dir)
	bash, err := exec.LookPath("bash")
	must(t, err)
	sup, err := supervisor.New(supervisor.Config{Bash: bash, Script: script, Log: zaptest.NewLogger(t)})
	must(t, err)
	t.Cleanup(func() { sup.Close() })
	snap, err := sup.Load(context.Background())
	must(t, err)
	srv, url := serveResources(t, dir, sup, snap)
	return srv, sup, url
}

// serveResources is a second Server over the fixture's supervisor: two
// replicas in one test process share one supervisor, because a
// supervisor's reaper waits for any child of the process and would take
// another supervisor's.
func serveResources(t *testing.T, dir string, sup *supervisor.Supervisor, snap *supervisor.Snapshot) (*mcp.Server, string) {
	t.Helper()
	src := catalog.NewSource(catalog.Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json"),
		ResourcesFile: filepath.Join(dir, "resources.json")})
	srv := mcp.New(mcp.Options{Catalog: src, Runner: sup, Snapshot: func() *supervisor.Snapshot { return snap }, Log: zaptest.NewLogger(t)})
	h := streamhttp.New(streamhttp.Options{Path: "/mcp", Loopback: true, ModernEnabled: srv.ModernEnabled,
		Stopping: srv.Stopping, Serve: srv.Serve, LegacyVersions: mcp.LegacyVersions()})
	ts := httptest.NewUnstartedServer(h)
	// Idle GET streams end when the server shuts down, as the daemon's do.
	ts.Config.RegisterOnShutdown(h.EndStreams)
	ts.Start()
	t.Cleanup(func() {
		h.EndStreams()
		h.Close()
		ts.Close()
	})
	return srv, ts.URL + "/mcp"
}

func listenLoad(t *testing.T, srv *mcp.Server, post func(ctx context.Context, method, name, body string) (*http.Response, error)) {
	const streams = 8
	var wg sync.WaitGroup
	results := make(chan string, streams)
	for i := 0; i < streams; i++ {
		ctx, drop := context.WithCancel(context.Background())
		resp, err := post(ctx, "subscriptions/listen", "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,"notifications":{"resourceSubscriptions":["notes://a"]}}}`, i, modernMeta))
		must(t, err)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer drop()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			first, updates, last := "", 0, ""
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				if first == "" {
					first = data
				}
				if strings.Contains(data, "resources/updated") {
					updates++
				}
				last = data
				if i%2 == 1 && updates == 2 {
					drop() // this client goes away mid-stream
				}
			}
			switch {
			case !strings.Contains(first, "notifications/subscriptions/acknowledged"):
				results <- fmt.Sprintf("stream %d: first event %s", i, first)
			case i%2 == 0 && !strings.Contains(last, `"result"`):
				results <- fmt.Sprintf("stream %d: ended without its result: %s", i, last)
			default:
				results <- ""
			}
		}(i)
	}
	var calls sync.WaitGroup
	for i := 0; i < 12; i++ {
		calls.Add(1)
		go func(i int) {
			defer calls.Done()
			resp, err := post(context.Background(), "tools/call", "touch", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"touch",%s}}`, 100+i, modernMeta))
			if err == nil {
				resp.Body.Close()
			}
		}(i)
	}
	calls.Wait()
	srv.Stop(time.Second)
	wg.Wait()
	close(results)
	for r := range results {
		if r != "" {
			t.Error(r)
		}
	}
}

// A legacy session's GET stream carries what belongs to no request (here
// a resources/updated for a resources/subscribe); a newer GET replaces
// the older, which ends; a GET for an unknown session is 404, one that
// does not accept SSE 406.
func TestSessionGETStream(t *testing.T) {
	srv, _, url := newResourcesFixture(t)
	do := func(method, body string, hdr map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := do("POST", legacyInit, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	if r, _ := do("GET", "", map[string]string{"Mcp-Session-Id": "nope"}); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET for an unknown session: %d", r.StatusCode)
	}
	if r, _ := do("GET", "", map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json"}); r.StatusCode != http.StatusNotAcceptable {
		t.Errorf("GET without text/event-stream: %d", r.StatusCode)
	}
	open := func() (*http.Response, *bufio.Scanner) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET stream: %s %q", resp.Status, resp.Header.Get("Content-Type"))
		}
		return resp, bufio.NewScanner(resp.Body)
	}
	first, firstLines := open()
	defer first.Body.Close()
	second, lines := open()
	defer second.Body.Close()
	for firstLines.Scan() { // the replaced stream ends
	}
	// The subscription and the update: the notification is on the newer
	// stream.
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	if _, body := do("POST", `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"notes://x"}}`, session); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("subscribe: %s", body)
	}
	srv.ResourceUpdated("notes://x")
	wantUpdated(t, lines, "notes://x", "the GET stream")
}

// wantUpdated reads SSE lines up to the first event, which must be
// notifications/resources/updated for uri; where names the stream.
func wantUpdated(t *testing.T, lines *bufio.Scanner, uri, where string) {
	t.Helper()
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			if want := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + uri + `"}}`; data != want {
				t.Errorf("%s: event %s, want %s", where, data, want)
			}
			return
		}
	}
	t.Fatalf("%s ended without the notification: %v", where, lines.Err())
}
