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
}

func newSessionConn(id string) *sessionConn {
	return &sessionConn{id: id, session: transport.NewSession(), reqs: make(chan *transport.Request, 16), ended: make(chan struct{})}
}

// deliver queues a request for the session's reader; false when the
// session ended or the client left first.
func (c *sessionConn) deliver(req *transport.Request, gone <-chan struct{}) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.mu.Unlock()
	select {
	case c.reqs <- req:
		return true
	case <-c.ended:
		return false
	case <-gone:
		return false
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

// Notify: an HTTP session has no stream for unsolicited messages.
func (c *sessionConn) Notify(string, json.RawMessage) bool { return false }
func (c *sessionConn) Session() *transport.Session         { return c.session }

// oneConn is a stateless request: a Connection that yields it and ends.
type oneConn struct {
	req  *transport.Request
	read bool
}

func (c *oneConn) Read() (*transport.Request, error) {
	if c.read {
		return nil, io.EOF
	}
	c.read = true
	return c.req, nil
}
func (c *oneConn) Notify(string, json.RawMessage) bool { return false }
func (c *oneConn) Session() *transport.Session         { return c.req.Session }

// stream is one POST's output: JSON when the response comes first, SSE
// once a notification must go out before it.
type stream struct {
	w         http.ResponseWriter
	r         *http.Request
	modern    bool
	sessionID string
	mu        sync.Mutex
	sse       bool
	finished  bool
	status    int
	done      chan struct{}
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
	io.WriteString(s.w, "event: message\ndata: ")
	s.w.Write(line[:len(line)-1]) // without its newline
	io.WriteString(s.w, "\n\n")
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *stream) Respond(r transport.Response) {
	s.end(func() {
		if s.sse {
			s.event(r.Line())
			return
		}
		s.sessionHeader()
		s.status = statusFor(r.Err, s.modern)
		s.w.Header().Set("Content-Type", "application/json")
		s.w.WriteHeader(s.status)
		s.w.Write(r.Line())
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
// resources/read). Values are trimmed (HTTP field values) and may be
// =?base64?…?= encoded.
func (hd headers) Check(msg *wire.Message, version string) string {
	if v, ok := hd.value("MCP-Protocol-Version"); !ok {
		return "missing MCP-Protocol-Version header"
	} else if v != version {
		return "MCP-Protocol-Version header " + v + " does not match _meta version " + version
	}
	if m, ok := hd.value("Mcp-Method"); !ok {
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
		if n, ok := hd.value("Mcp-Name"); !ok {
			return "missing Mcp-Name header"
		} else if n != want {
			return "Mcp-Name header " + n + " does not match " + want
		}
	}
	return ""
}

func (hd headers) Param(name string) (string, bool) { return hd.value("Mcp-Param-" + name) }

// value is a header's value, trimmed and decoded from =?base64?…?= (a
// value so wrapped that does not decode strictly is "\x00invalid", which
// matches nothing).
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
				return "\x00invalid", true
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
