package streamhttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
)

// Sessions shared between replicas (issue 26), with a shared --state
// store only: behind a balancer without affinity each request of a
// session may reach another replica, so every replica must be able to
// serve it.
//
//   - The session's record (transport.Record: negotiated version, client
//     capabilities, log level, resource subscriptions) is stored under
//     sessionKeyPrefix+id. It is written before the answer to the request
//     that changed it goes out (stream.beforeRespond), so the client's next
//     request, wherever it lands, finds it: once at initialize, then once
//     per logging/setLevel, resources/subscribe or unsubscribe.
//   - A replica that gets a request for a session it does not hold reads
//     the record and builds its own copy, already initialized; no record
//     is 404 as before. The copy is a session like any other, so
//     MaxSessions bounds copies too (dropping one drops only the copy).
//   - Every change is also published on sessionsChannel, with the record,
//     so the copies follow it without reading the store on each request:
//     the replica holding the session's GET stream must know its
//     subscriptions, and it may get no request of the session at all. A
//     message may come after the client's next request, though, so a
//     request that changes the record or runs bash reads it first
//     (refresh, reads): a change confirmed elsewhere is never written over
//     nor missed by the call after it.
//   - DELETE on any replica leaves a tombstone under the key (so no copy
//     that missed the message writes the session back) and publishes
//     "ended": every replica drops its copy.
//   - A GET stream opened on one replica publishes "get": the others drop
//     the session's GET stream they hold, as one replica does with an older
//     GET, so each notification goes out on one stream only.
//
// The idle TTL: every write sets it again, and a replica serving a
// session whose TTL it has not set for TTL/4 writes the record back
// (refresh; an open GET stream counts as use), so beyond its changes and
// the one GET before each request that runs bash, an active session costs
// at most one GET and one SET per replica per TTL/4, not a store
// operation per request (ping and the lists use the copy as it is). A
// record not refreshed for the TTL is gone: the session was idle
// everywhere, and its next request is 404, after which a client starts a
// new session as the transport says.
//
// Store cost per request of a session (Redis commands): initialize SET;
// the first request on another replica GET (then SET once, its TTL);
// logging/setLevel, resources/subscribe, unsubscribe GET+SET+PUBLISH;
// tools/call, resources/read, prompts/get GET; a GET stream PUBLISH;
// DELETE GET+SET(tombstone)+PUBLISH; ping and the lists nothing.
//
// While the store cannot be reached, a request for a session this
// replica holds is served from its copy (what changed meanwhile is written
// once the store is back, at the session's next change or refresh); one
// for a session it does not hold is answered 503, naming the store. A
// failure makes the replica skip the store for storeBackoff, so neither
// waits on the store's timeouts. A store restarted empty gets a session
// back from the first replica holding a copy that refreshes it.
//
// Known window: a copy follows changes through pub/sub, so the replica
// holding a GET stream learns of a resources/subscribe made elsewhere
// when that message arrives; an update published in the instant between
// may miss it. (The subscribe's answer goes out after the PUBLISH, so a
// client that waits for it and then causes the update does not meet it in
// practice.)

const (
	sessionKeyPrefix = "mcp-bashd:session:"
	sessionsChannel  = "mcp-bashd:sessions"
	// DefaultSessionTTL is how long a shared session's record stays after
	// its last use.
	DefaultSessionTTL = 24 * time.Hour
	// storeTimeout bounds one store operation in a request's path.
	storeTimeout = 3 * time.Second
	// storeBackoff is how long, once the store failed, requests skip it:
	// those of sessions held here are served from the copy at once, the
	// others answered 503 at once, instead of each waiting for the
	// store's own timeouts (seconds when a network drops packets).
	storeBackoff = 2 * time.Second
)

// storedSession is a record as stored; Ended marks a tombstone.
type storedSession struct {
	Ended bool `json:"ended,omitempty"`
	transport.Record
}

// sessionNote is a message on sessionsChannel.
type sessionNote struct {
	Op     string            `json:"op"` // "changed", "ended", "get"
	ID     string            `json:"id"`
	From   string            `json:"from"`
	Record *transport.Record `json:"record,omitempty"`
}

// shared is the Handler's part of a deployment's sessions.
type shared struct {
	h      *Handler
	store  state.Store
	self   string // this Handler on sessionsChannel
	ttl    time.Duration
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	subscribed bool
	downUntil  time.Time // the store failed: skipped until then (backoff)
	lastErr    error
}

// sharedState is what a sessionConn keeps about its record.
type sharedState struct {
	mu      sync.Mutex // one store write of the session at a time
	flushed uint64     // the session's revision the store has
	stored  bool       // the store has a record of it (written, or read, here)
	touched time.Time  // when its TTL was last set, as far as this replica knows
	used    time.Time  // when the session last had a request here
	// minted: this replica answered the session's initialize. When
	// MaxSessions drops it here, it ends everywhere, as on one replica:
	// otherwise a client looping initialize would fill the store with
	// records for the TTL, bounded by nothing. A copy dropped is only
	// the copy.
	minted bool
}

func newShared(h *Handler) *shared {
	ttl := h.opt.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &shared{h: h, store: h.opt.Store, self: h.opt.ReplicaID + "/" + randomID(), ttl: ttl, ctx: ctx, cancel: cancel}
}

// subscribe puts this replica on sessionsChannel once; an error (the store
// is down) is tried again by the next request that needs it.
func (sh *shared) subscribe() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.subscribed {
		return nil
	}
	if time.Now().Before(sh.downUntil) {
		return sh.lastErr
	}
	if err := sh.store.Subscribe(sh.ctx, sessionsChannel, sh.note); err != nil {
		sh.downUntil, sh.lastErr = time.Now().Add(storeBackoff), err
		return err
	}
	sh.subscribed = true
	return nil
}

// down is the store's last error while its backoff lasts, else nil.
func (sh *shared) down() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if time.Now().Before(sh.downUntil) {
		return sh.lastErr
	}
	return nil
}

// failed starts a backoff when err says the store cannot be reached.
func (sh *shared) failed(err error) error {
	if errors.Is(err, state.ErrUnavailable) {
		sh.mu.Lock()
		sh.downUntil, sh.lastErr = time.Now().Add(storeBackoff), err
		sh.mu.Unlock()
	}
	return err
}

// note applies another replica's message to this replica's copy.
func (sh *shared) note(msg []byte) {
	var n sessionNote
	if json.Unmarshal(msg, &n) != nil || n.From == sh.self || n.ID == "" {
		return
	}
	h := sh.h
	if n.Op == "ended" {
		if h.endSession(n.ID) {
			h.opt.Log.Info("http session ended by another replica", zap.String("session", n.ID))
		}
		return
	}
	h.mu.Lock()
	sc := h.sessions[n.ID]
	h.mu.Unlock()
	if sc == nil {
		return
	}
	switch n.Op {
	case "changed":
		if n.Record != nil {
			sc.shared.mu.Lock()
			sc.session.Apply(*n.Record)
			sc.shared.touched = time.Now()
			sc.shared.mu.Unlock()
		}
	case "get":
		sc.mu.Lock()
		st := sc.get
		sc.mu.Unlock()
		if st != nil {
			st.abandon() // the client listens on another replica now
		}
	}
}

func (sh *shared) publish(op, id string, rec *transport.Record) {
	err := sh.down()
	if err == nil {
		ctx, cancel := context.WithTimeout(sh.ctx, storeTimeout)
		defer cancel()
		b, _ := json.Marshal(sessionNote{Op: op, ID: id, From: sh.self, Record: rec})
		err = sh.failed(sh.store.Publish(ctx, sessionsChannel, b))
	}
	if err != nil {
		sh.h.opt.Log.Warn("state store: the other replicas were not told of a session change", zap.String("session", id), zap.String("change", op), zap.Error(err))
	}
}

// read returns the session's stored record; nil, nil when there is none
// (or a tombstone).
func (sh *shared) read(id string) (*storedSession, error) {
	if err := sh.down(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(sh.ctx, storeTimeout)
	defer cancel()
	b, ok, err := sh.store.Get(ctx, sessionKeyPrefix+id)
	if err != nil || !ok {
		return nil, sh.failed(err)
	}
	var s storedSession
	if json.Unmarshal(b, &s) != nil || s.Ended || s.Version == "" {
		return nil, nil
	}
	return &s, nil
}

func (sh *shared) write(id string, v storedSession) error {
	if err := sh.down(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(sh.ctx, storeTimeout)
	defer cancel()
	b, _ := json.Marshal(v)
	return sh.failed(sh.store.Set(ctx, sessionKeyPrefix+id, b, sh.ttl))
}

// storeDown says why a request the store was needed for is answered 503.
func storeDown(id string, err error) string {
	return "Service Unavailable: the state store cannot be reached to find session " + id + " (" + err.Error() + ")"
}

// session is the session id for a request that needs it current: sc, the
// copy held here (refreshed), or a copy made from the store (adopt).
func (sh *shared) session(id string, sc *sessionConn) (*sessionConn, int, string) {
	if sc == nil {
		return sh.adopt(id)
	}
	status, why := sh.refresh(sc, false)
	return sc, status, why
}

// adopt makes this replica's copy of a session another replica started,
// from its record: already initialized. 404 when there is no record.
func (sh *shared) adopt(id string) (*sessionConn, int, string) {
	if err := sh.subscribe(); err != nil {
		return nil, http.StatusServiceUnavailable, storeDown(id, err)
	}
	rec, err := sh.read(id)
	if err != nil {
		return nil, http.StatusServiceUnavailable, storeDown(id, err)
	}
	if rec == nil {
		return nil, http.StatusNotFound, "Not Found: unknown or ended session " + id
	}
	h := sh.h
	h.mu.Lock()
	if sc := h.sessions[id]; sc != nil { // another request made it meanwhile
		h.mu.Unlock()
		return sc, 0, ""
	}
	sc := newSessionConn(id)
	sc.session.Apply(rec.Record)
	now := time.Now()
	// touched stays zero: its first request here sets the TTL again.
	sc.shared = &sharedState{flushed: sc.session.Revision(), stored: true, used: now}
	h.addLocked(sc)
	h.mu.Unlock()
	h.opt.Log.Info("http session served here from the state store", zap.String("session", id))
	return sc, 0, ""
}

// flush stores the session's record when it changed here, before the
// answer of the request that changed it goes out.
func (sh *shared) flush(sc *sessionConn) {
	ss := sc.shared
	ss.mu.Lock()
	defer ss.mu.Unlock()
	rec, rev := sc.session.Record()
	if rev == ss.flushed || rec.Version == "" {
		return
	}
	first := !ss.stored // initialize: no other replica has a copy
	if err := sh.write(sc.id, storedSession{Record: rec}); err != nil {
		// Kept unflushed: the next change (or refresh) writes it.
		sh.h.opt.Log.Warn("state store: session not stored; other replicas cannot serve it until it is", zap.String("session", sc.id), zap.Error(err))
		return
	}
	ss.flushed, ss.stored, ss.touched = rev, true, time.Now()
	if !first {
		sh.publish("changed", sc.id, &rec)
	}
}

// refresh brings a held session up to date with its record before a
// request that changes it or runs bash (read: see reads), and sets the
// record's TTL again when this replica has not for TTL/4. 404 when the
// session ended or expired meanwhile; a store that cannot be reached
// leaves the copy as it is.
func (sh *shared) refresh(sc *sessionConn, read bool) (int, string) {
	ss := sc.shared
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := time.Now()
	idle := now.Sub(ss.used)
	ss.used = now
	stale := now.Sub(ss.touched) >= sh.ttl/4
	if !ss.stored || (!read && !stale) {
		return 0, "" // not stored yet (initialize), or fresh enough
	}
	if sh.down() != nil {
		return 0, "" // served from the copy while the store is away
	}
	ctx, cancel := context.WithTimeout(sh.ctx, storeTimeout)
	defer cancel()
	b, ok, err := sh.store.Get(ctx, sessionKeyPrefix+sc.id)
	if err != nil {
		sh.failed(err)
		return 0, "" // served from the copy while the store is away
	}
	var stored storedSession
	ok = ok && json.Unmarshal(b, &stored) == nil && (stored.Ended || stored.Version != "")
	if stored.Ended || (!ok && idle > sh.ttl) {
		sh.h.endSession(sc.id)
		return http.StatusNotFound, "Not Found: unknown or ended session " + sc.id
	}
	rec, rev := sc.session.Record()
	unflushed := rev != ss.flushed
	if ok && !unflushed {
		sc.session.Apply(stored.Record) // nothing changed here that it lacks
		rec = stored.Record
	}
	if ok && !stale && !unflushed {
		return 0, ""
	}
	// Written when the TTL is due, when this copy has changes the store
	// lacks (their flush failed), and when the record is missing though
	// the session was used here within the TTL: the store lost it
	// (restarted empty), and this copy is what the session is.
	if err := sh.write(sc.id, storedSession{Record: rec}); err == nil {
		ss.touched = now
		ss.flushed = sc.session.Revision()
		if unflushed || !ok {
			sh.publish("changed", sc.id, &rec)
		}
	}
	return 0, ""
}

// end ends a session everywhere (DELETE); false when no replica knows it.
func (sh *shared) end(id string) (bool, error) {
	local := sh.h.endSession(id)
	rec, err := sh.read(id)
	if err == nil && (rec != nil || local) {
		err = sh.write(id, storedSession{Ended: true})
	}
	if err != nil {
		if local {
			sh.h.opt.Log.Warn("state store: session ended here only; other replicas may still serve it", zap.String("session", id), zap.Error(err))
			return true, nil
		}
		return false, err
	}
	if rec == nil && !local {
		return false, nil
	}
	sh.publish("ended", id, nil)
	return true, nil
}

// reads reports whether a request reads the session's record before it
// is served on a replica that holds a copy: the copies follow changes
// through sessionsChannel, but a message may come after the client's
// next request, which must see what its last answer confirmed. So the
// requests that change the record (they must not write over a change made
// elsewhere) and those that run bash (the log level decides what of the
// tool's mcp_log reaches the client; one GET is little beside the
// process) read it; the cheap ones (ping, the lists, completions of
// nothing) are served from the copy.
func reads(method string) bool {
	switch method {
	case "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
		"tools/call", "resources/read", "prompts/get":
		return true
	}
	return false
}
