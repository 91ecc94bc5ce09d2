package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// JSON-RPC error codes in use.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

type rpcError struct {
	code int
	msg  string
}

// Runner runs tool calls (the supervisor).
type Runner interface {
	Call(ctx context.Context, req supervisor.Request) supervisor.Outcome
}

// Options configure a Server.
type Options struct {
	ToolsFile      string
	ConfigFile     string
	MaxLine        int           // bytes per request line
	MaxConcurrent  int           // tool calls running at once
	MaxPending     int           // tool calls running or waiting; beyond it a call is refused
	DefaultTimeout time.Duration // per call; 0: none
	Log            *zap.Logger
	Runner         Runner
	Snapshot       func() *supervisor.Snapshot
	ToolsDir       string // --tools-dir; "" for none
}

// Server serves one JSON-RPC stream.
type Server struct {
	opt     Options
	log     *zap.Logger
	tools   *fileCache[*catalog]
	dir     *toolsDir // nil without --tools-dir
	metrics *Metrics
	config  *fileCache[*config]
	sem     chan struct{}
	pending atomic.Int64

	wmu  sync.Mutex
	w    io.Writer
	werr error

	stdio sink // responses and notifications of the stdio stream

	mu       sync.Mutex
	inflight map[string]context.CancelCauseFunc
	stopping bool
	calls    sync.WaitGroup

	base     context.Context
	cancel   context.CancelCauseFunc
	outDead  chan struct{} // closed when a write to the client failed
	outOnce  sync.Once
	stopOnce sync.Once
	stopped  chan struct{}
}

// NewServer prepares a server; tools.json and config.json are read now and
// again whenever they change.
func NewServer(opt Options) *Server {
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.MaxLine <= 0 {
		opt.MaxLine = 16 << 20
	}
	if opt.MaxConcurrent <= 0 {
		opt.MaxConcurrent = 16
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = 64 * opt.MaxConcurrent
	}
	base, cancel := context.WithCancelCause(context.Background())
	s := &Server{
		opt: opt,
		log: opt.Log,
		tools: newFileCache(opt.ToolsFile, loadCatalog, func(c *catalog) error { return c.err },
			func(path string, err error) {
				opt.Log.Error("tools list changed but is unusable; the last good one keeps serving", zap.String("path", path), zap.Error(err))
			}),
		config: newFileCache(opt.ConfigFile, loadConfig, func(c *config) error { return c.err },
			func(path string, err error) {
				opt.Log.Error("server configuration changed but is unusable; the last good one keeps serving", zap.String("path", path), zap.Error(err))
			}),
		sem:      make(chan struct{}, opt.MaxConcurrent),
		inflight: map[string]context.CancelCauseFunc{},
		base:     base,
		cancel:   cancel,
		outDead:  make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	s.stdio = streamSink{s: s, ss: newSession()}
	s.metrics = newMetrics()
	if opt.ToolsDir != "" {
		if l, ok := opt.Runner.(Lister); ok {
			s.dir = &toolsDir{dir: opt.ToolsDir, lister: l, log: opt.Log.Named("tools-dir")}
			if d := s.dir.get(); d.err != nil {
				s.log.Error("tools directory unusable", zap.Error(d.err))
			}
		}
	}
	if c := s.tools.get(); c.err != nil {
		s.log.Error("tools list unreadable", zap.String("path", opt.ToolsFile), zap.Error(c.err))
	} else {
		for _, t := range c.order {
			if t.schemaErr != nil {
				s.log.Error("inputSchema does not compile", zap.String("tool", t.name), zap.Error(t.schemaErr))
			}
		}
	}
	if c := s.config.get(); c.err != nil {
		s.log.Error("server configuration unreadable", zap.String("path", opt.ConfigFile), zap.Error(c.err))
	}
	return s
}

// OutputDead is closed when writing to the client failed (EPIPE: the
// client closed our stdout); the caller should shut down.
func (s *Server) OutputDead() <-chan struct{} { return s.outDead }

// Serve reads requests from r until EOF or Stop, writing responses to w.
// At EOF every in-flight call finishes and is answered before Serve
// returns. After Stop, Serve returns once Stop's drain and cancel are done.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	s.wmu.Lock()
	s.w = w
	s.wmu.Unlock()
	readDone := make(chan error, 1)
	// The reader may stay blocked in read(2) on stdin after Stop; it owns
	// nothing, and the process exits right after Serve returns.
	go func() { readDone <- s.readLoop(r) }()
	select {
	case err := <-readDone:
		s.calls.Wait()
		return err
	case <-s.stopped:
		return nil
	}
}

func (s *Server) readLoop(r io.Reader) error {
	lr := NewLineReader(r, s.opt.MaxLine)
	for {
		line, err := lr.Next()
		if s.isStopping() {
			return nil
		}
		var le *LineError
		switch {
		case errors.As(err, &le):
			s.log.Warn("request line rejected", zap.String("reason", le.Kind), zap.Int64("bytes", le.Len))
			msg := "Parse error: Invalid JSON (the line is not valid UTF-8)"
			if le.Kind == "too_long" {
				msg = fmt.Sprintf("Parse error: line longer than the %d-byte limit", s.opt.MaxLine)
			}
			s.stdio.respond(ErrorLine(json.RawMessage("null"), codeParse, msg, nil))
			continue
		case errors.Is(err, io.EOF):
			if len(line) > 0 {
				s.handleLine(line, s.stdio)
			}
			return nil
		case err != nil:
			return err
		}
		if len(line) == 0 {
			continue // the SDK skips empty lines
		}
		s.handleLine(line, s.stdio)
	}
}

func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// handleLine gates one message and answers it through out. Cheap methods
// are answered before it returns; a tools/call is answered later.
func (s *Server) handleLine(line []byte, out sink) {
	msg, gerr := Parse(line)
	if gerr != nil {
		s.log.Warn("request rejected", zap.Int("code", gerr.Code), zap.String("message", gerr.Message))
		out.respond(ErrorLine(gerr.ID, gerr.Code, gerr.Message, nil))
		return
	}
	if msg == nil || msg.IsResponse {
		return
	}
	if !msg.HasID {
		s.notification(msg, out.hint().scope)
		return
	}
	id := append(json.RawMessage(nil), msg.ID...)
	if m := parseMeta(msg.Params); isModern(msg.Method, m, out.hint()) && s.config.get().modernEnabled() {
		s.handleModern(id, msg, m, out)
		return
	}
	switch msg.Method {
	case "initialize":
		c := s.config.get()
		if c.err != nil {
			out.respond(ErrorLine(id, codeInternal, "Cannot read server configuration: "+c.path, nil))
			return
		}
		res, version := c.initializeResult(msg.Params)
		s.log.Info("initialize", zap.String("protocol_version", version))
		if ss := out.hint().session; ss != nil {
			ss.setVersion(version)
		}
		out.respond(ResultLine(id, res))
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		rank := levelRank(p.Level)
		if rank < 0 {
			out.respond(ErrorLine(id, codeInvalidParams, "Invalid params: unknown log level "+p.Level, nil))
			return
		}
		if ss := out.hint().session; ss != nil {
			ss.setLevel(rank)
		}
		out.respond(ResultLine(id, json.RawMessage(`{}`)))
	case "ping":
		out.respond(ResultLine(id, json.RawMessage(`{}`)))
	case "tools/list":
		list, err := s.toolsList()
		if err != nil {
			out.respond(ErrorLine(id, codeInternal, err.Error(), nil))
			return
		}
		out.respond(ResultLine(id, list))
	case "tools/call":
		s.startCall(id, append(json.RawMessage(nil), msg.Params...), out)
	case "resources/list":
		out.respond(ResultLine(id, json.RawMessage(`{"resources":[]}`)))
	case "resources/templates/list":
		out.respond(ResultLine(id, json.RawMessage(`{"resourceTemplates":[]}`)))
	case "prompts/list":
		out.respond(ResultLine(id, json.RawMessage(`{"prompts":[]}`)))
	default:
		out.respond(ErrorLine(id, codeMethodNotFound, "Method not found: "+msg.Method, nil))
	}
}

func (s *Server) notification(msg *Message, scope string) {
	switch msg.Method {
	case "notifications/initialized":
		s.log.Info("client initialized")
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) != nil || p.RequestID == nil {
			s.log.Info("cancellation names no request; dropped")
			return
		}
		key, ok := idKey(p.RequestID)
		key = scope + "|" + key
		s.mu.Lock()
		cancel := s.inflight[key]
		s.mu.Unlock()
		if !ok || cancel == nil {
			s.log.Info("cancellation for a request not in flight; dropped", zap.ByteString("request_id", p.RequestID))
			return
		}
		cancel(supervisor.ErrCancelled)
	default:
		s.log.Info("notification ignored", zap.String("method", msg.Method))
	}
}

// idKey makes JSON ids comparable as values: 1 and 1.0e0 are the same
// integer, "1" is a string and never equals 1.
func idKey(raw json.RawMessage) (string, bool) {
	switch firstByte(raw) {
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

// sink is where one request's output goes: request-related notifications
// first, then at most one response. On stdio both are lines on stdout; the
// HTTP transport gives each request its own.
type sink interface {
	notify(line []byte)
	respond(line []byte)
	// finish ends a request that gets no response (a cancelled call).
	finish()
	hint() transportHint
}

// streamSink writes to the server's single output stream (stdio).
type streamSink struct {
	s  *Server
	ss *session
}

func (w streamSink) notify(line []byte)  { w.s.write(line) }
func (w streamSink) respond(line []byte) { w.s.write(line) }
func (w streamSink) hint() transportHint { return transportHint{session: w.ss} }
func (w streamSink) finish()             {}

// write sends one line to the client. After a failed write nothing more is
// written and OutputDead is closed.
func (s *Server) write(line []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.werr != nil || s.w == nil {
		return
	}
	if _, err := s.w.Write(line); err != nil {
		s.werr = err
		s.log.Warn("client output failed", zap.Error(err))
		s.outOnce.Do(func() { close(s.outDead) })
	}
}

// toolsList is the tools/list result: tools.json's tools, then those of the
// tools directory.
func (s *Server) toolsList() (json.RawMessage, error) {
	c := s.tools.get()
	list := c.list
	if c.err != nil {
		if s.dir == nil || s.opt.ToolsFile != "" {
			return nil, errors.New("Cannot read tools list: " + c.path)
		}
		list = json.RawMessage(`{"tools":[]}`)
	}
	if s.dir != nil {
		d := s.dir.get()
		if d.err != nil {
			return nil, d.err
		}
		list = mergeList(list, d.public)
	}
	return list, nil
}

// NotifyToolsChanged tells a legacy stdio client that the tools changed,
// when the server advertises listChanged and the client has initialized.
// (2026-07-28 delivers list_changed only on subscriptions/listen streams,
// which mcp-bashd does not offer; HTTP sessions have no stream to carry it.)
func (s *Server) NotifyToolsChanged() {
	if !s.config.get().declaresListChanged() {
		return
	}
	if ss, ok := s.stdio.(streamSink); ok && ss.ss.Version() == "" {
		return
	}
	s.write(NotificationLine("notifications/tools/list_changed", nil))
}

// Stop stops taking requests, lets in-flight calls finish for up to drain,
// then cancels what is left (cancel hooks get "" as arguments) and waits
// for every call to be gone. Serve returns after Stop. Idempotent.
func (s *Server) Stop(drain time.Duration) {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopping = true
		s.mu.Unlock()
		done := make(chan struct{})
		go func() { s.calls.Wait(); close(done) }()
		if drain > 0 {
			t := time.NewTimer(drain)
			select {
			case <-done:
			case <-t.C:
			case <-s.outDead:
			}
			t.Stop()
		}
		s.cancel(supervisor.ErrShutdown)
		<-done
		close(s.stopped)
	})
}
