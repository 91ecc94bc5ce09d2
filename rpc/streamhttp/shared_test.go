package streamhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// sharedMemory is a Memory store that says it is shared: two Handlers of
// one test are two replicas (its Publish calls the subscribers at once).
type sharedMemory struct {
	*state.Memory
	down atomic.Bool // every operation fails as Redis's do when it is gone
	gets atomic.Int32
}

func (m *sharedMemory) Shared() bool { return true }

func (m *sharedMemory) Get(ctx context.Context, key string) ([]byte, bool, error) {
	m.gets.Add(1)
	if m.down.Load() {
		return nil, false, fmt.Errorf("%w: connection refused", state.ErrUnavailable)
	}
	return m.Memory.Get(ctx, key)
}

// miniServer plays the MCP server: initialize records the version,
// logging/setLevel the level, and every answer says the session's
// version and threshold.
func miniServer(c transport.Connection) {
	for {
		req, err := c.Read()
		if err != nil {
			return
		}
		ss := req.Session
		switch req.Msg.Method {
		case "initialize":
			ss.SetVersion("2025-11-25")
			ss.SetClientCaps(json.RawMessage(`{"elicitation":{}}`))
		case "logging/setLevel":
			var p struct{ Level string }
			_ = json.Unmarshal(req.Msg.Params, &p)
			ss.SetLevel(transport.LevelRank(p.Level))
		}
		if !req.Msg.HasID {
			continue
		}
		res := `{"version":"` + ss.Version() + `","threshold":` + strconv.Itoa(ss.Threshold(false)) + `,"caps":` + string(wire.Compact(ss.ClientCaps())) + `}`
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Result: json.RawMessage(res)})
	}
}

func replica(t *testing.T, store state.Store) (*httptest.Server, *Handler) {
	t.Helper()
	h := New(Options{Path: "/mcp", Loopback: true, IOTimeout: bound, BodyTimeout: bound, Store: store, LegacyVersions: []string{"2025-11-25"},
		ModernEnabled: func() bool { return false }, Stopping: func() bool { return false },
		Serve: func(c transport.Connection) error { miniServer(c); return nil }})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Close() })
	return ts, h
}

func call(t *testing.T, method, url, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), strings.TrimSpace(string(b))
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`

// A session started on one replica is served by another from the store,
// already initialized; a level set on the second is seen by the first;
// DELETE on the second ends it on both.
func TestSharedSessionServedByAnotherReplica(t *testing.T) {
	store := &sharedMemory{Memory: state.NewMemory()}
	a, ha := replica(t, store)
	b, hb := replica(t, store)
	_, id, body := call(t, http.MethodPost, a.URL, "", initLine)
	if id == "" {
		t.Fatalf("initialize: no session: %s", body)
	}
	rec, ok, _ := store.Get(context.Background(), sessionKeyPrefix+id)
	if !ok || !strings.Contains(string(rec), `"version":"2025-11-25"`) || !strings.Contains(string(rec), `"capabilities":{"elicitation":{}}`) {
		t.Fatalf("the session's record after initialize: %q", rec)
	}
	status, _, body := call(t, http.MethodPost, b.URL, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"version":"2025-11-25","threshold":-1,"caps":{"elicitation":{}}}}`; status != 200 || body != want {
		t.Fatalf("ping on the other replica: %d %s, want %s", status, body, want)
	}
	if status, _, body := call(t, http.MethodPost, b.URL, id, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}`); status != 200 {
		t.Fatalf("logging/setLevel on the other replica: %d %s", status, body)
	}
	ha.mu.Lock()
	sa := ha.sessions[id]
	ha.mu.Unlock()
	if got := sa.session.Threshold(false); got != transport.LevelRank("error") {
		t.Fatalf("the first replica's threshold after setLevel on the other: %d", got)
	}
	if status, _, _ := call(t, http.MethodDelete, b.URL, id, ""); status != http.StatusNoContent {
		t.Fatalf("DELETE on the other replica: %d", status)
	}
	select {
	case <-sa.ended:
	default:
		t.Fatal("the first replica's copy did not end with DELETE on the other")
	}
	for _, u := range []string{a.URL, b.URL} {
		if status, _, body := call(t, http.MethodPost, u, id, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); status != http.StatusNotFound {
			t.Fatalf("ping after DELETE: %d %s, want 404", status, body)
		}
	}
	hb.mu.Lock()
	n := len(hb.sessions)
	hb.mu.Unlock()
	if n != 0 {
		t.Fatalf("the other replica still holds %d sessions", n)
	}
}

// The store down: a replica that does not hold the session answers 503
// naming the store; the one that does serves it.
func TestSharedSessionStoreDown(t *testing.T) {
	store := &sharedMemory{Memory: state.NewMemory()}
	a, _ := replica(t, store)
	b, _ := replica(t, store)
	_, id, _ := call(t, http.MethodPost, a.URL, "", initLine)
	store.down.Store(true)
	if status, _, body := call(t, http.MethodPost, a.URL, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`); status != 200 {
		t.Fatalf("a request on the replica holding the session, store down: %d %s", status, body)
	}
	// Within the backoff the held session does not wait on the store.
	n := store.gets.Load()
	if status, _, body := call(t, http.MethodPost, a.URL, id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`); status != 200 || store.gets.Load() != n {
		t.Fatalf("a second request on the holding replica, store down: %d %s, %d more reads of the store", status, body, store.gets.Load()-n)
	}
	status, _, body := call(t, http.MethodPost, b.URL, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "the state store cannot be reached to find session "+id) {
		t.Fatalf("a request on a replica not holding the session, store down: %d %s", status, body)
	}
}

// Without a shared store nothing is stored and another replica's session
// is 404, as before.
func TestUnsharedStoreKeepsSessionsLocal(t *testing.T) {
	store := state.NewMemory()
	a, ha := replica(t, store)
	b, _ := replica(t, store)
	if ha.sh != nil {
		t.Fatal("an unshared store made the handler share sessions")
	}
	_, id, _ := call(t, http.MethodPost, a.URL, "", initLine)
	if keys, _ := store.Keys(context.Background(), ""); len(keys) != 0 {
		t.Fatalf("an unshared store got keys: %q", keys)
	}
	if status, _, _ := call(t, http.MethodPost, b.URL, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusNotFound {
		t.Fatalf("another replica's session without a shared store: %d, want 404", status)
	}
}

// MaxSessions with a shared store: a session the replica started and
// drops beyond the bound ends everywhere (its record cannot outlive it and
// fill the store); a copy a replica drops is only the copy.
func TestSharedSessionDroppedBeyondMaxSessions(t *testing.T) {
	store := &sharedMemory{Memory: state.NewMemory()}
	one := func() *httptest.Server {
		h := New(Options{Path: "/mcp", Loopback: true, IOTimeout: bound, BodyTimeout: bound, Store: store, LegacyVersions: []string{"2025-11-25"},
			MaxSessions: 1, ModernEnabled: func() bool { return false }, Stopping: func() bool { return false },
			Serve: func(c transport.Connection) error { miniServer(c); return nil }})
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.Close(); h.Close() })
		return ts
	}
	a, b := one(), one()
	ping := func(url, id string) int {
		status, _, _ := call(t, http.MethodPost, url, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		return status
	}
	_, s1, _ := call(t, http.MethodPost, a.URL, "", initLine)
	if ping(b.URL, s1) != 200 {
		t.Fatal("the first session on the other replica")
	}
	_, s2, _ := call(t, http.MethodPost, a.URL, "", initLine) // drops s1 on a
	deadline := time.Now().Add(bound)
	for ping(b.URL, s1) != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("a session its replica dropped beyond MaxSessions is still served by the other")
		}
		time.Sleep(time.Millisecond)
	}
	if rec, _, _ := store.Get(context.Background(), sessionKeyPrefix+s1); !strings.Contains(string(rec), `"ended":true`) {
		t.Fatalf("the dropped session's record: %q, want a tombstone", rec)
	}
	// b holds a copy of s2, then of s3 (started on a, which drops s2 —
	// ended everywhere — so s3 is started on b instead to keep s2 alive).
	if ping(b.URL, s2) != 200 {
		t.Fatal("s2 on the other replica")
	}
	_, s3, _ := call(t, http.MethodPost, b.URL, "", initLine) // b drops its copy of s2
	if ping(a.URL, s2) != 200 || ping(a.URL, s3) != 200 {
		t.Fatal("a copy dropped beyond MaxSessions ended the session it copied")
	}
}
