package tests

// Issue 26, sessions: a session-era client's Mcp-Session-Id session is
// served by every replica sharing a real redis-server, behind a real
// haproxy (round-robin, no affinity) or reached directly replica by
// replica, so that which replica serves what is known: each request of a
// session answered wherever it lands, the daemon's question to the client
// answered through another replica than the one running the tool, a
// session's GET stream on one replica notified once of an update whose
// subscription reached another, DELETE on one replica ending the session
// on all, and a store that is down answered with a clear 503 by a replica
// that does not hold the session while those that do keep serving.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

const ssServer = `tool_hi() { echo "hi from $$"; }
tool_say() { mcp_log debug 'below info'; echo said; }
tool_elicit() {
    mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'
}
tool_touch() { mcp_resource_updated "$(ss_uri "$1")"; echo touched; }
ss_uri() { local re='"uri":"([^"]*)"'; [[ $1 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"; }
resource_a() { echo a; }
`

var ssFiles = map[string]string{
	"server.sh":      ssServer,
	"tools.json":     harness.ToolsJSON("hi", "say", "elicit", "touch"),
	"resources.json": `{"resources":[{"uri":"notes://a","name":"a"},{"uri":"notes://b","name":"b"}]}`,
}

const ssVersion = "2025-11-25"

// ssPost POSTs msg to url in session id ("" for none) and returns the
// status, the Mcp-Session-Id answered and the body (JSON, or the SSE
// stream's data lines, one a line).
func ssPost(t *testing.T, url, id, msg string) (int, string, string) {
	t.Helper()
	resp := ssDo(t, http.MethodPost, url, id, msg)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", url, err)
	}
	body := string(b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var data []string
		for _, l := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				data = append(data, d)
			}
		}
		body = strings.Join(data, "\n")
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body
}

func ssDo(t *testing.T, method, url, id, msg string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("MCP-Protocol-Version", ssVersion)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

// ssInit starts a session on url and returns its id.
func ssInit(t *testing.T, url string) string {
	t.Helper()
	status, id, body := ssPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+ssVersion+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"scaleout","version":"0"}}}`)
	if status != 200 || id == "" || !strings.Contains(body, `"protocolVersion":"`+ssVersion+`"`) {
		t.Fatalf("initialize on %s: %d session %q %s", url, status, id, body)
	}
	if status, _, body := ssPost(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized on %s: %d %s", url, status, body)
	}
	return id
}

// ssPing pings in session id on url and returns the status.
func ssPing(t *testing.T, url, id string, n int) (int, string) {
	t.Helper()
	status, _, body := ssPost(t, url, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, n))
	body = strings.TrimSpace(body)
	if status == 200 && body != fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, n) {
		t.Fatalf("ping %d on %s: 200 but %s", n, url, body)
	}
	return status, body
}

// ssServedFromStore counts the replicas that served a session they did
// not start (their log says so).
func ssServedFromStore(c *harness.Cluster, id string) int {
	n := 0
	for _, r := range c.Replicas {
		b, _ := os.ReadFile(r.Log)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "http session served here from the state store") && strings.Contains(l, id) {
				n++
				break
			}
		}
	}
	return n
}

// A real client (the Go SDK's StreamableClientTransport, with its GET
// stream) through the balancer: every request of its session answered
// right although consecutive requests land on different replicas, and the
// log level it chose on one replica applies to the calls on the others.
func TestScaleOutSessionThroughTheBalancer(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: ssFiles, Log: true})
	logs := make(chan string, 32)
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			logs <- fmt.Sprintf("%s %v", r.Params.Level, r.Params.Data)
		},
	})
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: &http.Client{}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: ssVersion})
	if err != nil {
		t.Fatalf("connect through the balancer: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != ssVersion {
		t.Fatalf("negotiated %q, want %q", got, ssVersion)
	}
	for i := 0; i < 3; i++ {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 4 {
			t.Fatalf("tools/list %d: %v %+v", i, err, tools)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hi", Arguments: map[string]any{}})
		if err != nil || res.IsError || !strings.HasPrefix(akText(t, res), "hi from ") {
			t.Fatalf("tools/call hi %d: %v %+v", i, err, res)
		}
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	// Three calls, one on each replica: each forwards the tool's debug
	// line, which only the level chosen above lets through.
	for i := 0; i < 3; i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "say", Arguments: map[string]any{}})
		if err != nil || res.IsError || akText(t, res) != "said" {
			t.Fatalf("tools/call say %d: %v %+v", i, err, res)
		}
		select {
		case l := <-logs:
			if l != "debug below info" {
				t.Fatalf("tools/call say %d: notifications/message %q", i, l)
			}
		case <-ctx.Done():
			t.Fatalf("tools/call say %d: no notifications/message at debug: the level chosen on another replica did not apply", i)
		}
	}
	for i := 0; i < 6; i++ {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	if n := ssServedFromStore(c, cs.ID()); n < 2 {
		t.Fatalf("%d replicas served the session from the store, want at least 2 (the balancer spreads its requests)", n)
	}
}

// ssEvents reads an SSE body's data lines into a channel until it ends.
func ssEvents(body io.ReadCloser) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		defer body.Close()
		r := bufio.NewReader(body)
		for {
			l, err := r.ReadString('\n')
			if d, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "data: "); ok {
				ch <- d
			} else if strings.HasPrefix(l, ": session stream") {
				ch <- ": open"
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// ssNext is the next event of ch, failing the test at the deadline or
// when the stream ends.
func ssNext(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return e
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("%s: nothing by the deadline", what)
	}
	return ""
}

// A session-era elicitation: the session started on replica 2, the tool
// runs on replica 0, the client's answer is POSTed to replica 1; the tool
// gets the answer and its result says so.
func TestScaleOutSessionElicitationAnsweredThroughAnotherReplica(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: ssFiles})
	r0, r1, r2 := c.Replicas[0].URL, c.Replicas[1].URL, c.Replicas[2].URL
	id := ssInit(t, r2)
	resp := ssDo(t, http.MethodPost, r0, id, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"elicit","arguments":{}}}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("tools/call elicit on replica 0: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	events := ssEvents(resp.Body)
	var asked struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if e := ssNext(t, events, "the elicitation on the call's stream"); json.Unmarshal([]byte(e), &asked) != nil || asked.Method != "elicitation/create" {
		t.Fatalf("first event of the call: %s", e)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(asked.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`
	if status, _, body := ssPost(t, r1, id, answer); status != http.StatusAccepted || body != "" {
		t.Fatalf("the answer POSTed to replica 1: %d %q", status, body)
	}
	e := ssNext(t, events, "the call's result")
	res := harness.Parse(t, e)
	text, isErr := res.Text(t)
	if res.Error != nil || isErr || !strings.Contains(text, `"action":"accept"`) || !strings.Contains(text, `"name":"Ada"`) {
		t.Fatalf("tools/call elicit: the tool did not get the answer given through replica 1: %s", e)
	}
}

// resources/subscribe on one replica, the session's GET stream on
// another, mcp_resource_updated from a tool on whichever replica the
// balancer picks: the stream gets notifications/resources/updated once.
func TestScaleOutSessionGETStreamNotifiedOnce(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: ssFiles})
	r0, r1, r2 := c.Replicas[0].URL, c.Replicas[1].URL, c.Replicas[2].URL
	id := ssInit(t, r0)
	get := ssDo(t, http.MethodGet, r1, id, "")
	if get.StatusCode != 200 {
		b, _ := io.ReadAll(get.Body)
		get.Body.Close()
		t.Fatalf("GET stream on replica 1: %d %s", get.StatusCode, b)
	}
	events := ssEvents(get.Body)
	if e := ssNext(t, events, "the GET stream's opening"); e != ": open" {
		t.Fatalf("GET stream's first event: %s", e)
	}
	for i, uri := range []string{"notes://a", "notes://b"} {
		if status, _, body := ssPost(t, r2, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, 10+i, uri)); status != 200 || !strings.Contains(body, `"result":{}`) {
			t.Fatalf("resources/subscribe %s on replica 2: %d %s", uri, status, body)
		}
	}
	touch := func(n int, uri string) {
		status, _, body := ssPost(t, c.URL, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"touch","arguments":{"uri":%q}}}`, n, uri))
		if status != 200 || !strings.Contains(body, `touched`) {
			t.Fatalf("tools/call touch %s through the balancer: %d %s", uri, status, body)
		}
	}
	// notes://b is the sentinel: updates fan out in order, so every
	// notification of notes://a has come by the time notes://b's does.
	once := func(events <-chan string, round int, where string) {
		t.Helper()
		touch(20+2*round, "notes://a")
		touch(21+2*round, "notes://b")
		var seen []string
		for {
			e := ssNext(t, events, "notifications/resources/updated on the GET stream on "+where)
			seen = append(seen, e)
			if e == sbUpdated("notes://b") {
				break
			}
		}
		if len(seen) != 2 || seen[0] != sbUpdated("notes://a") {
			t.Fatalf("the GET stream on %s got %q, want notes://a's update once, then notes://b's", where, seen)
		}
	}
	once(events, 0, "replica 1")
	// The client listens on replica 0 now: the stream it left open on
	// replica 1 ends (as an older GET on one replica does), and the
	// updates reach the new one only.
	get0 := ssDo(t, http.MethodGet, r0, id, "")
	if get0.StatusCode != 200 {
		b, _ := io.ReadAll(get0.Body)
		get0.Body.Close()
		t.Fatalf("GET stream on replica 0: %d %s", get0.StatusCode, b)
	}
	events0 := ssEvents(get0.Body)
	if e := ssNext(t, events0, "the second GET stream's opening"); e != ": open" {
		t.Fatalf("second GET stream's first event: %s", e)
	}
	select {
	case e, ok := <-events:
		if ok {
			t.Fatalf("the GET stream on replica 1, replaced by one on replica 0, carried %s", e)
		}
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("the GET stream on replica 1 stayed open after the client opened one on replica 0")
	}
	once(events0, 1, "replica 0")
}

// DELETE through the balancer ends the session on every replica, those
// that held a copy of it included: the next request on any is 404.
func TestScaleOutSessionDeleteEndsItEverywhere(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: ssFiles})
	id := ssInit(t, c.Replicas[0].URL)
	for i, r := range c.Replicas {
		if status, body := ssPing(t, r.URL, id, 30+i); status != 200 {
			t.Fatalf("ping on replica %d before DELETE: %d %s", i, status, body)
		}
	}
	resp := ssDo(t, http.MethodDelete, c.URL, id, "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE through the balancer: %d", resp.StatusCode)
	}
	for i, r := range c.Replicas {
		if status, body := ssPing(t, r.URL, id, 40+i); status != http.StatusNotFound {
			t.Fatalf("ping on replica %d after DELETE: %d %s, want 404", i, status, body)
		}
	}
	resp = ssDo(t, http.MethodDelete, c.URL, id, "")
	resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		t.Fatalf("a second DELETE of the ended session: 204")
	}
}

// The store down: the replicas holding the session keep serving it; one
// that does not answers 503 naming the store. Restarted (empty), new
// sessions are shared again.
func TestScaleOutSessionStoreDown(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: ssFiles})
	r0, r1, r2 := c.Replicas[0].URL, c.Replicas[1].URL, c.Replicas[2].URL
	id := ssInit(t, r0)
	if status, body := ssPing(t, r1, id, 50); status != 200 {
		t.Fatalf("ping on replica 1: %d %s", status, body)
	}
	c.StopRedis(t)
	for i, u := range []string{r0, r1} {
		if status, body := ssPing(t, u, id, 51+i); status != 200 {
			t.Fatalf("ping on replica %d, which holds the session, with the store down: %d %s", i, status, body)
		}
	}
	status, body := ssPing(t, r2, id, 53)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "state store") {
		t.Fatalf("ping on replica 2, which does not hold the session, with the store down: %d %s, want 503 naming the store", status, body)
	}
	c.StartRedis(t)
	// Restarted empty: the session's first call on a replica holding it
	// stores it again, from that replica's copy, and replica 2 serves it.
	// go-redis redials on its own schedule: polled.
	until := harness.Deadline(t)
	for n := 60; ; n++ {
		status, _, body := ssPost(t, r0, id, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hi","arguments":{}}}`, n))
		if status != 200 || !strings.Contains(body, "hi from") {
			t.Fatalf("tools/call on replica 0 after the store's restart: %d %s", status, body)
		}
		if s, _ := ssPing(t, r2, id, 100+n); s == 200 {
			break
		} else if time.Now().After(until) {
			t.Fatalf("after the store's restart and a call on replica 0, ping on replica 2 still %d", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A session started after the restart is shared too.
	sid := ssInit(t, r2)
	if status, body := ssPing(t, r1, sid, 200); status != 200 {
		t.Fatalf("a session started on replica 2 after the store's restart: ping on replica 1 %d %s", status, body)
	}
}

// An edit of one replica's resources.json: the session's GET stream,
// held by another replica than the one that started the session, gets
// notifications/resources/list_changed once (the replicas holding a
// copy without the stream send nothing).
func TestScaleOutSessionGETStreamListChangedOnce(t *testing.T) {
	files := map[string]string{}
	for k, v := range ssFiles {
		files[k] = v
	}
	files["config.json"] = `{"capabilities":{"tools":{"listChanged":true}}}`
	c := harness.StartCluster(t, 3, harness.Options{Files: files})
	r0, r1, r2 := c.Replicas[0].URL, c.Replicas[1].URL, c.Replicas[2].URL
	id := ssInit(t, r0)
	if status, body := ssPing(t, r2, id, 2); status != 200 { // replica 2 holds a copy too
		t.Fatalf("ping on replica 2: %d %s", status, body)
	}
	get := ssDo(t, http.MethodGet, r1, id, "")
	if get.StatusCode != 200 {
		b, _ := io.ReadAll(get.Body)
		get.Body.Close()
		t.Fatalf("GET stream on replica 1: %d %s", get.StatusCode, b)
	}
	events := ssEvents(get.Body)
	if e := ssNext(t, events, "the GET stream's opening"); e != ": open" {
		t.Fatalf("GET stream's first event: %s", e)
	}
	rl2Replace(t, filepath.Join(c.Replicas[2].Dir, "resources.json"), `{"resources":[{"uri":"notes://a","name":"a"}]}`)
	const changed = `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`
	if e := ssNext(t, events, "list_changed on the GET stream"); e != changed {
		t.Fatalf("the GET stream got %s, want %s", e, changed)
	}
	// The sentinel: an update of a resource subscribed to, sent after the
	// list_changed went out everywhere; nothing may come between.
	if status, _, body := ssPost(t, r2, id, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"notes://a"}}`); status != 200 {
		t.Fatalf("resources/subscribe: %d %s", status, body)
	}
	if status, _, body := ssPost(t, r2, id, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"touch","arguments":{"uri":"notes://a"}}}`); status != 200 || !strings.Contains(body, "touched") {
		t.Fatalf("tools/call touch: %d %s", status, body)
	}
	if e := ssNext(t, events, "the sentinel update on the GET stream"); e != sbUpdated("notes://a") {
		t.Fatalf("the GET stream got %s after list_changed, want only notes://a's update", e)
	}
}
