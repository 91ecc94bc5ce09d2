package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// A task read back from its record answers with the very bytes the owner
// answers from memory, in each status and shape; results keep <, > and &
// as they are.
func TestTaskRecordAnswersAsTheOwner(t *testing.T) {
	st := &taskStore{log: zap.NewNop()}
	now := time.Date(2026, 7, 28, 10, 0, 0, 123456789, time.UTC)
	for _, tk := range []*task{
		{id: "a1", tool: "t", modern: true, created: now, updated: now.Add(time.Second), ttl: time.Hour, status: taskWorking, message: "step <1>"},
		{id: "a2", tool: "t", modern: true, created: now, updated: now, ttl: time.Minute, status: taskCompleted, result: json.RawMessage(`{"content":[{"type":"text","text":"a<b>&c"}],"isError":false}`)},
		{id: "a3", tool: "t", modern: true, created: now, updated: now, ttl: time.Minute, status: taskFailed, err: wire.Internal("Tool t did not complete: killed")},
		{id: "a4", tool: "t", modern: true, created: now, updated: now, ttl: time.Minute, status: taskAwaiting,
			inputs: []*taskInput{{key: "k1", request: json.RawMessage(`{"method":"elicitation/create","params":{"message":"Sure?"}}`)}}},
		{id: "l1", tool: "t", created: now, updated: now, ttl: 1500 * time.Millisecond, status: taskCancelled, session: transport.NewStandaloneSession()},
		{id: "l2", tool: "t", created: now, updated: now, ttl: time.Minute, status: taskWorking, session: transport.NewHTTPSession("sess-1")},
	} {
		st.mu.Lock()
		rec := st.recordLocked(tk, "r1")
		st.mu.Unlock()
		back, err := decodeRecord(tk.id, encodeRecord(&rec))
		if err != nil {
			t.Fatalf("%s: %v", tk.id, err)
		}
		for _, detailed := range []bool{false, true} {
			local, remote := object(st.fields(tk, detailed)...), object(back.fields(detailed)...)
			if !bytes.Equal(local, remote) {
				t.Errorf("%s detailed=%v:\nlocal  %s\nremote %s", tk.id, detailed, local, remote)
			}
		}
		if back.Owner != "r1" || back.Session != tk.session.ID() || back.Sessionless != tk.session.Standalone() {
			t.Errorf("%s: owner/session %q %q %v", tk.id, back.Owner, back.Session, back.Sessionless)
		}
	}
	if _, err := decodeRecord("x", []byte(`{"id":"y"}`)); err == nil {
		t.Error("a record under another task's key was accepted")
	}
}

// reachable keeps the rules of sameTaskOwner across replicas.
func TestTaskRecordReachable(t *testing.T) {
	req := func(era transport.Era, s *transport.Session) *request {
		return &request{Request: &transport.Request{Era: era, Session: s}}
	}
	modern := &taskRecord{Modern: true}
	sessionless := &taskRecord{Sessionless: true}
	ofSession := &taskRecord{Session: "s1"}
	stdio := &taskRecord{} // a session without an id: its own replica only
	for _, c := range []struct {
		name string
		rec  *taskRecord
		r    *request
		want bool
	}{
		{"modern by modern", modern, req(transport.Modern, nil), true},
		{"modern by legacy", modern, req(transport.Legacy, transport.NewStandaloneSession()), false},
		{"legacy by modern", sessionless, req(transport.Modern, nil), false},
		{"sessionless by sessionless", sessionless, req(transport.Legacy, transport.NewStandaloneSession()), true},
		{"sessionless by a session", sessionless, req(transport.Legacy, transport.NewHTTPSession("s1")), false},
		{"session by itself", ofSession, req(transport.Legacy, transport.NewHTTPSession("s1")), true},
		{"session by another", ofSession, req(transport.Legacy, transport.NewHTTPSession("s2")), false},
		{"session by sessionless", ofSession, req(transport.Legacy, transport.NewStandaloneSession()), false},
		{"stdio by stdio elsewhere", stdio, req(transport.Legacy, transport.NewHTTPSession("")), false},
	} {
		if got := c.rec.reachable(c.r); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A record is kept as the local store keeps the task: its TTL from
// creation, one TTL after an end past it, a running one at least
// runningRecordFloor; never forever.
func TestTaskRecordKeep(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		status  string
		created time.Time
		ttl     time.Duration
		want    time.Duration
	}{
		{taskCompleted, now.Add(-10 * time.Minute), time.Hour, 50 * time.Minute},
		{taskCompleted, now.Add(-2 * time.Hour), time.Hour, time.Hour},
		{taskWorking, now, 200 * time.Millisecond, runningRecordFloor},
		{taskWorking, now, 2 * time.Hour, 2 * time.Hour},
	} {
		rec := &taskRecord{Status: c.status, Created: c.created, TTLms: c.ttl.Milliseconds()}
		if got := rec.keepFor(now); got != c.want || got <= 0 {
			t.Errorf("%s created %v ttl %v: keep %v, want %v", c.status, now.Sub(c.created), c.ttl, got, c.want)
		}
	}
}

// lookup makes a running task whose owner has no presence failed, with
// the reason, and writes that back; a present owner's task stays working;
// a store that cannot be reached is an error, never "unknown".
func TestTaskLookupOrphan(t *testing.T) {
	ctx := context.Background()
	store := state.NewMemory()
	sh := newTaskShare(&taskStore{log: zap.NewNop()}, store, "reader", zap.NewNop())
	put := func(id, owner string) {
		rec := &taskRecord{ID: id, Status: taskAwaiting, Created: time.Now(), TTLms: 60000, Modern: true, Owner: owner,
			Inputs: []recordInput{{Key: "k", Request: json.RawMessage(`{}`)}}}
		if err := sh.put(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	put("t1", "alive")
	put("t2", "dead")
	state.MarkPresent(ctx, store, "alive")
	if rec, err := sh.lookup(ctx, "t1"); err != nil || rec.Status != taskAwaiting {
		t.Fatalf("task of a present owner: %+v %v", rec, err)
	}
	rec, err := sh.lookup(ctx, "t2")
	if err != nil || rec.Status != taskFailed || rec.Message != ownerGoneMessage || rec.Error.Message != ownerGoneMessage || rec.Inputs != nil {
		t.Fatalf("task of a gone owner: %+v %v", rec, err)
	}
	b, _, _ := store.Get(ctx, taskKey("t2"))
	if back, _ := decodeRecord("t2", b); back.Status != taskFailed {
		t.Errorf("the failure was not written back: %s", b)
	}
	if rec, err := sh.lookup(ctx, "none"); rec != nil || err != nil {
		t.Errorf("missing task: %+v %v", rec, err)
	}
	down := newTaskShare(&taskStore{log: zap.NewNop()}, downStore{store}, "reader", zap.NewNop())
	if _, err := down.lookup(ctx, "t1"); err == nil {
		t.Error("a store that cannot be reached answered a lookup")
	}
	srv := &Server{base: context.Background()}
	if e := srv.storeError("t1", state.ErrUnavailable); e.Code != wire.CodeInternal || !bytes.Contains([]byte(e.Message), []byte("state store unavailable")) {
		t.Errorf("store error: %d %s", e.Code, e.Message)
	}
}

// downStore is a store whose every read fails as Redis's do when it is
// down.
type downStore struct{ state.Store }

func (downStore) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, state.ErrUnavailable
}
