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

// handle answers one request. Cheap methods are answered before it
// returns; a tools/call (and a tools/list that must wait for the tools
// directory) is answered later from its own goroutine.
func (c *session) handle(req *transport.Request) {
	s := c.srv
	if !req.Msg.HasID {
		c.notification(req)
		return
	}
	if req.Era == transport.Modern {
		c.handleModern(req)
		return
	}
	id := req.Msg.ID
	respond := func(result json.RawMessage, err *wire.Error) {
		req.Out.Respond(transport.Response{ID: id, Result: result, Err: err})
	}
	switch req.Msg.Method {
	case "initialize":
		cat := s.src.Declarations()
		cfg := cat.Config
		if cfg.Err != nil {
			respond(nil, s.fileError(cfg.ConfigError(), req.Era))
			return
		}
		caps := cat.Capabilities(asWritten(cfg.Field("capabilities"), cfg.Capabilities()))
		res, version := initializeResult(cfg, req.Msg.Params, caps)
		if version == tasksVersion && offersTasks(cat) {
			res, _ = initializeResult(cfg, req.Msg.Params, addCapability(caps, "tasks", json.RawMessage(legacyTasksCapability)))
		}
		s.log.Info("initialize", zap.String("protocol_version", version))
		if req.Session != nil {
			req.Session.SetVersion(version)
			req.Session.SetClientCaps(clientCaps(req.Msg.Params))
		}
		respond(res, nil)
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(req.Msg.Params, &p)
		rank := transport.LevelRank(p.Level)
		if rank < 0 {
			respond(nil, wire.Errorf(wire.CodeInvalidParams, "Invalid params: unknown log level "+p.Level))
			return
		}
		if req.Session != nil {
			req.Session.SetLevel(rank)
		}
		respond(json.RawMessage(`{}`), nil)
	case "ping":
		respond(json.RawMessage(`{}`), nil)
	case "tools/list":
		c.toolsList(req, nil)
	case "tools/call":
		c.startCall(req)
	default:
		// resources, prompts, completion (declared.go), tasks (tasks.go)
		if !c.serveDeclared(req) && !c.serveTasks(req) {
			respond(nil, wire.Errorf(wire.CodeMethodNotFound, "Method not found: "+req.Msg.Method))
		}
	}
}

// toolsList answers tools/list, wrapping the list with wrap (the 2026
// fields, from the catalog the list came from) when set. When the tools directory must be listed again first
// (an executable was added or removed), the answer comes from its own
// goroutine: the reader goes on, and a ping behind it is not held up.
func (c *session) toolsList(req *transport.Request, wrap func(*catalog.Catalog, json.RawMessage) json.RawMessage) {
	s := c.srv
	answer := func() {
		cat := s.src.Fresh(s.base)
		list, err := cat.ToolsList()
		r := transport.Response{ID: req.Msg.ID}
		if err != nil {
			r.Err = s.fileError(err, req.Era)
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

func (c *session) notification(req *transport.Request) {
	s := c.srv
	switch req.Msg.Method {
	case "notifications/initialized":
		s.log.Info("client initialized")
	case "notifications/cancelled":
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
	default:
		s.log.Info("notification ignored", zap.String("method", req.Msg.Method))
	}
}

// fileError is the -32603 answer for a declaration file that cannot be
// used: the SDK's message, byte for byte in the SDK's eras (users' tests
// compare those lines); a 2026-07-28 client, which has no SDK server to
// match, also gets the file's absolute path and the reason in data. The
// log always has both.
func (s *Server) fileError(err error, era transport.Era) *wire.Error {
	var fe *catalog.FileError
	if !errors.As(err, &fe) {
		return wire.Errorf(wire.CodeInternal, err.Error())
	}
	reason := ""
	if fe.Reason != nil {
		reason = fe.Reason.Error()
	}
	s.log.Warn("request refused: a declaration file is unusable", zap.String("path", fe.Abs()), zap.String("reason", reason))
	if era != transport.Modern {
		return wire.Errorf(wire.CodeInternal, fe.Message)
	}
	return &wire.Error{Code: wire.CodeInternal, Message: fe.Message,
		Data: object(field{"path", wire.Quote(fe.Abs())}, field{"reason", wire.Quote(reason)})}
}
