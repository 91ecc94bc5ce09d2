package mcp_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/streamhttp"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// sharedMemory is one in-memory store two servers in this process use as
// replicas use Redis (rpc/state's tests run the Redis side for real).
type sharedMemory struct{ *state.Memory }

func (sharedMemory) Shared() bool { return true }

// An update a tool sends on replica A reaches a client subscribed on
// replica B, once.
func TestResourceUpdatesFanOut(t *testing.T) {
	store := sharedMemory{state.NewMemory()}
	a, sup, _ := newResourcesFixture(t)
	snap, err := sup.Load(context.Background())
	must(t, err)
	b, urlB := serveResources(t, os.Getenv("TMPDIR"), sup, snap)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updatesA, updatesB := make(chan string, 1), make(chan string)
	go a.FanOutResourceUpdates(ctx, updatesA, store)
	go b.FanOutResourceUpdates(ctx, updatesB, store)

	post := func(body string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest("POST", urlB, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		return resp
	}
	resp := post(legacyInit, nil)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	resp = post(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"notes://x"}}`, session)
	b2, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b2), `"result":{}`) {
		t.Fatalf("subscribe: %s", b2)
	}
	req, _ := http.NewRequest("GET", urlB, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	stream, err := http.DefaultClient.Do(req)
	must(t, err)
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)

	updatesA <- "notes://x"
	wantUpdated(t, lines, "notes://x", "replica B's stream")
}

// newSharedReplica is one replica of a deployment whose Store is store,
// over the fixture's supervisor (see serveResources: one per process).
func newSharedReplica(t *testing.T, dir string, sup *supervisor.Supervisor, snap *supervisor.Snapshot, store state.Store) (*mcp.Server, string) {
	t.Helper()
	src := catalog.NewSource(catalog.Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json"),
		ResourcesFile: filepath.Join(dir, "resources.json")})
	srv := mcp.New(mcp.Options{Catalog: src, Runner: sup, Snapshot: func() *supervisor.Snapshot { return snap },
		Log: zaptest.NewLogger(t), Store: store, ReplicaID: t.Name()})
	h := streamhttp.New(streamhttp.Options{Path: "/mcp", Loopback: true, ModernEnabled: srv.ModernEnabled,
		Stopping: srv.Stopping, Serve: srv.Serve, LegacyVersions: mcp.LegacyVersions()})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		h.Close()
		ts.Close()
	})
	return srv, ts.URL + "/mcp"
}

// The watcher of replica A finding a new tools list reaches a 2026
// listen stream on replica B, once; replica B's own watcher finding the
// same list (both watch one shared file) tells nobody again; a later,
// different list is told.
func TestListChangedFanOut(t *testing.T) {
	_, sup, _ := newResourcesFixture(t)
	dir := os.Getenv("TMPDIR") // the fixture's directory
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"capabilities":{"tools":{"listChanged":true}}}`), 0o644))
	snap, err := sup.Load(context.Background())
	must(t, err)
	store := sharedMemory{state.NewMemory()}
	a, _ := newSharedReplica(t, dir, sup, snap, store)
	b, urlB := newSharedReplica(t, dir, sup, snap, store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each returns once its subscription is in place.
	a.FanOutListChanged(ctx)
	b.FanOutListChanged(ctx)

	req, _ := http.NewRequest("POST", urlB, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{`+modernMeta+`,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["notes://a"]}}}`))
	for k, v := range modernHeaders("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				return data
			}
		}
		t.Fatalf("replica B's stream ended: %v", lines.Err())
		return ""
	}
	if ack := next(); !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, `"toolsListChanged":true`) {
		t.Fatalf("first event %s, want the acknowledgment of toolsListChanged", ack)
	}
	if !a.ListChanged("tools", []byte(`{"tools":["x"]}`)) {
		t.Fatal("replica A: ListChanged reported nobody told and nothing published")
	}
	const want = `"method":"notifications/tools/list_changed"`
	if ev := next(); !strings.Contains(ev, want) {
		t.Fatalf("replica B's stream: %s, want tools/list_changed", ev)
	}
	// The same edit, seen by B's own watcher (both watch one shared
	// file): nobody is told again. The store delivers synchronously, so
	// a duplicate would be on the stream before the update that follows.
	b.ListChanged("tools", []byte(`{"tools":["x"]}`))
	b.ResourceUpdated("notes://a")
	if ev := next(); !strings.Contains(ev, `"method":"notifications/resources/updated"`) {
		t.Fatalf("replica B's stream after the same list again: %s, want only the resources/updated that followed", ev)
	}
	a.ListChanged("tools", []byte(`{"tools":["x","y"]}`))
	if ev := next(); !strings.Contains(ev, want) {
		t.Fatalf("replica B's stream after a new list: %s, want tools/list_changed", ev)
	}
}
