package mcp

import (
	"encoding/json"
	"errors"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// handle answers one request: a notification at once, a request through
// the method table (methods.go). Cheap methods are answered before it
// returns; what runs bash (and a tools/list that must wait for the tools
// directory) is answered later from its own goroutine.
func (c *session) handle(req *transport.Request) {
	if !req.Msg.HasID {
		c.notification(req)
		return
	}
	c.dispatch(req)
}

// initParams are initialize's params as the server reads them.
type initParams struct {
	version *string         // protocolVersion; nil when absent
	caps    json.RawMessage // capabilities, when an object
}

func decodeInitialize(r *request) (initParams, *wire.Error) {
	var p struct {
		ProtocolVersion *string         `json:"protocolVersion"`
		Caps            json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(r.Msg.Params, &p)
	ip := initParams{version: p.ProtocolVersion}
	if wire.FirstByte(p.Caps) == '{' {
		ip.caps = p.Caps
	}
	return ip, nil
}

func (c *session) initialize(r *request, p initParams) {
	s := c.srv
	cat := s.src.Declarations()
	cfg := cat.Config
	caps := cat.Capabilities(asWritten(cfg.Field("capabilities"), cfg.Capabilities()))
	version := negotiate(deref(p.version), p.version != nil, cfg.ProtocolVersion())
	if version == tasksVersion && offersTasks(cat) {
		caps = addCapability(caps, "tasks", json.RawMessage(legacyTasksCapability))
	}
	s.log.Info("initialize", zap.String("protocol_version", version))
	if r.Session != nil {
		r.Session.SetVersion(version)
		r.Session.SetClientCaps(p.caps)
	}
	r.reply(initializeResult(cfg, version, caps))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func decodeSetLevel(r *request) (string, *wire.Error) {
	var p struct {
		Level string `json:"level"`
	}
	_ = json.Unmarshal(r.Msg.Params, &p)
	return p.Level, nil
}

func (c *session) setLevel(r *request, level string) {
	rank := transport.LevelRank(level)
	if rank < 0 {
		r.fail(wire.InvalidParams("unknown log level " + level))
		return
	}
	if r.Session != nil {
		r.Session.SetLevel(rank)
	}
	r.reply(json.RawMessage(`{}`))
}

func (c *session) ping(r *request, _ struct{}) { r.reply(json.RawMessage(`{}`)) }

// toolsList answers tools/list, wrapping the list with wrap (the 2026
// fields, from the catalog the list came from) when set. When the tools directory must be listed again first
// (an executable was added or removed), the answer comes from its own
// goroutine: the reader goes on, and a ping behind it is not held up.
func (c *session) toolsList(r *request, p listParams) {
	s, req, noIcons := c.srv, r.Request, r.withoutIcons()
	var wrap func(*catalog.Catalog, json.RawMessage) json.RawMessage
	if r.modern() {
		wrap = func(cat *catalog.Catalog, list json.RawMessage) json.RawMessage {
			return modernResult(list, cat.Config.ServerInfo(), cacheFields(cat.ListCache()))
		}
	}
	answer := func() {
		cat := s.src.Fresh(s.base)
		list, err := cat.ToolsList()
		r := transport.Response{ID: req.Msg.ID}
		var perr *wire.Error
		if err == nil {
			list, perr = s.page(list, "tools", p)
		}
		if noIcons && perr == nil {
			list = dropListIcons(list, "tools")
		}
		if err != nil {
			r.Err = s.fileError(err, req.Era)
		} else if perr != nil {
			r.Err = perr
		} else if wrap != nil {
			r.Result = wrap(cat, list)
		} else {
			r.Result = list
		}
		req.Out.Respond(r)
	}
	if !s.src.NeedsListing() {
		answer()
	} else if c.enter() {
		c.goEntered(answer)
	} else {
		req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
	}
}

// notification acts on a notification from the table of those the server
// reads (notifications); any other is logged and ignored.
func (c *session) notification(req *transport.Request) {
	if f, ok := notifications[req.Msg.Method]; ok {
		f(c, req)
		return
	}
	c.srv.log.Info("notification ignored", zap.String("method", req.Msg.Method))
}

// notifications are the client notifications the server acts on.
var notifications = map[string]func(*session, *transport.Request){
	"notifications/initialized": func(c *session, _ *transport.Request) { c.srv.log.Info("client initialized") },
	"notifications/cancelled":   (*session).cancelRequest,
}

// cancelRequest acts on notifications/cancelled: the named request of
// this session, if in flight, is cancelled.
func (c *session) cancelRequest(req *transport.Request) {
	s := c.srv
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	// The SDK's sentence for every cancellation that stops nothing
	// (it reached each such line between calls).
	const dropped = "Cancellation received with nothing in flight; dropped"
	if json.Unmarshal(req.Msg.Params, &p) != nil || p.RequestID == nil {
		s.log.Info(dropped, zap.String("reason", "names no request"))
		return
	}
	key, ok := idKey(p.RequestID)
	var cancel func(error)
	c.update(func(st *connState) {
		if ok {
			cancel = st.inflight[key]
		}
	})
	if cancel == nil {
		s.log.Info(dropped, zap.String("reason", "the request is not in flight"), zap.ByteString("request_id", p.RequestID))
		return
	}
	cancel(supervisor.ErrCancelled)
}

// fileError is the -32603 answer for a declaration file that cannot be
// used: the SDK's message, byte for byte in the SDK's eras (users' tests
// compare those lines); a 2026-07-28 client, which has no SDK server to
// match, also gets the file's absolute path and the reason in data. The
// log always has both.
func (s *Server) fileError(err error, era transport.Era) *wire.Error {
	var fe *catalog.FileError
	if !errors.As(err, &fe) {
		return wire.Internal(err.Error())
	}
	reason := ""
	if fe.Reason != nil {
		reason = fe.Reason.Error()
	}
	s.log.Warn("request refused: a declaration file is unusable", zap.String("path", fe.Abs()), zap.String("reason", reason))
	if era != transport.Modern {
		return wire.Internal(fe.Message)
	}
	return &wire.Error{Code: wire.CodeInternal, Message: fe.Message,
		Data: object(field{"path", wire.Quote(fe.Abs())}, field{"reason", wire.Quote(reason)})}
}
