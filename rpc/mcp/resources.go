package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Resource-not-found: the 2025 revisions' -32002, and -32602 from
// 2026-07-28 on (SEP-2164), each with the URI in data.
const codeResourceNotFound = -32002

func resourceNotFound(uri string, era transport.Era) *wire.Error {
	code := codeResourceNotFound
	if era == transport.Modern {
		code = wire.CodeInvalidParams
	}
	return &wire.Error{Code: code, Message: "Resource not found: " + uri, Data: object(field{"uri", wire.Quote(uri)})}
}

// readParams are resources/read's params: the URI, and a 2026 retry's
// answers.
type readParams struct {
	uri string
	rounds
}

func decodeRead(r *request) (readParams, *wire.Error) {
	var p struct {
		URI *string `json:"uri"`
		roundsJSON
	}
	if wire.FirstByte(r.Msg.Params) != '{' || json.Unmarshal(r.Msg.Params, &p) != nil || p.URI == nil {
		return readParams{}, wire.InvalidParams("uri is required and must be a string")
	}
	if strings.IndexByte(*p.URI, 0) >= 0 {
		return readParams{}, wire.InvalidParams("uri holds a NUL character")
	}
	return readParams{uri: *p.URI, rounds: p.rounds()}, nil
}

// decodeURI is params.uri of resources/subscribe and unsubscribe.
func decodeURI(r *request) (string, *wire.Error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if wire.FirstByte(r.Msg.Params) != '{' || json.Unmarshal(r.Msg.Params, &p) != nil || p.URI == nil {
		return "", wire.InvalidParams("uri is required and must be a string")
	}
	if strings.IndexByte(*p.URI, 0) >= 0 {
		return "", wire.InvalidParams("uri holds a NUL character")
	}
	return *p.URI, nil
}

// readResource answers resources/read: the URI names a static resource or
// matches a template, whose function resource_NAME runs with the URI as
// $1 and the template's variables as a JSON object in $2 ({} for a static
// resource).
func (c *session) readResource(r *request, p readParams) (inFlightRun, *wire.Error) {
	s, cat, id, uri := c.srv, r.cat, r.Msg.ID, p.uri
	t, ok := cat.Resources.Find(uri)
	if !ok {
		return nil, resourceNotFound(uri, r.Era)
	}
	fn := "resource_" + t.Name
	switch {
	case t.Problem != "":
		return nil, wire.Internal("Cannot read " + uri + ": " + t.Problem)
	case !s.opt.Snapshot().HasFunction(fn):
		return nil, wire.Internal("Cannot read " + uri + ": the server script defines no function " + fn)
	}
	vars := json.RawMessage(`{}`)
	if t.Vars != nil {
		vars = wire.Marshal(t.Vars)
	}
	cfg, cache := cat.Config, cat.DiscoverCache()
	f := funcCall{fn: fn, argv: []string{uri, string(vars)}, timeout: t.Timeout}
	if r.modern() {
		mc, e := newMRTR(s.states, p.rounds, "resources/read", uri, nil, r.caps)
		if e != nil {
			return nil, e
		}
		f.mrtr = mc
	}
	return c.funcRun(cfg, f, func(oc supervisor.Outcome) transport.Response {
		if res, ok := f.mrtr.answer(id, oc, cfg, "resource "+uri); ok {
			return res
		}
		for _, it := range oc.Items {
			if it.Kind == "notfound" && oc.End != supervisor.TimedOut && oc.End != supervisor.NotRun {
				return transport.Response{ID: id, Err: resourceNotFound(uri, r.Era)}
			}
		}
		if failed(oc) {
			return funcFailed(id, fn, oc)
		}
		if oc.Truncated > 0 {
			return transport.Response{ID: id, Err: wire.Internal(fmt.Sprintf(
				"Cannot read %s: %s wrote more than the output cap (%d more bytes); raise --output-cap or return less", uri, fn, oc.Truncated))}
		}
		b := resourceContents(uri, t.MIME, oc)
		if r.modern() {
			b.insertMembers(membersOf(modernMembers(nil, cfg.ServerInfo(), cacheFields(cache))))
		}
		return transport.Response{ID: id, Body: b}
	}), nil
}

// resourceContents is the ReadResourceResult of a run: its output first —
// as text with the declared mimeType (text/plain when none), exactly as
// written, or as a blob when it is not UTF-8 text — then what mcp_text,
// mcp_resource and mcp_blob (or mcp_image, mcp_audio) added, in order.
// The output is left out when it is empty and something else was added.
func resourceContents(uri, mime string, oc supervisor.Outcome) *body {
	var b body
	b.json(`{"contents":[`)
	n := 0
	sep := func() {
		if n > 0 {
			b.json(",")
		}
		n++
	}
	text := func(u, m, t string) {
		sep()
		b.resourceText(u, m, false, t)
	}
	blob := func(u, m string, data []byte) {
		sep()
		b.resourceBlob(u, m, data)
	}
	if len(oc.Output) > 0 || len(oc.Items) == 0 {
		switch {
		case utf8.Valid(oc.Output):
			text(uri, or(mime, "text/plain"), asString(oc.Output))
		default:
			blob(uri, or(mime, "application/octet-stream"), oc.Output)
		}
	}
	for _, it := range oc.Items {
		switch it.Kind {
		case "text":
			text(uri, or(mime, "text/plain"), it.Text)
		case "resource":
			text(or(it.URI, uri), it.MIME, it.Text)
		case "blob", "image", "audio":
			blob(uri, or(it.MIME, or(mime, "application/octet-stream")), it.Data)
		}
	}
	b.json("]")
	b.json("}") // its own part: insertMembers adds before it
	return &b
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// membersOf is the members of a JSON object text, without its braces.
func membersOf(obj json.RawMessage) []byte {
	obj = json.RawMessage(strings.TrimSpace(string(obj)))
	if len(obj) < 2 {
		return nil
	}
	return obj[1 : len(obj)-1]
}

// The bounds of a session's subscriptions: what one client can make the
// daemon keep for the session's life (docs/operations.md).
const (
	MaxSubscribeURI     = 4096 // bytes of one subscribed URI
	MaxSubscriptionsPer = 256  // URIs one session may be subscribed to
)

// subscribe and unsubscribe answer resources/subscribe and
// resources/unsubscribe (the session eras): the session keeps the URIs
// its client subscribed to, and mcp_resource_updated URI notifies it
// (listen.go). A URI need not name a declared resource (the schema leaves
// its meaning to the server: a prefix such as notes://dir/ subscribes to
// what is under it, and a tool may announce URIs it never declared), so
// what bounds the memory is the URI's length and the number per session.
func (c *session) subscribe(r *request, uri string)   { c.subscription(r, uri, true) }
func (c *session) unsubscribe(r *request, uri string) { c.subscription(r, uri, false) }

func (c *session) subscription(r *request, uri string, on bool) {
	if on && len(uri) > MaxSubscribeURI {
		r.fail(wire.Errorf(wire.CodeInvalidParams, fmt.Sprintf("Invalid params: uri longer than %d bytes", MaxSubscribeURI)))
		return
	}
	full := false
	c.update(func(st *connState) {
		if st.subs == nil {
			st.subs = map[string]bool{}
		}
		switch {
		case !on:
			delete(st.subs, uri)
		case !st.subs[uri] && len(st.subs) >= MaxSubscriptionsPer:
			full = true
		default:
			st.subs[uri] = true
		}
	})
	if full {
		r.fail(wire.Errorf(wire.CodeInvalidParams,
			fmt.Sprintf("Invalid params: this session is already subscribed to %d URIs, the most it may be; unsubscribe from one first", MaxSubscriptionsPer)))
		return
	}
	c.shareSubscriptions(r.Session) // for the other replicas (session.go)
	r.reply(json.RawMessage(`{}`))
}
