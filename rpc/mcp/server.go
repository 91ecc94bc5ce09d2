package mcp

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/metrics"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Runner runs tool calls (the supervisor).
type Runner interface {
	Call(ctx context.Context, req supervisor.Request) supervisor.Outcome
}

// Options configure a Server.
type Options struct {
	Catalog        *catalog.Source
	Runner         Runner
	Snapshot       func() *supervisor.Snapshot // the server script as loaded now
	MaxConcurrent  int                         // tool calls running at once
	MaxPending     int                         // tool calls running or waiting; beyond it a call is refused
	DefaultTimeout time.Duration               // per call; 0: none
	Metrics        *metrics.Metrics            // nil: counted privately
	Log            *zap.Logger
}

// Server answers MCP requests on any number of connections.
type Server struct {
	opt     Options
	log     *zap.Logger
	src     *catalog.Source
	metrics *metrics.Metrics
	sem     chan struct{}
	pending atomic.Int64

	base   context.Context // every call's parent; cancelled by Stop
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	conns    map[*conn]bool
	stopping bool
	calls    sync.WaitGroup // requests running on every connection

	stopOnce sync.Once
	stopped  chan struct{}
}

// New makes a server.
func New(opt Options) *Server {
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.MaxConcurrent <= 0 {
		opt.MaxConcurrent = 16
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = 64 * opt.MaxConcurrent
	}
	if opt.Metrics == nil {
		opt.Metrics = metrics.New()
	}
	base, cancel := context.WithCancelCause(context.Background())
	return &Server{
		opt: opt, log: opt.Log, src: opt.Catalog, metrics: opt.Metrics,
		sem:  make(chan struct{}, opt.MaxConcurrent),
		base: base, cancel: cancel,
		conns:   map[*conn]bool{},
		stopped: make(chan struct{}),
	}
}

// ModernEnabled says whether the server speaks 2026-07-28 now; the
// transports ask it to decide each request's era.
func (s *Server) ModernEnabled() bool { return s.src.Config().ModernEnabled() }

// Stopping reports whether Stop began.
func (s *Server) Stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// Serve answers one connection's requests until it ends (io.EOF), then
// lets its in-flight calls finish and be answered; after Stop it returns
// once Stop's drain and cancel are done. The reader may stay blocked in a
// read that never returns (stdin after Stop): it owns nothing, and the
// process exits right after.
func (s *Server) Serve(t transport.Connection) error {
	c := &conn{t: t}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil
	}
	s.conns[c] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	readDone := make(chan error, 1)
	go func() { readDone <- s.readLoop(c) }()
	select {
	case err := <-readDone:
		c.calls.Wait()
		return err
	case <-s.stopped:
		return nil
	}
}

func (s *Server) readLoop(c *conn) error {
	for {
		req, err := c.t.Read()
		if s.Stopping() {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		s.handle(c, req)
	}
}

// goRequest runs f for a request of c on its own goroutine, counted so
// that the end of the connection and Stop wait for it.
func (s *Server) goRequest(c *conn, f func()) {
	c.calls.Add(1)
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer c.calls.Done()
		f()
	}()
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
			}
			t.Stop()
		}
		s.cancel(supervisor.ErrShutdown)
		<-done
		close(s.stopped)
	})
}

// NotifyToolsChanged tells every legacy client that has initialized that
// the tools changed, when the server advertises listChanged. (2026-07-28
// delivers list_changed only on subscriptions/listen streams, which
// mcp-bashd does not offer; an HTTP session has no stream to carry it.)
// It reports whether any client was told.
func (s *Server) NotifyToolsChanged() bool {
	if !s.src.Config().DeclaresListChanged() {
		return false
	}
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	told := false
	for _, c := range conns {
		if ss := c.t.Session(); ss != nil && ss.Version() != "" {
			told = c.t.Notify("notifications/tools/list_changed", nil) || told
		}
	}
	return told
}
