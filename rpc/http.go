package rpc

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"go.uber.org/zap"
)

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	Path           string   // the MCP endpoint, e.g. /mcp
	AllowedOrigins []string // Origin values accepted besides loopback ones
	Loopback       bool     // bound to a loopback address: Host must be a loopback name
	Token          []byte   // bearer token; nil: no authentication
	MaxSessions    int      // legacy sessions kept; the oldest is dropped beyond it
}

// HTTPHandler serves MCP over Streamable HTTP: one JSON-RPC message per
// POST, answered as JSON or, when notifications must reach the client
// before the result, as an SSE stream. Legacy clients get Mcp-Session-Id
// sessions (their negotiated version and log level live there); 2026-07-28
// requests are stateless and their headers are checked against the body.
func (s *Server) HTTPHandler(opt HTTPOptions) http.Handler {
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = 10000
	}
	return &httpTransport{s: s, opt: opt, sessions: map[string]*session{}}
}

type httpTransport struct {
	s        *Server
	opt      HTTPOptions
	mu       sync.Mutex
	sessions map[string]*session
	order    []string // session ids, oldest first
}

func (h *httpTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.opt.Path {
		http.NotFound(w, r)
		return
	}
	// DNS rebinding: a page on another origin must not reach a local
	// server through the browser ("Servers MUST validate the Origin").
	if !h.hostAllowed(r.Host) {
		h.reject(w, http.StatusForbidden, "Forbidden: Host "+r.Host+" is not allowed")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
		h.reject(w, http.StatusForbidden, "Forbidden: Origin "+o+" is not allowed")
		return
	}
	if h.opt.Token != nil {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), h.opt.Token) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-bashd"`)
			h.reject(w, http.StatusUnauthorized, "Unauthorized: a valid bearer token is required")
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && h.endSession(id) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fallthrough
	default:
		// No GET stream: the server never sends unsolicited messages.
		w.Header().Set("Allow", "POST")
		h.reject(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if h.s.isStopping() {
		h.reject(w, http.StatusServiceUnavailable, "Service Unavailable: shutting down")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(h.s.opt.MaxLine)+1))
	if err != nil {
		h.reject(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	if len(body) > h.s.opt.MaxLine {
		writeJSON(w, http.StatusRequestEntityTooLarge, ErrorLine(json.RawMessage("null"), codeParse, fmt.Sprintf("Parse error: body longer than the %d-byte limit", h.s.opt.MaxLine), nil))
		return
	}
	msg, gerr := Parse(body)
	if gerr != nil {
		writeJSON(w, http.StatusBadRequest, ErrorLine(gerr.ID, gerr.Code, gerr.Message, nil))
		return
	}
	if msg == nil || msg.IsResponse {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	hs := &httpSink{w: w, r: r, done: make(chan struct{})}
	hs.h.versionHeader = strings.TrimSpace(r.Header.Get("MCP-Protocol-Version"))
	hs.h.done = r.Context().Done()
	meta := parseMeta(msg.Params)
	modern := isModern(msg.Method, meta, hs.h) && h.s.config.get().modernEnabled()
	if modern {
		hs.modern = true
		hs.h.checkHeaders = func(m *Message, v string) string { return checkModernHeaders(r.Header, m, v) }
		hs.h.header = r.Header
		hs.h.scope = randomID() // stateless: ids never clash across requests
	} else {
		ss, sid, status, why := h.legacySession(r, msg.Method)
		if status != 0 {
			h.reject(w, status, why)
			return
		}
		hs.h.session, hs.h.scope, hs.sessionID = ss, "s:"+sid, sid
	}
	if !msg.HasID {
		h.s.notification(msg, hs.h.scope)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// handleLine parses again; the body is one message and small next to
	// what a call costs.
	h.s.handleLine(body, hs)
	select {
	case <-hs.done:
	case <-r.Context().Done():
		// The client went away; the call (if any) is cancelled through
		// hint.done and sends nothing more.
	}
	// The ResponseWriter is dead once this handler returns: whatever the
	// call's goroutine still has to say is dropped.
	hs.mu.Lock()
	hs.finished = true
	hs.mu.Unlock()
	if !modern && msg.Method == "initialize" && hs.status == http.StatusOK {
		h.s.log.Info("http session started", zap.String("session", hs.sessionID))
	}
}

// legacySession finds or makes the session of a legacy-era request.
// initialize always starts a new one; other requests use the one named by
// Mcp-Session-Id (404 when it is unknown or ended) or, without the header,
// a throwaway session (clients that do not keep sessions still work).
func (h *httpTransport) legacySession(r *http.Request, method string) (*session, string, int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if method == "initialize" {
		id := randomID()
		ss := newSession()
		h.sessions[id] = ss
		h.order = append(h.order, id)
		for len(h.order) > h.opt.MaxSessions {
			delete(h.sessions, h.order[0])
			h.order = h.order[1:]
		}
		return ss, id, 0, ""
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return newSession(), randomID(), 0, ""
	}
	ss, ok := h.sessions[id]
	if !ok {
		return nil, "", http.StatusNotFound, "Not Found: unknown or ended session " + id
	}
	// "If the server receives a request with an invalid or unsupported
	// MCP-Protocol-Version, it MUST respond with 400 Bad Request."
	if v := strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")); v != "" && !contains(supportedVersions, v) {
		return nil, "", http.StatusBadRequest, "Bad Request: unsupported MCP-Protocol-Version " + v
	}
	return ss, id, 0, ""
}

func (h *httpTransport) endSession(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sessions[id]; !ok {
		return false
	}
	delete(h.sessions, id)
	for i, v := range h.order {
		if v == id {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
	return true
}

func (h *httpTransport) reject(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorLine(json.RawMessage("null"), codeInvalidRequest, msg, nil))
}

func writeJSON(w http.ResponseWriter, status int, line []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(line)
}

func isLoopbackName(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (h *httpTransport) hostAllowed(host string) bool {
	if !h.opt.Loopback {
		return true // a public bind names itself however the operator routes it
	}
	if isLoopbackName(host) {
		return true
	}
	for _, o := range h.opt.AllowedOrigins {
		if u, err := url.Parse(o); err == nil && strings.EqualFold(u.Host, host) {
			return true
		}
	}
	return false
}

func (h *httpTransport) originAllowed(origin string) bool {
	for _, o := range h.opt.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), strings.TrimSuffix(origin, "/")) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackName(u.Host)
}

// checkModernHeaders compares the 2026 request headers with the body:
// MCP-Protocol-Version with _meta's version, Mcp-Method with method, and
// Mcp-Name with params.name for tools/call. Values are trimmed (HTTP field
// values) and may be =?base64?…?= encoded.
func checkModernHeaders(hd http.Header, msg *Message, version string) string {
	get := func(k string) (string, bool) {
		return headerValue(hd, k)
	}
	if v, ok := get("MCP-Protocol-Version"); !ok {
		return "missing MCP-Protocol-Version header"
	} else if v != version {
		return "MCP-Protocol-Version header " + v + " does not match _meta version " + version
	}
	if m, ok := get("Mcp-Method"); !ok {
		return "missing Mcp-Method header"
	} else if m != msg.Method {
		return "Mcp-Method header " + m + " does not match method " + msg.Method
	}
	switch msg.Method {
	case "tools/call", "resources/read", "prompts/get":
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		want := p.Name
		if msg.Method == "resources/read" {
			want = p.URI
		}
		if n, ok := get("Mcp-Name"); !ok {
			return "missing Mcp-Name header"
		} else if n != want {
			return "Mcp-Name header " + n + " does not match " + want
		}
	}
	return ""
}

// headerValue returns a request header's value, trimmed and decoded from
// =?base64?…?= (a value so wrapped that does not decode strictly is
// returned as "\x00invalid" so it can match nothing).
func headerValue(hd http.Header, k string) (string, bool) {
	vs, ok := hd[http.CanonicalHeaderKey(k)]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return decodeHeader(strings.TrimSpace(vs[0])), true
}

func decodeHeader(v string) string {
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			b, err := base64.StdEncoding.Strict().DecodeString(inner)
			if err != nil {
				return "\x00invalid"
			}
			return string(b)
		}
	}
	return v
}

// checkParamHeaders compares the Mcp-Param-<Name> headers of a 2026 HTTP
// tools/call with the arguments their schema marks with x-mcp-header:
// present argument ⇔ present header, and equal values (numbers compared
// numerically).
func checkParamHeaders(hd http.Header, headers map[string]string, args json.RawMessage) string {
	var argv map[string]json.RawMessage
	_ = json.Unmarshal(args, &argv)
	for prop, name := range headers {
		raw, present := argv[prop]
		if present && firstByte(raw) == 'n' {
			present = false
		}
		got, hasHeader := headerValue(hd, "Mcp-Param-"+name)
		switch {
		case !present && !hasHeader:
			continue
		case !hasHeader:
			return "missing Mcp-Param-" + name + " header"
		case !present:
			return "Mcp-Param-" + name + " header given for an absent argument " + prop
		}
		if !paramMatches(got, raw) {
			return "Mcp-Param-" + name + " header does not match argument " + prop
		}
	}
	return ""
}

func paramMatches(header string, raw json.RawMessage) bool {
	switch firstByte(raw) {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil && s == header
	case 't', 'f':
		return string(bytes.TrimSpace(raw)) == header
	default:
		a, ok1 := new(big.Rat).SetString(header)
		b, ok2 := new(big.Rat).SetString(string(bytes.TrimSpace(raw)))
		return ok1 && ok2 && a.Cmp(b) == 0
	}
}

func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// httpSink is one POST's output: JSON when the response comes first, SSE
// once a notification must go out before it.
type httpSink struct {
	w         http.ResponseWriter
	r         *http.Request
	h         transportHint
	modern    bool
	sessionID string
	mu        sync.Mutex
	sse       bool
	finished  bool
	status    int
	done      chan struct{}
}

func (hs *httpSink) hint() transportHint { return hs.h }

func (hs *httpSink) accepts(typ string) bool {
	for _, a := range hs.r.Header.Values("Accept") {
		if strings.Contains(a, typ) || strings.Contains(a, "*/*") {
			return true
		}
	}
	return false
}

func (hs *httpSink) notify(line []byte) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.finished || !hs.accepts("text/event-stream") {
		return // a JSON-only client cannot receive notifications
	}
	if !hs.sse {
		hs.sse = true
		hs.headers()
		hs.w.Header().Set("Content-Type", "text/event-stream")
		hs.w.Header().Set("Cache-Control", "no-cache")
		hs.w.Header().Set("X-Accel-Buffering", "no")
		hs.status = http.StatusOK
		hs.w.WriteHeader(http.StatusOK)
	}
	hs.event(line)
}

func (hs *httpSink) event(line []byte) {
	fmt.Fprintf(hs.w, "event: message\ndata: %s\n\n", strings.TrimSuffix(string(line), "\n"))
	if f, ok := hs.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (hs *httpSink) respond(line []byte) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.finished {
		return
	}
	hs.finished = true
	defer close(hs.done)
	if hs.sse {
		hs.event(line)
		return
	}
	hs.headers()
	hs.status = statusFor(line, hs.modern)
	hs.w.Header().Set("Content-Type", "application/json")
	hs.w.WriteHeader(hs.status)
	hs.w.Write(line)
}

// finish ends a POST whose call was cancelled: no response is sent for
// its id, but the request must not stay open until the client gives up. An
// SSE stream already started just ends; otherwise an empty one is sent.
func (hs *httpSink) finish() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.finished {
		return
	}
	hs.finished = true
	defer close(hs.done)
	if !hs.sse {
		hs.headers()
		hs.w.Header().Set("Content-Type", "text/event-stream")
		hs.w.Header().Set("Cache-Control", "no-cache")
		hs.status = http.StatusOK
		hs.w.WriteHeader(http.StatusOK)
	}
}

func (hs *httpSink) headers() {
	if hs.sessionID != "" && !hs.modern {
		hs.w.Header().Set("Mcp-Session-Id", hs.sessionID)
	}
}

// statusFor maps a response to its HTTP status: the 2026 table (400 for
// malformed requests and the -3202x errors, 404 for an unknown method);
// legacy errors other than parse and invalid-request travel in a 200.
func statusFor(line []byte, modern bool) int {
	var r struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &r) != nil || r.Error == nil {
		return http.StatusOK
	}
	switch r.Error.Code {
	case codeParse, codeInvalidRequest:
		return http.StatusBadRequest
	}
	if !modern {
		return http.StatusOK
	}
	switch r.Error.Code {
	case codeInvalidParams, codeHeaderMismatch, codeMissingCapability, codeUnsupportedVersion:
		return http.StatusBadRequest
	case codeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}
