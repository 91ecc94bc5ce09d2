package rpc

import (
	"encoding/json"
	"net/http"
	"sync"
)

// session is the state one legacy-era connection builds up: the version
// initialize negotiated and the level logging/setLevel chose. On stdio
// there is one per process; on HTTP one per Mcp-Session-Id. Modern
// (2026-07-28) requests never read it: they are stateless.
type session struct {
	mu       sync.Mutex
	version  string
	logLevel int // index into logLevels; -1: not set
	logging  bool
}

func newSession() *session { return &session{logLevel: -1} }

func (ss *session) setVersion(v string) {
	ss.mu.Lock()
	ss.version = v
	ss.mu.Unlock()
}

func (ss *session) Version() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

func (ss *session) setLevel(rank int) {
	ss.mu.Lock()
	ss.logLevel = rank
	ss.mu.Unlock()
}

// threshold is the lowest level forwarded: what logging/setLevel chose,
// or "info" when the server declared the logging capability and the client
// never chose; -1 forwards nothing.
func (ss *session) threshold(declared bool) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.logLevel >= 0 {
		return ss.logLevel
	}
	if declared {
		return levelRank("info")
	}
	return -1
}

// transportHint is what a transport knows about a request beyond its body.
type transportHint struct {
	// versionHeader is the MCP-Protocol-Version header (HTTP), "" on stdio.
	versionHeader string
	// checkHeaders compares the 2026 headers with the body; it returns
	// why they mismatch, or "". nil on stdio.
	checkHeaders func(msg *Message, metaVersion string) string
	// session is the legacy connection state.
	session *session
	// done is closed when the client went away (HTTP); nil on stdio.
	done <-chan struct{}
	// header is the HTTP request's header (nil on stdio), for the checks
	// that need the tool's schema (Mcp-Param-*).
	header http.Header
	// scope keeps request ids of different HTTP sessions apart in the
	// in-flight table ("" on stdio).
	scope string
}

// declaresLogging reports whether config.json's capabilities name logging.
func (c *config) declaresLogging() bool {
	raw, ok := c.fields["capabilities"]
	if !ok {
		return false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil {
		return false
	}
	_, ok = caps["logging"]
	return ok
}

// declaresListChanged reports whether config.json advertises
// capabilities.tools.listChanged: true. mcp-bashd reloads either way; it
// tells clients only when the server says it will (and the SDK's
// initialize bytes stay what they were for servers that do not).
func (c *config) declaresListChanged() bool {
	var caps struct {
		Tools struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	}
	raw, ok := c.fields["capabilities"]
	return ok && json.Unmarshal(raw, &caps) == nil && caps.Tools.ListChanged
}
