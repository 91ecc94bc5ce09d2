package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Change notifications reach clients two ways:
//
//   - the session eras: notifications/{tools,prompts,resources}/list_changed
//     to every initialized connection when the capability says listChanged,
//     and notifications/resources/updated to the connections whose client
//     sent resources/subscribe for the URI (connState.subs);
//   - 2026-07-28: only on a subscriptions/listen stream the client opened,
//     filtered by what it asked for, each tagged with the stream's
//     subscriptionId ("basic/patterns/subscriptions": the server MUST
//     send notifications/subscriptions/acknowledged first, and MUST NOT
//     send notification types the client has not explicitly requested).
//
// A listen stream ends when the client cancels it (notifications/cancelled
// on stdio, closing the SSE stream on HTTP), or at shutdown, when the
// server tears it down: on HTTP with a SubscriptionsListenResult, on stdio
// with notifications/cancelled naming it ("the server also sends this
// notification, solely to terminate a subscriptions/listen stream").

// metaSubscription is the _meta key naming a listen stream.
const metaSubscription = "io.modelcontextprotocol/subscriptionId"

// listeners are the open listen streams of every connection.
type listeners struct {
	mu   sync.Mutex
	open map[*listener]bool
}

// listener is one open subscriptions/listen stream.
type listener struct {
	c   *session
	req *transport.Request
	id  json.RawMessage
	// What the client asked for and the server agreed to.
	tools, prompts, resources bool
	uris                      []string

	mu    sync.Mutex // orders writes to req.Out with ending it
	ended bool
	done  chan struct{} // closed when ended
}

// filter is a SubscriptionFilter, as asked.
type filter struct {
	Tools     bool     `json:"toolsListChanged"`
	Prompts   bool     `json:"promptsListChanged"`
	Resources bool     `json:"resourcesListChanged"`
	URIs      []string `json:"resourceSubscriptions"`
}

func decodeListen(r *request) (filter, *wire.Error) {
	var p struct {
		Notifications json.RawMessage `json:"notifications"`
	}
	var asked filter
	_ = json.Unmarshal(r.Msg.Params, &p)
	if wire.FirstByte(p.Notifications) != '{' || json.Unmarshal(p.Notifications, &asked) != nil {
		return asked, wire.InvalidParams("notifications is required and must be a SubscriptionFilter object")
	}
	return asked, nil
}

// listen answers a 2026-07-28 subscriptions/listen: it acknowledges the
// part of the filter the server honors and keeps the stream open.
func (c *session) listen(r *request, asked filter) {
	s, req, cat, id := c.srv, r.Request, r.cat, r.Msg.ID
	l := &listener{c: c, req: req, id: id, done: make(chan struct{}),
		tools:     asked.Tools && cat.ListChanged("tools"),
		prompts:   asked.Prompts && cat.Offers("prompts") && cat.ListChanged("prompts"),
		resources: asked.Resources && cat.Offers("resources") && cat.ListChanged("resources"),
	}
	if cat.Offers("resources") && cat.Subscribes() {
		l.uris = asked.URIs
	}
	key, _ := idKey(id)
	var refused *wire.Error
	c.update(func(st *connState) {
		if st.inflight[key] != nil {
			refused = wire.InvalidRequest("id " + string(id) + " is already in flight")
			return
		}
		// notifications/cancelled for the listen request ends it.
		st.inflight[key] = func(error) { s.endListener(l, false) }
	})
	if refused != nil {
		req.Out.Respond(transport.Response{ID: id, Err: refused})
		return
	}
	agreed := filter{Tools: l.tools, Prompts: l.prompts, Resources: l.resources, URIs: l.uris}
	ack := object(field{"notifications", agreedJSON(agreed)}, field{"_meta", object(field{metaSubscription, id})})
	s.subs.mu.Lock()
	if s.Stopping() {
		s.subs.mu.Unlock()
		c.update(func(st *connState) { delete(st.inflight, key) })
		req.Out.Respond(transport.Response{ID: id, Err: errClosing()})
		return
	}
	if s.subs.open == nil {
		s.subs.open = map[*listener]bool{}
	}
	s.subs.open[l] = true
	// The acknowledgment goes out before the listener can be told
	// anything: it is the stream's first message.
	l.mu.Lock()
	s.subs.mu.Unlock()
	req.Out.Notify("notifications/subscriptions/acknowledged", ack)
	l.mu.Unlock()
	s.log.Info("subscription opened", zap.ByteString("subscription_id", id), zap.Bool("tools", l.tools),
		zap.Bool("prompts", l.prompts), zap.Bool("resources", l.resources), zap.Int("resource_subscriptions", len(l.uris)))
	go func() {
		// On HTTP the client ends the stream by going away; stdio has no
		// such signal (the stream is the connection), so nothing is
		// waited for but the end.
		select {
		case <-req.Gone:
			s.endListener(l, false)
		case <-l.done:
		}
		c.update(func(st *connState) { delete(st.inflight, key) })
	}()
}

// agreedJSON is the acknowledged filter: only the fields the server
// honors.
func agreedJSON(f filter) json.RawMessage {
	var fs []field
	if f.Tools {
		fs = append(fs, field{"toolsListChanged", json.RawMessage("true")})
	}
	if f.Prompts {
		fs = append(fs, field{"promptsListChanged", json.RawMessage("true")})
	}
	if f.Resources {
		fs = append(fs, field{"resourcesListChanged", json.RawMessage("true")})
	}
	if f.URIs != nil {
		fs = append(fs, field{"resourceSubscriptions", wire.Marshal(f.URIs)})
	}
	if len(fs) == 0 {
		return json.RawMessage("{}")
	}
	return object(fs...)
}

// endListener ends a listen stream once. teardown is the server ending it
// (shutdown), which says so; otherwise the client ended it and gets
// nothing more.
func (s *Server) endListener(l *listener, teardown bool) {
	s.subs.mu.Lock()
	delete(s.subs.open, l)
	s.subs.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.ended = true
	close(l.done)
	switch {
	case !teardown:
		l.req.Out.Finish()
	case l.req.Gone == nil:
		// stdio: the stream is the connection, which stays; the listen
		// request is ended by naming it in notifications/cancelled.
		l.req.Out.Notify("notifications/cancelled", object(field{"requestId", l.id}, field{"reason", wire.Quote("server shutting down")}))
		l.req.Out.Finish()
	default:
		info := s.src.Current().Config.ServerInfo()
		l.req.Out.Respond(transport.Response{ID: l.id, Result: object(field{"resultType", json.RawMessage(`"complete"`)},
			field{"_meta", object(field{metaSubscription, l.id}, field{transport.MetaInfo, info})})})
	}
	s.log.Info("subscription ended", zap.ByteString("subscription_id", l.id), zap.Bool("by_server", teardown))
}

// endListeners tears every listen stream down (shutdown).
func (s *Server) endListeners() {
	s.subs.mu.Lock()
	all := make([]*listener, 0, len(s.subs.open))
	for l := range s.subs.open {
		all = append(all, l)
	}
	s.subs.mu.Unlock()
	for _, l := range all {
		s.endListener(l, true)
	}
}

// endConnListeners ends the listen streams a connection carries itself
// (stdio, where the stream is the connection) once its client is done:
// the transport closing ends them. An HTTP stream ends with its own POST.
func (c *session) endConnListeners() {
	s := c.srv
	s.subs.mu.Lock()
	var mine []*listener
	for l := range s.subs.open {
		if l.c == c && l.req.Gone == nil {
			mine = append(mine, l)
		}
	}
	s.subs.mu.Unlock()
	for _, l := range mine {
		s.endListener(l, false)
	}
}

// tell sends a notification on every open listen stream for which want
// says yes, tagged with the stream's subscriptionId; it reports how many.
func (s *Server) tell(method string, params []field, want func(*listener) bool) int {
	s.subs.mu.Lock()
	var to []*listener
	for l := range s.subs.open {
		if want(l) {
			to = append(to, l)
		}
	}
	s.subs.mu.Unlock()
	n := 0
	for _, l := range to {
		l.mu.Lock()
		if !l.ended {
			l.req.Out.Notify(method, object(append(params, field{"_meta", object(field{metaSubscription, l.id})})...))
			n++
		}
		l.mu.Unlock()
	}
	return n
}

// NotifyListChanged tells clients that the list of kind ("tools",
// "prompts", "resources") changed: initialized session-era connections
// when the declared capability says listChanged, and every 2026 listen
// stream that asked for it. It reports whether anyone was told.
func (s *Server) NotifyListChanged(kind string) bool {
	method := "notifications/" + kind + "/list_changed"
	told := s.tell(method, nil, func(l *listener) bool {
		switch kind {
		case "tools":
			return l.tools
		case "prompts":
			return l.prompts
		}
		return l.resources
	}) > 0
	if !s.src.Declarations().ListChanged(kind) {
		return told
	}
	for _, c := range s.connections() {
		if ss := c.t.Session(); ss != nil && ss.Version() != "" {
			told = c.t.Notify(method, nil) || told
		}
	}
	return told
}

// ResourceUpdated tells the clients subscribed to uri (or to a resource it
// is part of) that it changed.
func (s *Server) ResourceUpdated(uri string) {
	params := []field{{"uri", wire.Quote(uri)}}
	n := s.tell("notifications/resources/updated", params, func(l *listener) bool {
		for _, sub := range l.uris {
			if covers(sub, uri) {
				return true
			}
		}
		return false
	})
	for _, c := range s.connections() {
		var want bool
		c.update(func(st *connState) {
			for sub := range st.subs {
				if covers(sub, uri) {
					want = true
					return
				}
			}
		})
		if want && c.t.Notify("notifications/resources/updated", object(params...)) {
			n++
		}
	}
	s.log.Info("resource updated", zap.String("uri", uri), zap.Int("subscribers_told", n))
}

// covers says whether a subscription to sub covers an update of uri: the
// same URI, or a sub-resource of it ("This might be a sub-resource of the
// one that the client actually subscribed to").
func covers(sub, uri string) bool {
	if uri == sub {
		return true
	}
	rest, ok := strings.CutPrefix(uri, sub)
	return ok && (strings.HasSuffix(sub, "/") || strings.HasPrefix(rest, "/"))
}

// ForwardResourceUpdates sends every URI the server's processes name with
// mcp_resource_updated (supervisor.ResourceUpdates) to its subscribers,
// until ctx ends or updates is closed.
func (s *Server) ForwardResourceUpdates(ctx context.Context, updates <-chan string) {
	drain(ctx, updates, s.ResourceUpdated)
}

// drain hands each URI of updates to deliver until ctx ends or updates is
// closed.
func drain(ctx context.Context, updates <-chan string, deliver func(uri string)) {
	for {
		select {
		case <-ctx.Done():
			return
		case uri, ok := <-updates:
			if !ok {
				return
			}
			deliver(uri)
		}
	}
}
