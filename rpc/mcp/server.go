package mcp

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/metrics"
	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
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
	// Sequential answers one request at a time, in arrival order, as
	// bash-mcp-sdk did (sequential.go).
	Sequential bool
	// ToolStderr is where the tools of a server in the 2026 SDK's dialect
	// write their stderr, which that SDK kept out of results (dialect.go);
	// nil: the daemon's own stderr, as the SDK's tools wrote to the
	// server's.
	ToolStderr *os.File
	Metrics    *metrics.Metrics // nil: counted privately
	// StateKey is the secret that signs 2026 requestState (StateKeyEnv);
	// empty: a random key of this daemon's own.
	StateKey string
	// TaskStoreMax and TaskStoreBytes bound the tasks held (taskbound.go);
	// 0: DefaultTaskStoreMax, DefaultTaskStoreBytes.
	TaskStoreMax   int
	TaskStoreBytes int64
	// PageSize is the entries per page of the list methods (pages.go);
	// 0: every list in one page.
	PageSize int
	// Store is what the replicas of a deployment share (--state); nil or
	// an unshared store: this process keeps everything itself.
	Store state.Store
	// ReplicaID names this replica in a shared Store.
	ReplicaID string
	Log       *zap.Logger
}

// Server answers MCP requests on any number of connections.
type Server struct {
	opt     Options
	log     *zap.Logger
	src     *catalog.Source
	metrics *metrics.Metrics
	turn    chan struct{} // Sequential: held by the one request being handled
	flight  flight        // what is admitted, for every session (admission.go)

	base   context.Context // every call's parent; cancelled by Stop
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	conns map[*session]bool

	stopOnce sync.Once
	stopped  chan struct{}

	subs  listeners   // 2026-07-28 subscriptions/listen streams (listen.go)
	asks  pendingAsks // requests sent to clients, waiting for answers (ask.go)
	tasks taskStore   // tools/call tasks (tasks.go)
	fan   fanOut      // change notifications across replicas (fanout.go)

	states stateSigner // 2026 requestState (mrtr.go)

	discovered atomic.Pointer[discovered] // the last server/discover result (modern.go)
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
	if opt.ToolStderr == nil {
		opt.ToolStderr = os.Stderr
	}
	base, cancel := context.WithCancelCause(context.Background())
	s := &Server{
		opt: opt, log: opt.Log, src: opt.Catalog, metrics: opt.Metrics,
		turn: make(chan struct{}, 1),
		base: base, cancel: cancel,
		conns:   map[*session]bool{},
		stopped: make(chan struct{}),
		states:  newStateSigner(opt.StateKey),
		tasks:   taskStore{log: opt.Log, max: opt.TaskStoreMax, maxB: opt.TaskStoreBytes},
	}
	s.flight.st.slots, s.flight.st.maxPending = opt.MaxConcurrent, opt.MaxPending
	if store := s.shared(); store != nil {
		s.tasks.share = newTaskShare(&s.tasks, store, opt.ReplicaID, opt.Log)
		go s.tasks.share.run(base)
	}
	return s
}

// Store is the state store of Options (nil when none was given).
func (s *Server) Store() state.Store { return s.opt.Store }

// ReplicaID is this replica's name in a shared Store.
func (s *Server) ReplicaID() string { return s.opt.ReplicaID }

// ModernEnabled says whether the server speaks 2026-07-28 now; the
// transports ask it to decide each request's era.
func (s *Server) ModernEnabled() bool { return s.src.Config().ModernEnabled() }

// Stopping reports whether Stop began.
func (s *Server) Stopping() bool {
	stopping := false
	s.change(func(st *flightState) { stopping = st.stopping })
	return stopping
}

// Serve answers one connection's requests until it ends (io.EOF), then
// lets its in-flight calls finish and be answered; after Stop it returns
// once Stop's drain and cancel are done. From Stop on, every request is
// answered with a shutting-down error. The reader may stay blocked in a
// read that never returns (stdin after Stop): it owns nothing, and the
// process exits right after.
func (s *Server) Serve(t transport.Connection) error {
	c := &session{srv: s, t: t, mu: &s.flight.mu, st: connState{inflight: map[string]context.CancelCauseFunc{}}}
	s.mu.Lock()
	s.conns[c] = true
	s.mu.Unlock()
	c.followRecord() // a session shared between replicas (session.go)
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	readDone := make(chan error, 1)
	read := c.readLoop
	if s.opt.Sequential {
		read = c.readSequential
	}
	go func() { readDone <- read() }()
	select {
	case err := <-readDone:
		c.endConnListeners()
		c.calls.Wait()
		return err
	case <-s.stopped:
		return nil
	}
}

// errClosing answers a request that arrives once Stop began.
func errClosing() *wire.Error { return wire.ServerClosing() }

// flushBudget is how long, once shutdown has cancelled what was left, the
// answers already being written get before every connection abandons its
// client: only a client that stopped reading needs longer.
const flushBudget = time.Second

// stopWatchdog is how often Stop logs what it still waits for.
const stopWatchdog = 2 * time.Second

// Stop stops taking requests (they are answered with a shutting-down
// error), lets in-flight calls finish and be answered for up to drain,
// then cancels what is left (cancel hooks get "" as arguments), gives the
// answers being written flushBudget, abandons the clients that have not
// taken them, and waits for every request to be gone. It is bounded: a
// cancelled call ends within the supervisor's cancel path (hook budget,
// grace, SIGKILL), and an abandoned write returns at once. Serve returns
// after Stop. Idempotent.
func (s *Server) Stop(drain time.Duration) {
	s.stopOnce.Do(func() {
		s.change(func(st *flightState) { st.stopping = true })
		// Listen streams are torn down at once: they never finish by
		// themselves, and their clients learn the server is going.
		s.endListeners()
		done := make(chan struct{})
		go func() { s.flight.calls.Wait(); close(done) }()
		waitFor(done, drain)
		s.cancel(supervisor.ErrShutdown)
		if !waitFor(done, flushBudget) {
			s.abandonAll()
		}
		for !waitFor(done, stopWatchdog) {
			n := 0
			s.change(func(st *flightState) { n = st.pending })
			s.log.Warn("shutdown waits for requests still running", zap.Int("calls_pending", n))
		}
		close(s.stopped)
	})
}

// waitFor reports whether done closed within d.
func waitFor(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// abandonAll tells every connection to give up on output its client has
// not taken.
func (s *Server) abandonAll() {
	conns := s.connections()
	s.log.Warn("abandoning answers the clients have not taken", zap.Int("connections", len(conns)))
	for _, c := range conns {
		c.t.Abandon()
	}
}

// NotifyToolsChanged tells clients the tools changed (NotifyListChanged).
func (s *Server) NotifyToolsChanged() bool { return s.NotifyListChanged("tools") }

// connections are the connections being served now.
func (s *Server) connections() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*session, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

// CallsRunning reports whether any request that runs bash (a call, a
// read, a task) was admitted and has not ended.
func (s *Server) CallsRunning() bool {
	s.flight.mu.Lock()
	defer s.flight.mu.Unlock()
	return s.flight.st.pending > 0
}
