package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

const scaleTools = `{"tools":[{"name":"hi","description":"says hi","inputSchema":{"type":"object"}}]}`

const scaleScript = `#!/usr/bin/env bash
tool_hi() { echo "hi from $$"; }
`

// TestScaleOutDiscover: three replicas sharing a real redis-server behind
// a real haproxy (round-robin, no affinity) answer every 2026 request,
// whichever replica each lands on.
func TestScaleOutDiscover(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: map[string]string{"server.sh": scaleScript, "tools.json": scaleTools}})
	const discover = `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for i := 0; i < 6; i++ {
		req, err := http.NewRequest(http.MethodPost, c.URL, strings.NewReader(discover))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "server/discover")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d through haproxy: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"id":5,"result"`) {
			t.Fatalf("request %d through haproxy: %d %s", i, resp.StatusCode, body)
		}
	}
}

// soPost sends one 2026-07-28 request to url and returns the response
// (headers read; the caller reads and closes the body).
func soPost(t *testing.T, url, method, name, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s to %s: %v", method, url, err)
	}
	return resp
}

// soTouch calls sbServer's touch tool with uri at url and checks its answer.
func soTouch(t *testing.T, url, uri string) {
	t.Helper()
	resp := soPost(t, url, "tools/call", "touch", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{`+rsMeta+`,"name":"touch","arguments":{"uri":"`+uri+`"}}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"text":"touched"`) {
		t.Fatalf("touch %s at %s: %d %s", uri, url, resp.StatusCode, body)
	}
}

// soListen opens a subscriptions/listen stream at url for the resources
// under notes://, checks its acknowledgment, and returns its events.
func soListen(t *testing.T, url string) <-chan string {
	t.Helper()
	resp := soPost(t, url, "subscriptions/listen", "", `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{`+rsMeta+`,"notifications":{"resourceSubscriptions":["notes://"]}}}`)
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("listen at %s: %s %q", url, resp.Status, ct)
	}
	events := make(chan string, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	if got, want := soNext(t, events, "the acknowledgment"), sbListenNote("notifications/subscriptions/acknowledged", "7", `"notifications":{"resourceSubscriptions":["notes://"]}`); got != want {
		t.Fatalf("listen at %s, first event:\n got %s\nwant %s", url, got, want)
	}
	return events
}

func soNext(t *testing.T, events <-chan string, what string) string {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatalf("listen stream ended waiting for %s", what)
		}
		return e
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("no %s on the listen stream", what)
	}
	return ""
}

// soUpdates reads updates from events until the one of last, and returns
// how many times each URI came (but sbServer's hook's, sent for every
// call).
func soUpdates(t *testing.T, events <-chan string, last string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for {
		e := soNext(t, events, "notifications/resources/updated "+last)
		var n struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(e), &n) != nil || n.Method != "notifications/resources/updated" {
			t.Fatalf("listen stream: %s, want notifications/resources/updated", e)
		}
		if n.Params.URI == "notes://hooked" {
			continue // sbServer's mcp_before_tool_call, for every touch
		}
		seen[n.Params.URI]++
		if n.Params.URI == last {
			return seen
		}
	}
}

// mcp_resource_updated in a tool on one replica reaches a 2026 listen
// stream held by another, exactly once, whichever replica ran the tool:
// the stream is on replica 1, the tools run on replica 0, on replica 2
// and through the balancer.
func TestScaleOutListenAcrossReplicas(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: sbFiles})
	events := soListen(t, c.Replicas[1].URL)
	soTouch(t, c.Replicas[0].URL, "notes://on-0")
	soTouch(t, c.Replicas[2].URL, "notes://on-2")
	for i := 0; i < 3; i++ {
		soTouch(t, c.URL, fmt.Sprintf("notes://balanced-%d", i))
	}
	soTouch(t, c.Replicas[0].URL, "notes://last")
	got := soUpdates(t, events, "notes://last")
	want := map[string]int{"notes://on-0": 1, "notes://on-2": 1, "notes://balanced-0": 1, "notes://balanced-1": 1, "notes://balanced-2": 1, "notes://last": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("updates on replica 1's stream: %v, want each once: %v", got, want)
	}
}

// The store stopped: every replica's /healthz says so (503, naming the
// store), tools/call keeps serving through the balancer, and a replica's
// own updates still reach its own listeners. The store back (empty, as a
// Redis without persistence restarts): /healthz 200 again, the deployment
// key is back as it was, and updates cross replicas again.
func TestScaleOutStoreStopAndRestart(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: sbFiles})
	key := soStoreKey(t, c)
	for i := range c.Replicas {
		soHealth(t, c.Health[i], 200, "")
	}
	c.StopRedis(t)
	for i := range c.Replicas {
		soHealth(t, c.Health[i], 503, "state store")
		// Liveness does not hang on the store: no restart is needed.
		soHealth(t, strings.TrimSuffix(c.Health[i], "/healthz")+"/livez", 200, "ok")
	}
	for i := 0; i < 3; i++ {
		soTouch(t, c.URL, fmt.Sprintf("notes://down-%d", i))
	}
	local := soListen(t, c.Replicas[0].URL)
	soTouch(t, c.Replicas[0].URL, "notes://down-local")
	if got := soUpdates(t, local, "notes://down-local"); got["notes://down-local"] != 1 {
		t.Fatalf("replica 0's own update while the store is down: %v", got)
	}

	c.StartRedis(t)
	for i := range c.Replicas {
		soHealth(t, c.Health[i], 200, "")
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the deployment key back in the restarted store", func() (bool, string) {
		got := soStoreGet(t, c, "mcp-bashd:mrtr-key")
		return got == key, "key " + got
	})
	// Replica 1's update reaches replica 0's stream once its
	// subscription is renewed: touch until one arrives, then count.
	across := soListen(t, c.Replicas[0].URL)
	for n := 0; ; n++ {
		uri := fmt.Sprintf("notes://back-%d", n)
		soTouch(t, c.Replicas[1].URL, uri)
		select {
		case e := <-across:
			if !strings.Contains(e, "notes://back-") && !strings.Contains(e, "notes://hooked") {
				t.Fatalf("replica 0's stream after the restart: %s", e)
			}
			soTouch(t, c.Replicas[1].URL, "notes://back-last")
			if got := soUpdates(t, across, "notes://back-last"); got["notes://back-last"] != 1 {
				t.Fatalf("after the restart: %v", got)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(harness.Deadline(t)) {
			t.Fatal("updates from replica 1 never reached replica 0 after the store came back")
		}
	}
}

// soHealth waits until url answers status, its body containing want.
func soHealth(t *testing.T, url string, status int, want string) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), url+" answering "+fmt.Sprint(status), func() (bool, string) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == status && strings.Contains(string(body), want), fmt.Sprintf("%d %s", resp.StatusCode, body)
	})
}

// soStoreGet reads key from the cluster's Redis with redis-cli's protocol
// spoken by hand (GET over a plain connection): "" when absent.
func soStoreGet(t *testing.T, c *harness.Cluster, key string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", c.Redis, 2*time.Second)
	if err != nil {
		return ""
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(conn, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key)
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") || strings.HasPrefix(head, "$-1") {
		return ""
	}
	val, _ := r.ReadString('\n')
	return strings.TrimRight(val, "\r\n")
}

// soStoreTTL is key's TTL in seconds in the cluster's Redis (-2: no key).
func soStoreTTL(t *testing.T, c *harness.Cluster, key string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", c.Redis, 2*time.Second)
	if err != nil {
		t.Fatalf("redis: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(conn, "*2\r\n$3\r\nTTL\r\n$%d\r\n%s\r\n", len(key), key)
	line, err := bufio.NewReader(conn).ReadString('\n')
	n, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, ":")))
	if err != nil || perr != nil {
		t.Fatalf("redis TTL %s: %q %v", key, line, err)
	}
	return n
}

func soStoreKey(t *testing.T, c *harness.Cluster) string {
	t.Helper()
	key := soStoreGet(t, c, "mcp-bashd:mrtr-key")
	if len(key) != 64 {
		t.Fatalf("deployment key in the store: %q, want 64 hex digits", key)
	}
	return key
}
