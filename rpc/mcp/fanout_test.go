package mcp_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
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
