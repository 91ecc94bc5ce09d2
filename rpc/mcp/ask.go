package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// A tool's mcp_ask helpers (supervisor/ask.go) become, in the session eras
// (2024-11-05 … 2025-11-25), requests the server sends the client while
// the call runs: elicitation/create, sampling/createMessage, roots/list.
// Each goes out on the call's own stream (stdio: the connection; HTTP: the
// POST's SSE stream), with an id of the server's own ("mcp-bashd-" and 128
// random bits: a string no answer to anything else carries, and one no
// other client can guess to answer a question it was never asked — the
// table is the server's, not a session's), and waits in the server's
// pending table until the client's response comes back — on any
// connection: an HTTP client POSTs it on its own. The call's end (cancel,
// timeout, exit) ends the wait; an answer that comes later finds nothing
// pending and is dropped (logged at debug).

// With a shared --state store the client's response may reach another
// replica than the one that asked (a balancer without affinity): the
// replica it reaches, finding nothing pending, publishes it on
// asksChannel, and every replica delivers it if it is the one waiting
// (the id is 128 random bits: only one is). One channel for all rather
// than one per replica: an answer costs one PUBLISH, and no replica has
// to know which replica asked. A replica subscribes before it first asks
// (ensureShared), so no answer to its question can come before it
// listens; without a shared store nothing is subscribed and an unmatched
// response is dropped as before.

// asksChannel carries client responses between replicas.
const asksChannel = "mcp-bashd:asks/answers"

// pendingAsks are the server's requests to clients still waiting.
type pendingAsks struct {
	mu      sync.Mutex
	waiting map[string]chan clientAnswer // by idKey of the id sent

	subMu      sync.Mutex
	subscribed bool // to asksChannel (a shared store only)
}

// sharedAnswer is a client response as asksChannel carries it.
type sharedAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// ensureShared subscribes this replica to the answers other replicas
// receive, once; a store that cannot be reached now is tried again at the
// next ask (meanwhile only answers that reach this replica are matched).
func (s *Server) ensureShared() {
	store := s.shared()
	if store == nil {
		return
	}
	p := &s.asks
	p.subMu.Lock()
	defer p.subMu.Unlock()
	if p.subscribed {
		return
	}
	// The subscription lives as long as the server (its base context).
	err := store.Subscribe(s.base, asksChannel, func(msg []byte) {
		var a sharedAnswer
		if json.Unmarshal(msg, &a) != nil {
			return
		}
		if key, ok := idKey(a.ID); ok && p.deliver(key, clientAnswer{result: a.Result, err: a.Error}) {
			s.log.Debug("client response delivered from another replica", zap.ByteString("id", a.ID))
		}
	})
	if err != nil {
		s.log.Warn("state store: not subscribed to the answers other replicas receive; only answers reaching this replica are matched", zap.Error(err))
		return
	}
	p.subscribed = true
}

// clientAnswer is a client's response: result or error, as written.
type clientAnswer struct {
	result, err json.RawMessage
}

// add reserves a fresh id and the channel its answer arrives on.
func (p *pendingAsks) add() (json.RawMessage, string, chan clientAnswer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[string]chan clientAnswer{}
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on Linux
	id := wire.Quote(askIDPrefix + hex.EncodeToString(b[:]))
	key, _ := idKey(id)
	ch := make(chan clientAnswer, 1)
	p.waiting[key] = ch
	return id, key, ch
}

func (p *pendingAsks) drop(key string) {
	p.mu.Lock()
	delete(p.waiting, key)
	p.mu.Unlock()
}

// deliver hands a response to its waiter; false when none waits.
func (p *pendingAsks) deliver(key string, a clientAnswer) bool {
	p.mu.Lock()
	ch, ok := p.waiting[key]
	delete(p.waiting, key)
	p.mu.Unlock()
	if ok {
		ch <- a // buffered: one answer per id
	}
	return ok
}

// clientResponse routes a response a client sent; true when req was one.
func (s *Server) clientResponse(req *transport.Request) bool {
	if req == nil || req.Msg == nil || !req.Msg.IsResponse {
		return false
	}
	key, ok := idKey(req.Msg.ID)
	if ok && s.asks.deliver(key, clientAnswer{result: req.Msg.Result, err: req.Msg.Error}) {
		return true
	}
	if store := s.shared(); ok && store != nil && strings.HasPrefix(key, "s:"+askIDPrefix) {
		// Another replica may have asked: it delivers it (asksChannel).
		ctx, cancel := context.WithTimeout(s.base, 5*time.Second)
		defer cancel()
		msg := wire.Marshal(sharedAnswer{ID: req.Msg.ID, Result: req.Msg.Result, Error: req.Msg.Error})
		if err := store.Publish(ctx, asksChannel, msg); err != nil {
			s.log.Warn("client response not handed to the other replicas: state store unavailable; the tool that asked waits on", zap.ByteString("id", req.Msg.ID), zap.Error(err))
		} else {
			s.log.Debug("client response handed to the other replicas", zap.ByteString("id", req.Msg.ID))
		}
		return true
	}
	s.log.Debug("response to no pending request dropped", zap.ByteString("id", req.Msg.ID))
	return true
}

// askIDPrefix starts every id of the server's requests to clients.
const askIDPrefix = "mcp-bashd-"

// callAsk is what a tool call's helpers ask through, in this order: a
// task's own Ask (taskAsk), a 2026-07-28 request's rounds (mrtr.go), the
// session's client (askFor).
func (s *Server) callAsk(tc toolCall) func(context.Context, []supervisor.AskItem) ([]json.RawMessage, error) {
	switch {
	case tc.ask != nil:
		return tc.ask
	case tc.mrtr != nil:
		return tc.mrtr.Ask
	}
	return s.askFor(tc)
}

// askFor is the Ask of a tools/call: the session eras ask over the
// connection; a 2026-07-28 request cannot ask this way.
func (s *Server) askFor(tc toolCall) func(context.Context, []supervisor.AskItem) ([]json.RawMessage, error) {
	if tc.req.Era == transport.Modern {
		return func(context.Context, []supervisor.AskItem) ([]json.RawMessage, error) {
			return nil, errors.New("asking the client is not in this era (" + transport.ModernVersion + ")")
		}
	}
	return func(ctx context.Context, items []supervisor.AskItem) ([]json.RawMessage, error) {
		return s.askSession(ctx, tc.req, tc.conn, items)
	}
}

// askSession sends items to the client together and waits for every answer.
func (s *Server) askSession(ctx context.Context, req *transport.Request, c *session, items []supervisor.AskItem) ([]json.RawMessage, error) {
	var caps json.RawMessage
	version := ""
	if req.Session != nil {
		caps, version = req.Session.ClientCaps(), req.Session.Version()
	}
	for _, it := range items {
		if err := canAsk(caps, version, it); err != nil {
			return nil, err
		}
	}
	out, ok := transport.RequesterOf(req.Out)
	if !ok {
		return nil, errors.New("this transport cannot carry requests to the client")
	}
	s.ensureShared() // the answer may reach another replica

	type sent struct {
		id  json.RawMessage
		key string
		ch  chan clientAnswer
	}
	waits := make([]sent, len(items))
	defer func() {
		for _, w := range waits {
			if w.key != "" {
				s.asks.drop(w.key)
			}
		}
	}()
	for i, it := range items {
		id, key, ch := s.asks.add()
		waits[i] = sent{id, key, ch}
		if !out.Request(id, it.Method, it.Params) {
			return nil, errors.New("the client cannot receive requests on this call's stream (on HTTP it must accept text/event-stream)")
		}
		s.log.Debug("asked the client", zap.String("method", it.Method), zap.ByteString("id", id), zap.ByteString("call_id", req.Msg.ID))
	}
	results := make([]json.RawMessage, len(items))
	for i, w := range waits {
		select {
		case a := <-w.ch:
			res, err := answerResult(items[i].Method, a)
			if err != nil {
				return nil, err
			}
			results[i] = res
		case <-ctx.Done():
			// The client may stop working on what nobody waits for: on
			// the call's stream and, over HTTP, on the session's GET
			// stream too when it has one — a client that cancelled its
			// call may be closing the POST's stream as this is written
			// there, and a second notice of one cancellation is ignored.
			live, http := out.Live(), req.Gone != nil
			for _, w := range waits[i:] {
				params := object(field{"requestId", w.id}, field{"reason", wire.Quote("the tool call ended")})
				if live {
					req.Out.Notify("notifications/cancelled", params)
				}
				if c != nil && (!live || http) {
					c.t.Notify("notifications/cancelled", params)
				}
			}
			return nil, ctx.Err()
		}
	}
	return results, nil
}

// answerResult is a response's result, or its error as the helper's.
func answerResult(method string, a clientAnswer) (json.RawMessage, error) {
	if a.err != nil {
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(a.err, &e)
		return nil, fmt.Errorf("the client answered %s with an error: %s (code %d)", method, e.Message, e.Code)
	}
	if wire.FirstByte(a.result) != '{' {
		return nil, fmt.Errorf("the client answered %s with a result that is not an object", method)
	}
	return a.result, nil
}

// What each method needs: the client capability (and its member, for the
// 2025-11-25 sub-features) and the first revision that has the method.
var askNeeds = map[string]struct{ capability, since string }{
	"elicitation/create":     {"elicitation", "2025-06-18"},
	"sampling/createMessage": {"sampling", "2024-11-05"},
	"roots/list":             {"roots", "2024-11-05"},
}

// canAsk checks a request against the session: "Servers MUST NOT send
// requests for features the client did not declare" — a method of a
// later revision than the session's, or a capability initialize did not
// declare, fails the helper instead.
func canAsk(caps json.RawMessage, version string, it supervisor.AskItem) error {
	need, ok := askNeeds[it.Method]
	if !ok {
		return nil // ping, or a method this server knows nothing of
	}
	if version != "" && version < need.since {
		return fmt.Errorf("%s needs protocol %s or later; this session speaks %s", it.Method, need.since, version)
	}
	var declared map[string]json.RawMessage
	_ = json.Unmarshal(caps, &declared)
	c, ok := declared[need.capability]
	if !ok || wire.FirstByte(c) != '{' {
		return fmt.Errorf("the client did not declare the %s capability (in initialize), so it cannot be asked %s", need.capability, it.Method)
	}
	var sub map[string]json.RawMessage
	_ = json.Unmarshal(c, &sub)
	var p struct {
		Mode  string          `json:"mode"`
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(it.Params, &p)
	switch {
	case it.Method == "elicitation/create" && p.Mode == "url" && sub["url"] == nil:
		return errors.New("the client did not declare URL-mode elicitation (capabilities.elicitation.url)")
	case it.Method == "sampling/createMessage" && len(p.Tools) > 0 && sub["tools"] == nil:
		return errors.New("the client did not declare tool use in sampling (capabilities.sampling.tools)")
	}
	return nil
}
