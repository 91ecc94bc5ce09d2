package streamhttp

import (
	"encoding/json"
	"net/http"
	"time"
)

// A legacy session's GET stream (2025-03-26 to 2025-11-25, "Listening for
// Messages from the Server"): the client opens an SSE stream with GET and
// its Mcp-Session-Id, and the server sends on it what belongs to no
// request — notifications/resources/updated for a resources/subscribe,
// the list_changed notifications. A session has at most one: a newer GET
// replaces the older ("The server MUST send each of its JSON-RPC messages
// on only one of the connected streams"). 2026-07-28 has no GET stream
// (its clients open subscriptions/listen), and a client without a session
// has nothing to listen to: both get 405, as before.

// serveGET holds a session's GET stream open until the client leaves, the
// session ends, or the server stops.
func (h *Handler) serveGET(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		// Nothing to listen to: the empty 405 every other method gets.
		w.Header().Set("Allow", "POST")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	h.mu.Lock()
	sc := h.sessions[id]
	h.mu.Unlock()
	st := newStream(w, r, h.opt.IOTimeout, false)
	if h.sh != nil && !h.opt.Stopping() && st.accepts("text/event-stream") {
		// Another replica's session, perhaps (shared.go).
		var status int
		var why string
		if sc, status, why = h.sh.session(id, sc); status != 0 {
			reject(w, status, why)
			return
		}
	}
	switch {
	case sc == nil:
		reject(w, http.StatusNotFound, "Not Found: unknown or ended session "+id)
		return
	case !st.accepts("text/event-stream"):
		reject(w, http.StatusNotAcceptable, "Not Acceptable: a GET stream is text/event-stream")
		return
	case h.opt.Stopping():
		reject(w, http.StatusServiceUnavailable, "Service Unavailable: shutting down")
		return
	}
	defer st.handlerEnd()
	st.sessionID = sc.id
	// The stream is the session's before its client can see it open: a
	// newer GET the client sends after seeing this one's headers must find
	// this one to replace, not be replaced by it. (Notifications wait for
	// st.mu, so none is written before the SSE headers.)
	st.mu.Lock()
	old := sc.setGET(st)
	st.startSSE()
	// An SSE comment, so the client learns at once that the stream is
	// open, even through a proxy that holds headers until body bytes come.
	_ = st.send([]byte(": session stream\n\n")) && st.put(st.rc.Flush)
	st.mu.Unlock()
	if old != nil {
		old.abandon()
	}
	if h.sh != nil {
		// The client listens here now: a GET stream it left open on
		// another replica must not carry the session's notifications too.
		h.sh.publish("get", sc.id, nil)
	}
	defer sc.clearGET(st)
	renew, stop := h.sh.renewals()
	defer stop()
wait:
	for {
		select {
		case <-r.Context().Done():
		case <-sc.ended:
		case <-st.brokenCh: // replaced, abandoned, or the client stopped reading
		case <-renew:
			if status, _ := h.sh.refresh(sc, false); status == 0 {
				continue
			}
		}
		break wait
	}
	st.mu.Lock()
	st.finished = true
	st.mu.Unlock()
}

// renewals tick while a GET stream is open: a client listening is using
// its session, so with a shared store the record's TTL is set again while
// the stream stays open, though no request may come (refresh does so once
// per TTL/4). Without a shared store (sh nil) they never tick.
func (sh *shared) renewals() (<-chan time.Time, func()) {
	if sh == nil {
		return nil, func() {}
	}
	t := time.NewTicker(sh.ttl / 4)
	return t.C, t.Stop
}

// setGET makes st the session's GET stream and returns the one it
// replaces.
func (c *sessionConn) setGET(st *stream) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.get
	c.get = st
	return old
}

// clearGET forgets st when it is still the session's GET stream.
func (c *sessionConn) clearGET(st *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.get == st {
		c.get = nil
	}
}

// Notify sends a notification that belongs to no request on the session's
// GET stream; false when the client has none open.
func (c *sessionConn) Notify(method string, params json.RawMessage) bool {
	c.mu.Lock()
	st := c.get
	c.mu.Unlock()
	if st == nil {
		return false
	}
	st.Notify(method, params)
	return true
}

// EndStreams ends every session's GET stream: the server is stopping, and
// an idle stream would otherwise hold http.Server.Shutdown for its whole
// timeout.
func (h *Handler) EndStreams() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sc := range h.sessions {
		sc.mu.Lock()
		st := sc.get
		sc.mu.Unlock()
		if st != nil {
			st.abandon()
		}
	}
}
