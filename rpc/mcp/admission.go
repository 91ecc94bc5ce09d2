package mcp

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Admission. Everything that runs bash or waits for a concurrency slot —
// a tools/call, resources/read, prompts/get, completion/complete, a task's
// tool, a batch member — is admitted through one state (flightState) that
// the server and every session change only through Server.change, under
// one lock:
//
//   - pending counts what was admitted and has not ended: running,
//     waiting for a slot, writing its answer, or a task's tool. Beyond
//     MaxPending a request is refused with the busy error. A task-augmented
//     call's unit passes to its task, so tasks are bounded as calls are.
//   - the slots (MaxConcurrent) are taken by running bash and kept until
//     the answer is written; an answer a JSON-RPC batch holds until its
//     array is written keeps its slot too, so the answers a batch gathers
//     never outnumber the slots. When every slot is held so, a batch
//     member waiting for a slot could wait forever (its batch waits for
//     it): it is refused with the busy error instead.
//   - each session's in-flight table (request id → cancel) and its
//     resources/subscribe URIs.
//
// Stop sets stopping under the same lock, so nothing is counted behind
// its wait.

// flight is the server's in-flight state and the lock every session's
// shares.
type flight struct {
	mu    sync.Mutex
	st    flightState
	calls sync.WaitGroup // every request on a goroutine of its own, and every task
}

// flightState is what admission decides from; changed only inside
// Server.change.
type flightState struct {
	stopping   bool
	pending    int // admitted and not ended (MaxPending bounds it)
	maxPending int
	slots      int         // MaxConcurrent
	used       int         // slots taken
	held       int         // of used: kept by answers a batch has not written
	answering  int         // of used: kept by answers being written
	queue      []*slotWait // waiting for a slot, in arrival order
}

// slotWait is one wait for a slot: true granted, false refused (busy).
type slotWait struct {
	ch    chan bool
	batch bool
}

// change runs f on the in-flight state under its one lock, then hands the
// slots f freed to the waiters (or refuses the batch members that could
// only deadlock).
func (s *Server) change(f func(st *flightState)) {
	s.flight.mu.Lock()
	defer s.flight.mu.Unlock()
	f(&s.flight.st)
	s.flight.st.settle()
}

// settle grants free slots in arrival order; when every slot is kept by
// a batch's answer, waiting batch members are refused.
func (st *flightState) settle() {
	for len(st.queue) > 0 && st.used < st.slots {
		w := st.queue[0]
		st.queue = st.queue[1:]
		st.used++
		w.ch <- true
	}
	if st.held < st.slots || len(st.queue) == 0 {
		return
	}
	left := st.queue[:0]
	for _, w := range st.queue {
		if w.batch {
			w.ch <- false
			continue
		}
		left = append(left, w)
	}
	clear(st.queue[len(left):])
	st.queue = left
}

// ticket is one admitted request (or task): what it counts in the state,
// and its context, cancelled by the client, its departure or shutdown.
type ticket struct {
	s     *Server
	c     *session // nil: a task's, or Server.Call's
	key   string   // in c's in-flight table; "" when not there
	bash  bool     // counted in pending
	batch bool     // its answer is held by a batch until the array is written
	ctx   context.Context
	stop  context.CancelCauseFunc
	slot  bool // holds a slot
	task  bool // its pending unit passed to a task
}

// admit admits a request of c that runs bash: it is in c's in-flight
// table before admit returns (a cancellation on the very next line finds
// it) and counted in pending; refused with the error that answers it —
// a duplicate id, busy, or shutting down.
func (c *session) admit(req *transport.Request) (*ticket, *wire.Error) {
	s := c.srv
	key, _ := idKey(req.Msg.ID)
	_, batch := transport.WrittenOf(req.Out)
	tk := &ticket{s: s, c: c, key: key, bash: true, batch: batch}
	var refused *wire.Error
	s.change(func(st *flightState) {
		switch {
		case c.st.inflight[key] != nil:
			refused = wire.InvalidRequest("id " + string(req.Msg.ID) + " is already in flight")
		case st.pending >= st.maxPending:
			refused = st.busy()
		case st.stopping:
			refused = errClosing()
		default:
			tk.ctx, tk.stop = context.WithCancelCause(s.base)
			c.st.inflight[key] = tk.stop
			st.pending++
			c.calls.Add(1)
			s.flight.calls.Add(1)
		}
	})
	if refused != nil {
		return nil, refused
	}
	return tk, nil
}

// enter counts one request of c that runs on its own goroutine without
// bash (a tools/list that lists the directory, a tasks/result waiting),
// so the end of the connection and Stop wait for it; false once Stop
// began.
func (c *session) enter() bool {
	s := c.srv
	ok := false
	s.change(func(st *flightState) {
		if ok = !st.stopping; ok {
			c.calls.Add(1)
			s.flight.calls.Add(1)
		}
	})
	return ok
}

// goEntered runs f, for a request enter counted, on its own goroutine.
func (c *session) goEntered(f func()) {
	s := c.srv
	go func() {
		defer s.flight.calls.Done()
		defer c.calls.Done()
		f()
	}()
}

// busy is the error refusing a request beyond MaxPending.
func (st *flightState) busy() *wire.Error {
	return wire.Busy(fmt.Sprintf("%d tool calls are already running or waiting (%d per --max-concurrency slot; --max-concurrency is %d); retry later, or start mcp-bashd with a higher --max-concurrency",
		st.maxPending, st.maxPending/st.slots, st.slots))
}

// busyBatch is the error refusing a batch member when every slot holds an
// answer a batch has not written yet.
func busyBatch(slots int) *wire.Error {
	return wire.Busy(fmt.Sprintf("every --max-concurrency slot (%d) holds an answer of a JSON-RPC batch waiting for its other members; retry later, send smaller batches, or start mcp-bashd with a higher --max-concurrency",
		slots))
}

// takeSlot waits for a concurrency slot: nil when it has one; errCancelled
// when ctx ended first; the busy error for a batch member that could only
// wait for its own batch.
func (tk *ticket) takeSlot(ctx context.Context) *wire.Error {
	s := tk.s
	w := &slotWait{ch: make(chan bool, 1), batch: tk.batch}
	s.change(func(st *flightState) { st.queue = append(st.queue, w) })
	select {
	case ok := <-w.ch:
		if !ok {
			return busyBatch(s.opt.MaxConcurrent)
		}
		tk.slot = true
		return nil
	case <-ctx.Done():
	}
	granted := false
	s.change(func(st *flightState) {
		for i, q := range st.queue {
			if q == w {
				st.queue = append(st.queue[:i], st.queue[i+1:]...)
				return
			}
		}
		// Granted (or refused) as ctx ended: give a granted slot back.
		if granted = <-w.ch; granted {
			st.used--
		}
	})
	return errCancelled
}

// giveSlot gives the slot back (a task's, Server.Call's: nothing to write).
func (tk *ticket) giveSlot() {
	if tk.slot {
		tk.slot = false
		tk.s.change(func(st *flightState) { st.used-- })
	}
}

// answered is how the answer of a request holding a slot is written: the
// slot stays taken while the client reads it (or, for a batch member,
// until the batch's array is written), so answers a client has not taken
// never outnumber the slots.
func (tk *ticket) answered(out transport.Stream, r transport.Response) {
	if !tk.slot {
		out.Respond(r)
		return
	}
	s, all := tk.s, false
	s.change(func(st *flightState) { st.answering++; all = st.answering == st.slots })
	if all {
		s.log.Warn("every call slot waits for the client to read an answer", zap.Int("slots", s.opt.MaxConcurrent))
	}
	out.Respond(r)
	written, batch := transport.WrittenOf(out)
	s.change(func(st *flightState) {
		st.answering--
		if batch {
			st.held++
		}
	})
	if batch {
		<-written
		s.change(func(st *flightState) { st.held-- })
	}
}

// toTask passes the ticket's pending unit to a task, which counts in
// Stop's wait from now on; false once Stop began. The task's own ticket
// ends it.
func (tk *ticket) toTask() (*ticket, bool) {
	s := tk.s
	ok := false
	s.change(func(st *flightState) {
		if ok = !st.stopping; ok {
			tk.task = true
			s.flight.calls.Add(1)
		}
	})
	if !ok {
		return nil, false
	}
	t := &ticket{s: s, bash: true}
	t.ctx, t.stop = context.WithCancelCause(s.base)
	return t, true
}

// end is the ticket's last word: its slot is given back, it leaves the
// in-flight table and the counts, and its context ends.
func (tk *ticket) end() {
	s := tk.s
	s.change(func(st *flightState) {
		if tk.slot {
			st.used--
		}
		if tk.bash && !tk.task {
			st.pending--
		}
		if tk.c != nil && tk.c.st.inflight[tk.key] != nil {
			delete(tk.c.st.inflight, tk.key)
		}
	})
	tk.slot = false
	if tk.stop != nil {
		tk.stop(nil)
	}
	if tk.c != nil {
		tk.c.calls.Done()
	}
	if tk.c != nil || tk.bash {
		s.flight.calls.Done()
	}
}

// errCancelled is takeSlot's answer when the request was cancelled while
// it waited: it never started, and gets no response.
var errCancelled = &wire.Error{Code: wire.CodeInternal, Message: "cancelled"}

// cancelled reports whether err is that.
func cancelled(err *wire.Error) bool { return err == errCancelled }
