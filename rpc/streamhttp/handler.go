// Package streamhttp is the Streamable HTTP transport: one JSON-RPC
// message per POST, answered as JSON or, when notifications must reach the
// client before the result, as an SSE stream. Legacy clients get
// Mcp-Session-Id sessions — each session is one Connection, served for as
// long as it lives, so its negotiated version, log level and in-flight
// calls stay together; 2026-07-28 requests (and legacy requests without a
// session) are stateless: each POST is a Connection of one request. A
// session may also hold one GET stream for the notifications that belong
// to no request (getstream.go). The Host, Origin and bearer-token gates
// run before anything is read.
//
// No client can hold a connection, a buffer or a call slot forever:
//   - a body read that brings no byte for IOTimeout, or a body not whole
//     within BodyTimeout, is answered 408 (body.go); past 64 KiB a body
//     waits for one of MaxLargeBodies turns, so slow uploads cannot make
//     the daemon hold many large buffers at once;
//   - every write to a client has its own deadline, IOTimeout from when it
//     starts, set through http.ResponseController just before it (never a
//     whole-response WriteTimeout, which would cut an SSE stream that
//     legitimately stays open for a long call); a write that fails marks
//     the stream broken and the POST ends, which cancels its call;
//   - Abandon (at shutdown) sets the deadline of the writes in progress to
//     now, so an answer stuck on a client that stopped reading returns at
//     once.
//
// Where the 2026 bash SDK's transport answered (its servers' clients and
// tests rely on it), the answers are its: an empty 405 for anything but
// POST, a JSON-RPC -32601 404 "No MCP endpoint at <target>" for another
// path, and its texts for a foreign Origin, a header that does not match
// the body and a body that is not JSON.
//
// The same Handler also serves one connection handed over on
// stdin/stdout (stdconn.go: inetd, socat EXEC, systemd Accept=yes, the
// 2026 bash SDK's handle-connection), then the process exits.
//
// It imports rpc/wire and rpc/transport, never the server: it is given
// the function that serves a Connection.
package streamhttp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Options configure the transport.
type Options struct {
	Path           string   // the MCP endpoint, e.g. /mcp
	AllowedOrigins []string // Origin values accepted besides loopback ones
	Loopback       bool     // bound to a loopback address: Host must be a loopback name
	Token          []byte   // bearer token; nil: no authentication
	MaxSessions    int      // legacy sessions kept; the oldest is dropped beyond it
	MaxBody        int      // bytes per POST body
	// IOTimeout bounds each read of a body and each write of a response:
	// the client must send or take something within it (0: 10 s).
	IOTimeout time.Duration
	// BodyTimeout bounds the reading of a whole body (0: 60 s).
	BodyTimeout time.Duration
	// MaxLargeBodies is how many bodies over 64 KiB are read at once (0: 2).
	MaxLargeBodies int
	// LegacyVersions are the revisions a session may name in
	// MCP-Protocol-Version.
	LegacyVersions []string
	ModernEnabled  func() bool
	Stopping       func() bool
	// Serve serves one Connection until it ends (the server's Serve).
	Serve func(transport.Connection) error
	// Sessionless: initialize starts no Mcp-Session-Id session and the
	// header is ignored, so every legacy request stands alone — for the
	// one-connection mode (StdioConn), where a client's next request
	// reaches another process (the 2026 SDK ignored the header too).
	Sessionless bool
	// Store is what the replicas of a deployment share (--state); nil or
	// an unshared store: sessions live in this process only.
	Store state.Store
	// ReplicaID names this replica in a shared Store.
	ReplicaID string
	// SessionTTL is how long a session shared through Store lives idle
	// (0: DefaultSessionTTL); see shared.go.
	SessionTTL time.Duration
	Log        *zap.Logger
}

// Handler is the MCP endpoint.
type Handler struct {
	opt      Options
	large    chan struct{} // turns to read a large body
	mu       sync.Mutex
	sessions map[string]*sessionConn
	order    []string // session ids, oldest first
	sh       *shared  // sessions shared between replicas; nil without a shared Store
}

// New makes the endpoint.
func New(opt Options) *Handler {
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = 10000
	}
	if opt.MaxBody <= 0 {
		opt.MaxBody = 16 << 20
	}
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.IOTimeout <= 0 {
		opt.IOTimeout = 10 * time.Second
	}
	if opt.BodyTimeout <= 0 {
		opt.BodyTimeout = 60 * time.Second
	}
	if opt.MaxLargeBodies <= 0 {
		opt.MaxLargeBodies = 2
	}
	h := &Handler{opt: opt, large: make(chan struct{}, opt.MaxLargeBodies), sessions: map[string]*sessionConn{}}
	if opt.Store != nil && opt.Store.Shared() && !opt.Sessionless {
		h.sh = newShared(h)
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The answers written right here (rejections, 202) get the write
	// timeout too; a call's answer sets its own deadlines when it comes.
	h.writeSoon(w)
	// The 2026 bash SDK's order and answers (its servers' clients and
	// tests see them unchanged): the Origin gate, then the method, then
	// the path.
	if status, why := h.gate(w, r); status != 0 {
		reject(w, status, why)
		return
	}
	atPath := r.URL.Path == h.opt.Path
	if r.Method != http.MethodPost {
		h.serveNotPOST(w, r, atPath)
		return
	}
	if !atPath {
		// A JSON-RPC answer an MCP client can read, naming the target as
		// the request line gave it.
		writeJSON(w, http.StatusNotFound, wire.ErrorLine(json.RawMessage("null"), wire.CodeMethodNotFound, "No MCP endpoint at "+r.RequestURI, nil))
		return
	}
	if h.opt.Stopping() {
		reject(w, http.StatusServiceUnavailable, "Service Unavailable: shutting down")
		return
	}
	body, release, berr := h.readBody(w, r)
	h.writeSoon(w) // reading the body may have taken up to its timeout
	if berr != nil {
		release()
		// What is left of the body must not be read (net/http would, to
		// reuse the connection, with no deadline) nor parsed as a request.
		w.Header().Set("Connection", "close")
		if berr.status == http.StatusRequestEntityTooLarge {
			writeJSON(w, berr.status, wire.ErrorLine(json.RawMessage("null"), wire.CodeParse, berr.msg, nil))
			return
		}
		h.opt.Log.Info("request body not read", zap.Int("status", berr.status), zap.String("reason", berr.msg))
		reject(w, berr.status, berr.msg)
		return
	}
	if len(body) == 0 {
		release()
		writeJSON(w, http.StatusBadRequest, wire.ErrorLine(json.RawMessage("null"), wire.CodeParse, "Empty request body", nil))
		return
	}
	msg, gerr := wire.Parse(body)
	release()
	if gerr != nil && h.batchAllowed(r) {
		if members, ok := wire.Batch(body); ok {
			noteMethod(r, "batch")
			h.serveBatch(w, r, members)
			return
		}
	}
	if gerr != nil {
		h.opt.Log.Info(gerr.Sentence, zap.Int("code", gerr.Code), zap.String("message", gerr.Message))
		writeJSON(w, http.StatusBadRequest, badBody(gerr).Line())
		return
	}
	if msg == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	noteMethod(r, msg.Method)
	if msg.IsResponse {
		// "If the input is a JSON-RPC response or notification: If the
		// server accepts the input, the server MUST return HTTP status
		// code 202 Accepted with no body." The server matches it with
		// the request it sent (on whichever POST's stream) by its id.
		h.opt.Serve(&oneConn{reqs: []*transport.Request{{Msg: msg}}})
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.serveMessage(w, r, msg)
}

// serveNotPOST answers a request whose method is not POST: GET is a
// session's notification stream (getstream.go), DELETE ends a session,
// anything else is 405.
func (h *Handler) serveNotPOST(w http.ResponseWriter, r *http.Request, atPath bool) {
	switch r.Method {
	case http.MethodGet:
		h.serveGET(w, r)
		return
	case http.MethodDelete:
		id := r.Header.Get("Mcp-Session-Id")
		if !atPath || id == "" {
			break
		}
		ended := false
		if h.sh != nil {
			var err error
			if ended, err = h.sh.end(id); err != nil {
				reject(w, http.StatusServiceUnavailable, storeDown(id, err))
				return
			}
		} else {
			ended = h.endSession(id)
		}
		if ended {
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	// An empty body, as the 2026 SDK's; Allow, as HTTP requires of a 405.
	w.Header().Set("Allow", "POST")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusMethodNotAllowed)
}

// writeSoon gives what the handler itself writes next the I/O timeout.
func (h *Handler) writeSoon(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.opt.IOTimeout))
}

// gate applies the checks every request passes before its body is read.
func (h *Handler) gate(w http.ResponseWriter, r *http.Request) (int, string) {
	// DNS rebinding: a page on another origin must not reach a local
	// server through the browser ("Servers MUST validate the Origin").
	if !h.hostAllowed(r.Host) {
		return http.StatusForbidden, "Forbidden: Host " + r.Host + " is not allowed"
	}
	if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
		return http.StatusForbidden, "Origin not allowed: " + o // the 2026 SDK's text
	}
	if h.opt.Token != nil && strings.HasPrefix(r.URL.Path, "/.well-known/") {
		// OAuth discovery (RFC 9728 protected-resource metadata, RFC 8414
		// authorization-server metadata): this server has none, and a
		// 401 here would tell a client it does and send it into an OAuth
		// flow. A 404 says "no OAuth: send the bearer token you were
		// given".
		return http.StatusNotFound, "Not Found: this server does not use OAuth; send its token as Authorization: Bearer TOKEN"
	}
	if h.opt.Token != nil {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), h.opt.Token) != 1 {
			// 403 without a challenge, not 401: MCP clients take any 401
			// as "this server uses OAuth" and start an authorization flow
			// (the Inspector: "Interactive OAuth requires a TTY"), where
			// the only fix is the token the operator handed out.
			return http.StatusForbidden, "Unauthorized: a valid bearer token is required (send Authorization: Bearer TOKEN; this server does not use OAuth)"
		}
	}
	return 0, ""
}

// serveMessage hands one decoded message to its connection and waits for
// its answer (or the client's departure).
func (h *Handler) serveMessage(w http.ResponseWriter, r *http.Request, msg *wire.Message) {
	req := transport.Decode(msg, strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")), h.opt.ModernEnabled)
	st := newStream(w, r, h.opt.IOTimeout, req.Era == transport.Modern)
	defer st.handlerEnd()
	req.Out, req.Gone = st, r.Context().Done()
	var sc *sessionConn
	if req.Era == transport.Modern {
		req.Headers = headers(r.Header)
	} else {
		var status int
		var why string
		sc, status, why = h.legacySession(r, msg.Method)
		if status != 0 {
			reject(w, status, why)
			return
		}
		if sc != nil {
			st.sessionID = sc.id
			req.Session = sc.session
			if h.sh != nil {
				st.beforeRespond = func() { h.sh.flush(sc) }
			}
		} else {
			req.Session = transport.NewStandaloneSession() // a client that keeps no session
		}
	}
	if sc == nil || !sc.deliver(req, st, r.Context().Done()) {
		// Stateless: a Connection of this one request.
		go h.opt.Serve(&oneConn{reqs: []*transport.Request{req}, session: req.Session, st: st})
	} else {
		defer sc.forget(st)
	}
	if !msg.HasID {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.await(st, r)
	if msg.Method == "initialize" && sc != nil && st.status == http.StatusOK {
		h.opt.Log.Info("http session started", zap.String("session", sc.id))
	}
}

// await waits for a POST's answer to be written (or the client's
// departure), then closes the stream to the call's goroutine.
func (h *Handler) await(st *stream, r *http.Request) {
	select {
	case <-st.done:
	case <-r.Context().Done():
		// The client went away; the call (if any) is cancelled through
		// req.Gone and sends nothing more.
	case <-st.brokenCh:
		// The client took nothing for the write timeout, or shutdown gave
		// up on it: it cannot get the answer, so the POST ends, which
		// cancels the call through req.Gone.
	}
	// The ResponseWriter is dead once this handler returns: whatever the
	// call's goroutine still has to say is dropped.
	st.mu.Lock()
	st.finished = true
	st.mu.Unlock()
}

// legacySession finds or makes the session of a legacy-era request.
// initialize always starts a new one; other requests use the one named by
// Mcp-Session-Id (404 when it is unknown or ended) or, without the header,
// none (nil: clients that keep no sessions still work).
func (h *Handler) legacySession(r *http.Request, method string) (*sessionConn, int, string) {
	if h.opt.Sessionless {
		return nil, 0, ""
	}
	if method == "initialize" {
		sc := newSessionConn(randomID())
		if h.sh != nil {
			// This replica must hear the changes other replicas make to
			// the session; when the store is down now, the next request
			// of a session tries again (refresh).
			_ = h.sh.subscribe()
			sc.shared = &sharedState{used: time.Now(), minted: true}
		}
		h.mu.Lock()
		h.addLocked(sc)
		h.mu.Unlock()
		return sc, 0, ""
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return nil, 0, ""
	}
	h.mu.Lock()
	sc, ok := h.sessions[id]
	h.mu.Unlock()
	switch {
	case !ok && h.sh == nil:
		return nil, http.StatusNotFound, "Not Found: unknown or ended session " + id
	case !ok:
		// Another replica's session, perhaps (shared.go).
		var status int
		var why string
		if sc, status, why = h.sh.adopt(id); status != 0 {
			return nil, status, why
		}
	case h.sh != nil:
		_ = h.sh.subscribe()
		if status, why := h.sh.refresh(sc, reads(method)); status != 0 {
			return nil, status, why
		}
	}
	// "If the server receives a request with an invalid or unsupported
	// MCP-Protocol-Version, it MUST respond with 400 Bad Request."
	if v := strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")); v != "" && !slices.Contains(h.opt.LegacyVersions, v) {
		return nil, http.StatusBadRequest, "Bad Request: unsupported MCP-Protocol-Version " + v
	}
	return sc, 0, ""
}

// addLocked holds a new session, dropping the oldest beyond MaxSessions,
// and starts serving it; h.mu is held. (With a shared store a dropped
// copy is only this replica's: its record stays for the others; a dropped
// session this replica started ends everywhere, see sharedState.minted.)
func (h *Handler) addLocked(sc *sessionConn) {
	h.sessions[sc.id] = sc
	h.order = append(h.order, sc.id)
	for len(h.order) > h.opt.MaxSessions {
		old := h.sessions[h.order[0]]
		old.close()
		delete(h.sessions, h.order[0])
		h.order = h.order[1:]
		if h.sh != nil && old.shared != nil && old.shared.minted {
			go h.sh.end(old.id) // store operations, without h.mu
		}
	}
	go h.opt.Serve(sc)
}

func (h *Handler) endSession(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	sc, ok := h.sessions[id]
	if !ok {
		return false
	}
	sc.close()
	delete(h.sessions, id)
	for i, v := range h.order {
		if v == id {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
	return true
}

// Close ends every session (their connections read EOF and finish); with
// a shared store their records stay, for the other replicas.
func (h *Handler) Close() {
	if h.sh != nil {
		h.sh.cancel()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, sc := range h.sessions {
		sc.close()
		delete(h.sessions, id)
	}
	h.order = nil
}

func reject(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, wire.ErrorLine(json.RawMessage("null"), wire.CodeInvalidRequest, msg, nil))
}

// badBody is the answer to a body that is not one request: the 2026
// SDK's text for a body that is not one JSON document; the gate's own
// answer otherwise (a JSON value that is not a request).
func badBody(e *wire.GateError) *wire.GateError {
	if e.Code == wire.CodeParse {
		return &wire.GateError{ID: e.ID, Code: e.Code, Message: "Parse error: body is not valid JSON"}
	}
	return e
}

func writeJSON(w http.ResponseWriter, status int, line []byte) {
	w.Header().Set("Content-Type", "application/json")
	// The 2026 SDK sent it with every answer: no proxy holds one back.
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(status)
	w.Write(line)
}

func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}
