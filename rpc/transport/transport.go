package transport

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Connection is one client's stream of requests: the stdio pipe, an HTTP
// session, or a single stateless HTTP request.
type Connection interface {
	// Read returns the next request; io.EOF when the client is done.
	// Framing and gate errors are answered by the transport itself.
	Read() (*Request, error)
	// Notify sends a notification that belongs to no request (such as
	// notifications/tools/list_changed); false when this connection has
	// no way to carry one.
	Notify(method string, params json.RawMessage) bool
	// Session is the connection's legacy-era state; nil when stateless.
	Session() *Session
	// Abandon gives up on output the client has not taken: writes waiting
	// or in progress return at once and later ones are dropped. The server
	// calls it at shutdown, once the answers being written had their time,
	// so a client that stopped reading cannot hold the daemon. Idempotent.
	Abandon()
}

// Request is one decoded message with what its transport knows about it.
type Request struct {
	Msg  *wire.Message
	Meta Meta
	Era  Era
	// Session is the legacy-era state the request runs in (nil for a
	// 2026-07-28 request, which is stateless).
	Session *Session
	// Headers are the HTTP request's headers to check against the body;
	// nil on stdio.
	Headers Headers
	// Gone is closed when the client went away before its answer (an
	// HTTP client that dropped the connection); nil when it cannot.
	Gone <-chan struct{}
	// Out receives the request's notifications and then its response.
	Out Stream
}

// Headers are the 2026-07-28 HTTP header checks.
type Headers interface {
	// Check compares MCP-Protocol-Version, Mcp-Method and Mcp-Name with
	// the body and says why they differ ("" when they match).
	Check(msg *wire.Message, version string) string
	// Param is the Mcp-Param-<name> header, trimmed and decoded.
	Param(name string) (string, bool)
}

// Stream is where one request's output goes: notifications related to it
// first, then at most one Response.
type Stream interface {
	Notify(method string, params json.RawMessage)
	Respond(Response)
	// Finish ends a request that gets no response (a cancelled call).
	Finish()
}

// Requester is a Stream that can also carry requests from the server to
// the client that relate to its request (elicitation, sampling, roots
// while a tool runs): stdio writes them on the connection, Streamable
// HTTP on the POST's SSE stream. Request reports false when it cannot
// (the stream is finished, or the client does not accept SSE). Live says
// whether the stream can still carry anything to the client (an HTTP
// POST the client gave up on cannot).
type Requester interface {
	Request(id json.RawMessage, method string, params json.RawMessage) bool
	Live() bool
}

// RequesterOf finds the Requester under s, through the wrappers that embed
// a Stream and give it back with Unwrap; false when there is none.
func RequesterOf(s Stream) (Requester, bool) {
	for s != nil {
		if r, ok := s.(Requester); ok {
			return r, true
		}
		u, ok := s.(interface{ Unwrap() Stream })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	return nil, false
}

// Response is the answer to one request: a result or an error.
type Response struct {
	ID     json.RawMessage
	Result json.RawMessage // nil when Err is set
	Err    *wire.Error
	// Body, when set instead of Result, is a result the server built as
	// valid JSON, rendered straight into the line rather than re-printed
	// (a tool result: the line is its only copy).
	Body wire.Body
	// Raw, when set, is a whole line built elsewhere (the array that
	// answers a JSON-RPC batch, batch.go); Line returns it as it is.
	Raw []byte
}

// Line renders the response as one JSON-RPC line.
func (r Response) Line() []byte {
	switch {
	case r.Raw != nil:
		return r.Raw
	case r.Err != nil:
		return wire.ErrorLine(r.ID, r.Err.Code, r.Err.Message, r.Err.Data)
	case r.Body != nil:
		return wire.ResultLineBody(r.ID, r.Body)
	}
	return wire.ResultLine(r.ID, r.Result)
}

// Session is the state a legacy-era connection builds up: the version
// initialize negotiated and the level logging/setLevel chose. On stdio
// there is one per process; on HTTP one per Mcp-Session-Id.
type Session struct {
	mu       sync.Mutex
	id       string // the Mcp-Session-Id; "" on stdio and without one
	version  string
	logLevel int             // index into LogLevels; -1: not set
	caps     json.RawMessage // the client's capabilities from initialize
	// standalone: made for one request of a client that keeps no session
	// (HTTP without Mcp-Session-Id); see Standalone.
	standalone bool
	// subs are the URIs of resources/subscribe, kept here (as well as in
	// the server's per-connection table) only so that a transport that
	// shares sessions between replicas can carry them; see Record.
	subs []string
	// rev counts the changes a Record would show; Apply does not count,
	// so a transport writes back only what was changed here.
	rev      uint64
	onRecord func([]string) // OnApply's hook
}

// NewStandaloneSession is the session of one request of a client that
// keeps none: all such requests share what belongs to no session (a
// 2025-11-25 task created without a session is reachable by its id from
// any of them, and listed by none).
func NewStandaloneSession() *Session { return &Session{logLevel: -1, standalone: true} }

// Standalone reports whether s was made for one sessionless request.
func (s *Session) Standalone() bool { return s != nil && s.standalone }

// SetClientCaps records initialize's params.capabilities.
func (s *Session) SetClientCaps(caps json.RawMessage) {
	s.mu.Lock()
	s.caps = caps
	s.rev++
	s.mu.Unlock()
}

// ClientCaps are the capabilities the client declared in initialize; nil
// before initialize (or in a request that has no session).
func (s *Session) ClientCaps() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// NewSession is a session before initialize.
func NewSession() *Session { return &Session{logLevel: -1} }

// NewHTTPSession is a session before initialize named id (its
// Mcp-Session-Id).
func NewHTTPSession(id string) *Session { return &Session{id: id, logLevel: -1} }

// ID is the session's Mcp-Session-Id: "" on stdio and for a request
// without one. It never changes.
func (s *Session) ID() string {
	if s == nil {
		return ""
	}
	return s.id
}

// SetVersion records the negotiated version.
func (s *Session) SetVersion(v string) {
	s.mu.Lock()
	s.version = v
	s.rev++
	s.mu.Unlock()
}

// Version is the negotiated version, "" before initialize.
func (s *Session) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// SetLevel records logging/setLevel's choice (a LevelRank).
func (s *Session) SetLevel(rank int) {
	s.mu.Lock()
	s.logLevel = rank
	s.rev++
	s.mu.Unlock()
}

// SetSubscriptions records the URIs the client is subscribed to now.
func (s *Session) SetSubscriptions(uris []string) {
	s.mu.Lock()
	s.subs = append([]string(nil), uris...)
	s.rev++
	s.mu.Unlock()
}

// Record is what a session is, as replicas sharing sessions store it:
// everything another replica needs to serve the session's next request.
type Record struct {
	Version string          `json:"version"`
	Caps    json.RawMessage `json:"capabilities,omitempty"`
	Level   int             `json:"logLevel"` // a LevelRank; -1: never set
	Subs    []string        `json:"subscriptions,omitempty"`
}

// Record returns the session as a Record, and the revision it shows: a
// transport that stored revision r need not store it again until
// Revision moves past r.
func (s *Session) Record() (Record, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Record{Version: s.version, Caps: s.caps, Level: s.logLevel, Subs: append([]string(nil), s.subs...)}, s.rev
}

// Revision counts the changes made through the setters.
func (s *Session) Revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// Apply makes the session what rec says (another replica changed it),
// without counting a change, and tells OnApply's hook the subscriptions.
func (s *Session) Apply(rec Record) {
	s.mu.Lock()
	s.version, s.caps, s.logLevel = rec.Version, rec.Caps, rec.Level
	s.subs = append([]string(nil), rec.Subs...)
	fn, subs := s.onRecord, s.subs
	s.mu.Unlock()
	if fn != nil {
		fn(subs)
	}
}

// OnApply gives fn the subscriptions every time Apply changes the
// session, and once now when there are some already: the server keeps its
// own table of them (what it notifies), which must follow.
func (s *Session) OnApply(fn func(subs []string)) {
	s.mu.Lock()
	s.onRecord = fn
	subs := s.subs
	s.mu.Unlock()
	if len(subs) > 0 {
		fn(subs)
	}
}

// Threshold is the lowest level forwarded: what logging/setLevel chose,
// or "info" when the server declared the logging capability and the client
// never chose; -1 forwards nothing.
func (s *Session) Threshold(declared bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logLevel >= 0 {
		return s.logLevel
	}
	if declared {
		return LevelRank("info")
	}
	return -1
}

// LogLevels are the levels of notifications/message, in syslog order.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LevelRank is a level's index in LogLevels (case-insensitive), -1 when
// it is none.
func LevelRank(l string) int {
	for i, v := range LogLevels {
		if v == strings.ToLower(l) {
			return i
		}
	}
	return -1
}
