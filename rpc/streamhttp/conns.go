package streamhttp

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// sessionConn is one Mcp-Session-Id: a Connection whose requests arrive by
// POST, in order, for as long as the session lives.
type sessionConn struct {
	id      string
	session *transport.Session
	reqs    chan *transport.Request
	mu      sync.Mutex
	closed  bool
	ended   chan struct{}
	streams map[*stream]bool // the POSTs delivered whose handler still runs
	get     *stream          // the session's GET stream, if open (getstream.go)
	shared  *sharedState     // its record in a shared store (shared.go); nil without one
}

func newSessionConn(id string) *sessionConn {
	return &sessionConn{id: id, session: transport.NewHTTPSession(id), reqs: make(chan *transport.Request, 16), ended: make(chan struct{}), streams: map[*stream]bool{}}
}

// deliver queues a request for the session's reader; false when the
// session ended or the client left first. A delivered request's stream is
// the session's until its handler forgets it.
func (c *sessionConn) deliver(req *transport.Request, st *stream, gone <-chan struct{}) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.streams[st] = true
	c.mu.Unlock()
	select {
	case c.reqs <- req:
		return true
	case <-c.ended:
	case <-gone:
	}
	c.forget(st)
	return false
}

// forget drops a stream whose handler is returning.
func (c *sessionConn) forget(st *stream) {
	c.mu.Lock()
	delete(c.streams, st)
	c.mu.Unlock()
}

// Abandon gives up on the session's answers its client has not taken.
func (c *sessionConn) Abandon() {
	c.mu.Lock()
	live := make([]*stream, 0, len(c.streams))
	for st := range c.streams {
		live = append(live, st)
	}
	if c.get != nil {
		live = append(live, c.get)
	}
	c.mu.Unlock()
	for _, st := range live {
		st.abandon()
	}
}

func (c *sessionConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.ended)
	}
}

func (c *sessionConn) Read() (*transport.Request, error) {
	select {
	case req := <-c.reqs:
		return req, nil
	case <-c.ended:
		return nil, io.EOF
	}
}

func (c *sessionConn) Session() *transport.Session { return c.session }

// oneConn is a stateless POST: a Connection that yields its request (or a
// batch's members, batch.go) and ends.
type oneConn struct {
	reqs    []*transport.Request
	session *transport.Session
	st      *stream
}

func (c *oneConn) Abandon() {
	if c.st != nil { // a client's response has no stream
		c.st.abandon()
	}
}

func (c *oneConn) Read() (*transport.Request, error) {
	if len(c.reqs) == 0 {
		return nil, io.EOF
	}
	req := c.reqs[0]
	c.reqs = c.reqs[1:]
	return req, nil
}
func (c *oneConn) Notify(string, json.RawMessage) bool { return false }
func (c *oneConn) Session() *transport.Session         { return c.session }

// stream is one POST's output: JSON when the response comes first, SSE
// once a notification must go out before it. Its writes come from the
// call's goroutine while the handler waits (serveMessage), one at a time
// under mu; each goes out in pieces of at most writeChunk with a deadline
// of its own (put), so a slow but reading client is never cut, one that
// takes nothing for the I/O timeout is.
type stream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	r         *http.Request
	modern    bool
	sessionID string
	// beforeRespond, when set, runs before the response is written: a
	// session shared between replicas stores what the request changed
	// (shared.go), so the client's next request finds it on any replica.
	beforeRespond func()
	mu            sync.Mutex
	sse           bool
	finished      bool
	status        int
	done          chan struct{}

	// dmu orders the write deadline's changes: before each write (put),
	// by abandon, and once by the handler as it returns (handlerEnd);
	// none may come after the handler returned, when the connection may
	// already serve another request.
	dmu         sync.Mutex
	stall       time.Duration
	broken      bool          // a write failed or was abandoned: nothing more goes out
	brokenCh    chan struct{} // closed when broken is set: the POST ends, its call is cancelled
	handlerDone bool
}

// writeChunk is the most one write may carry under one deadline.
const writeChunk = 256 << 10

func newStream(w http.ResponseWriter, r *http.Request, stall time.Duration, modern bool) *stream {
	return &stream{w: w, rc: http.NewResponseController(w), r: r, stall: stall, modern: modern, done: make(chan struct{}), brokenCh: make(chan struct{})}
}

// breakLocked marks the stream broken; dmu is held.
func (s *stream) breakLocked() {
	if !s.broken {
		s.broken = true
		close(s.brokenCh)
	}
}

// put runs one write with a fresh deadline; false (and nothing written)
// once the stream is broken.
func (s *stream) put(write func() error) bool {
	s.dmu.Lock()
	if s.broken || s.handlerDone {
		s.dmu.Unlock()
		return false
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	s.dmu.Unlock()
	if err := write(); err != nil {
		s.dmu.Lock()
		s.breakLocked()
		s.dmu.Unlock()
		return false
	}
	return true
}

// send writes b in chunks, each with its own deadline.
func (s *stream) send(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		if !s.put(func() error { _, err := s.w.Write(b[:n]); return err }) {
			return false
		}
		b = b[n:]
	}
	return true
}

// abandon makes a write in progress fail now and drops the rest.
func (s *stream) abandon() {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.handlerDone || s.broken {
		return
	}
	s.breakLocked()
	_ = s.rc.SetWriteDeadline(time.Now())
}

// handlerEnd gives the flush net/http makes after the handler returns its
// own deadline (at once when the stream is broken): a deadline left from
// the last write would have passed during a long quiet call.
func (s *stream) handlerEnd() {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	d := time.Now().Add(s.stall)
	if s.broken {
		d = time.Now()
	}
	_ = s.rc.SetWriteDeadline(d)
	s.handlerDone = true
}

func (s *stream) accepts(typ string) bool {
	for _, a := range s.r.Header.Values("Accept") {
		if strings.Contains(a, typ) || strings.Contains(a, "*/*") {
			return true
		}
	}
	return false
}

func (s *stream) Notify(method string, params json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || !s.accepts("text/event-stream") {
		return // a JSON-only client cannot receive notifications
	}
	s.startSSE()
	s.event(wire.NotificationLine(method, params))
}

// Request sends a server-to-client request related to this POST's request
// on its SSE stream (started now if it is not yet): "The server MAY send
// JSON-RPC requests and notifications before sending the JSON-RPC
// response. These messages SHOULD relate to the originating client
// request." False when the client cannot get it.
func (s *stream) Request(id json.RawMessage, method string, params json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || !s.accepts("text/event-stream") {
		return false
	}
	s.startSSE()
	s.event(wire.RequestLine(id, method, params))
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return !s.broken
}

// Live reports whether the POST can still carry something to the client.
func (s *stream) Live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return !s.finished && !s.broken
}

// startSSE sends the headers of an SSE response once.
func (s *stream) startSSE() {
	if s.sse {
		return
	}
	s.sse = true
	s.sessionHeader()
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.Header().Set("Cache-Control", "no-cache")
	s.w.Header().Set("X-Accel-Buffering", "no")
	s.status = http.StatusOK
	s.w.WriteHeader(http.StatusOK)
}

func (s *stream) event(line []byte) {
	_ = s.send([]byte("event: message\ndata: ")) &&
		s.send(line[:len(line)-1]) && // without its newline
		s.send([]byte("\n\n")) &&
		s.put(s.rc.Flush)
}

func (s *stream) Respond(r transport.Response) {
	if s.beforeRespond != nil {
		s.beforeRespond()
	}
	s.end(func() {
		if s.sse {
			s.event(r.Line())
			return
		}
		s.sessionHeader()
		s.status = statusFor(r.Err, s.modern)
		s.w.Header().Set("Content-Type", "application/json")
		s.w.Header().Set("X-Accel-Buffering", "no") // as writeJSON
		s.w.WriteHeader(s.status)
		s.send(r.Line())
	})
}

// end writes the POST's last output once, then releases the handler.
func (s *stream) end(write func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	write()
	close(s.done)
}

// Finish ends a POST whose call was cancelled: no response is sent for
// its id, but the request must not stay open until the client gives up. An
// SSE stream already started just ends; otherwise an empty one is sent.
func (s *stream) Finish() { s.end(s.startSSE) }

func (s *stream) sessionHeader() {
	if s.sessionID != "" && !s.modern {
		s.w.Header().Set("Mcp-Session-Id", s.sessionID)
	}
}

// statusFor maps a response to its HTTP status: the 2026 table (400 for
// malformed requests and the -3202x errors, 404 for an unknown method);
// legacy errors other than parse and invalid-request travel in a 200.
func statusFor(e *wire.Error, modern bool) int {
	if e == nil {
		return http.StatusOK
	}
	switch e.Code {
	case wire.CodeParse, wire.CodeInvalidRequest:
		return http.StatusBadRequest
	}
	if !modern {
		return http.StatusOK
	}
	switch e.Code {
	case wire.CodeInvalidParams, wire.CodeHeaderMismatch, wire.CodeMissingCapability, wire.CodeUnsupportedVersion:
		return http.StatusBadRequest
	case wire.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}

// headers are a 2026 request's headers, checked against its body.
type headers http.Header

// Check compares MCP-Protocol-Version with _meta's version, Mcp-Method
// with method, and Mcp-Name with params.name (params.uri for
// resources/read), in the 2026 SDK's order and with its texts. Values are
// trimmed (HTTP field values) and may be =?base64?…?= encoded.
func (hd headers) Check(msg *wire.Message, version string) string {
	const missing = "Missing required header: "
	mismatch := func(header, got, want string) string {
		return header + " header '" + got + "' does not match body value '" + want + "'"
	}
	if v, ok := hd.value("MCP-Protocol-Version"); !ok {
		return missing + "MCP-Protocol-Version"
	} else if v != version {
		return mismatch("MCP-Protocol-Version", hd.shown("MCP-Protocol-Version", v), version)
	}
	if m, ok := hd.value("Mcp-Method"); !ok {
		return missing + "Mcp-Method"
	} else if m != msg.Method {
		return mismatch("Mcp-Method", hd.shown("Mcp-Method", m), msg.Method)
	}
	switch msg.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		// The tasks extension (SEP-2663) names the task in Mcp-Name; a
		// value that differs from params.taskId is refused.
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		if n, ok := hd.value("Mcp-Name"); ok && n != p.TaskID {
			return mismatch("Mcp-Name", hd.shown("Mcp-Name", n), p.TaskID)
		}
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
		if n, ok := hd.value("Mcp-Name"); !ok {
			return missing + "Mcp-Name"
		} else if n != want {
			return mismatch("Mcp-Name", hd.shown("Mcp-Name", n), want)
		}
	}
	return ""
}

func (hd headers) Param(name string) (string, bool) { return hd.value("Mcp-Param-" + name) }

// shown is a header's value as a message names it: decoded, or as sent
// when it does not decode.
func (hd headers) shown(k, decoded string) string {
	if decoded == undecodable {
		return strings.TrimSpace(hd[http.CanonicalHeaderKey(k)][0])
	}
	return decoded
}

// undecodable is the value of a header wrapped as =?base64?…?= whose
// inside is not strict base64: it matches nothing.
const undecodable = "\x00invalid"

// value is a header's value, trimmed and decoded from =?base64?…?= (a
// value so wrapped that does not decode strictly is undecodable).
func (hd headers) value(k string) (string, bool) {
	vs, ok := hd[http.CanonicalHeaderKey(k)]
	if !ok || len(vs) == 0 {
		return "", false
	}
	v := strings.TrimSpace(vs[0])
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			b, err := base64.StdEncoding.Strict().DecodeString(inner)
			if err != nil {
				return undecodable, true
			}
			return string(b), true
		}
	}
	return v, true
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

func (h *Handler) hostAllowed(host string) bool {
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

func (h *Handler) originAllowed(origin string) bool {
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
