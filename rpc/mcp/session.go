package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"go.uber.org/zap"
)

// session is the server's side of one Connection: what is per
// connection — its in-flight table and subscriptions, the requests it
// runs, the transport's session (era, negotiated version, log level,
// client capabilities) — and the methods that answer its requests. The
// Server keeps only what every session shares.
type session struct {
	srv *Server
	t   transport.Connection
	// mu is the server's in-flight lock (admission.go): a connection's
	// table and the server's counts change together, under one lock.
	mu    *sync.Mutex
	st    connState
	calls sync.WaitGroup // this connection's requests still running
}

// connState is everything about a connection that changes, kept together
// and changed only through update (or, with the server's counts,
// Server.change).
type connState struct {
	inflight map[string]context.CancelCauseFunc // by idKey
	subs     map[string]bool                    // URIs of resources/subscribe (resources.go)
}

// update changes the connection's state under the in-flight lock.
func (c *session) update(f func(*connState)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.st)
}

// followRecord keeps the connection's subscriptions what its transport's
// session says once another replica changed them (transport.Session.Apply:
// HTTP sessions shared through a --state store). Without a shared store
// nothing ever calls Apply, and the hook is never run.
func (c *session) followRecord() {
	ss := c.t.Session()
	if ss == nil || ss.ID() == "" {
		return
	}
	ss.OnApply(func(uris []string) {
		c.update(func(st *connState) {
			st.subs = make(map[string]bool, len(uris))
			for _, u := range uris {
				st.subs[u] = true
			}
		})
	})
}

// shareSubscriptions copies the connection's subscriptions into its
// HTTP session, which a transport sharing sessions stores for the other
// replicas (the one holding the session's GET stream notifies them).
func (c *session) shareSubscriptions(ss *transport.Session) {
	if ss == nil || ss.ID() == "" {
		return
	}
	var uris []string
	c.update(func(st *connState) {
		for u := range st.subs {
			uris = append(uris, u)
		}
	})
	sort.Strings(uris)
	ss.SetSubscriptions(uris)
}

// readLoop reads the connection's requests in order and hands each to
// handle; it returns at the end of the input.
func (c *session) readLoop() error {
	s := c.srv
	for {
		req, err := c.t.Read()
		if errors.Is(err, io.EOF) {
			c.logEOF()
			return nil
		}
		if err != nil {
			return err
		}
		if s.clientResponse(req) {
			continue
		}
		if req.Msg.HasID && s.Stopping() {
			// Nothing new starts during the drain, but every request is
			// answered (HTTP answers 503 before it gets here).
			req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
			continue
		}
		c.handle(req)
	}
}

// logEOF says, in the SDK's sentence, that input ended while calls were
// still running: they finish and are answered before the server exits.
func (c *session) logEOF() {
	s := c.srv
	var n int
	s.change(func(*flightState) { n = len(c.st.inflight) })
	if n > 0 {
		s.log.Info("Client closed stdin during an in-flight call; shutting down", zap.Int("in_flight", n))
	}
}

// idKey makes JSON ids comparable as values: 1, 1.0 and 10e-1 are the same
// integer, "1" is a string and never equals 1. It is linear in the id's
// length (a client may send a megabyte of digits): an integer's key is
// its significant digits and its power of ten, never its expansion.
func idKey(raw json.RawMessage) (string, bool) {
	switch wire.FirstByte(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		lit := string(wire.Compact(raw))
		var n json.Number
		if json.Unmarshal([]byte(lit), &n) != nil {
			return "", false
		}
		neg, coef, exp := jq.Decimal(lit)
		trimmed := strings.TrimRight(coef, "0")
		exp += int64(len(coef) - len(trimmed))
		if trimmed == "" {
			return "n:0", true // -0 and 0e5 are 0
		}
		if exp < 0 {
			return "", false // a fraction is not an id the gates let through
		}
		sign := ""
		if neg {
			sign = "-"
		}
		return "n:" + sign + trimmed + "e" + strconv.FormatInt(exp, 10), true
	}
	return "", false
}
