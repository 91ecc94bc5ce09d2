package mcp

import (
	"context"
	"encoding/json"
	"math/big"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// conn is the server's side of one Connection.
type conn struct {
	t     transport.Connection
	mu    sync.Mutex
	st    connState
	calls sync.WaitGroup // this connection's requests still running
}

// connState is everything about a connection that changes, kept together
// and changed only through update.
type connState struct {
	inflight map[string]context.CancelCauseFunc // by idKey
}

// update changes the connection's state under its one lock.
func (c *conn) update(f func(*connState)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.inflight == nil {
		c.st.inflight = map[string]context.CancelCauseFunc{}
	}
	f(&c.st)
}

// idKey makes JSON ids comparable as values: 1 and 1.0e0 are the same
// integer, "1" is a string and never equals 1.
func idKey(raw json.RawMessage) (string, bool) {
	switch wire.FirstByte(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		r, ok := new(big.Rat).SetString(string(raw))
		if !ok || !r.IsInt() {
			return "", false
		}
		return "n:" + r.Num().String(), true
	}
	return "", false
}
