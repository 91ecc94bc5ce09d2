package mcp

// The tasks/* requests about a task this replica does not hold: answered
// from its record in the shared store, off the session's reader, or
// handed to its owner (taskshare.go says how tasks are shared).

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// remoteTask answers a request about task p that this replica does not
// hold, from its record, on its own goroutine (the store may be slow or
// down; a session's reader must not wait for it).
func (c *session) remoteTask(r *request, p taskParams, answer func(ctx context.Context, sh *taskShare, rec *taskRecord)) {
	s := c.srv
	c.offReader(r, func(ctx context.Context) {
		rec, err := s.tasks.share.lookup(ctx, p.id)
		if err != nil {
			r.fail(s.storeError(p.id, err))
			return
		}
		if rec == nil || !rec.reachable(r) {
			r.fail(wire.InvalidParams("unknown task " + p.id))
			return
		}
		answer(ctx, s.tasks.share, rec)
	})
}

// offReader runs fn on its own goroutine with the request's context: the
// store may be slow or down, and a session's reader must not wait for it.
func (c *session) offReader(r *request, fn func(ctx context.Context)) {
	if !c.enter() {
		r.fail(errClosing())
		return
	}
	c.goEntered(func() {
		ctx, cancel := c.srv.requestContext(r)
		defer cancel()
		fn(ctx)
	})
}

// requestContext ends when the server stops or the request's client goes.
func (s *Server) requestContext(r *request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(s.base)
	if r.Gone != nil {
		go func() {
			select {
			case <-r.Gone:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// storeError answers a request that needed the store when it could not
// be reached; it names the store and what it said.
func (s *Server) storeError(id string, err error) *wire.Error {
	if s.base.Err() != nil {
		return errClosing()
	}
	if errors.Is(err, errNoReply) {
		return wire.Internal("Task " + id + ": the replica running it did not answer within " + ownerReplyWait.String())
	}
	msg := err.Error()
	if !strings.Contains(msg, state.ErrUnavailable.Error()) {
		msg = state.ErrUnavailable.Error() + ": " + msg
	}
	return wire.Internal("Task " + id + " is not held by this replica and the state store cannot be read: " + msg)
}

func (c *session) remoteGet(r *request, p taskParams) {
	c.remoteTask(r, p, func(_ context.Context, _ *taskShare, rec *taskRecord) {
		c.taskReply(r, rec.fields(true))
	})
}

func (c *session) remoteCancel(r *request, p taskParams) {
	c.remoteTask(r, p, func(ctx context.Context, sh *taskShare, rec *taskRecord) {
		rep := taskOp{Found: true}
		if running(rec.Status) {
			var err error
			if rep, err = sh.ask(ctx, rec, taskOp{Op: "cancel"}); err != nil {
				r.fail(c.srv.storeError(rec.ID, err))
				return
			}
		}
		switch {
		case !rep.Found:
			r.fail(wire.InvalidParams("unknown task " + rec.ID))
		case !rep.Running && !r.modern():
			r.fail(wire.InvalidParams("task " + rec.ID + " has already ended"))
		case r.modern():
			c.taskReply(r, nil)
		default:
			r.reply(rep.Fields)
		}
	})
}

func (c *session) remoteUpdate(r *request, p taskParams) {
	c.remoteTask(r, p, func(ctx context.Context, sh *taskShare, rec *taskRecord) {
		if running(rec.Status) {
			rep, err := sh.ask(ctx, rec, taskOp{Op: "update", Responses: p.responses})
			if err != nil {
				r.fail(c.srv.storeError(rec.ID, err))
				return
			}
			if !rep.Found {
				r.fail(wire.InvalidParams("unknown task " + rec.ID))
				return
			}
		}
		c.taskReply(r, nil)
	})
}

// remoteResult is tasks/result for a task of another replica: it reads
// the record every remoteResultPoll until the task has ended (its owner's
// death ends it too: lookup), the client goes or the server stops.
func (c *session) remoteResult(r *request, p taskParams) {
	s, req := c.srv, r.Request
	c.remoteTask(r, p, func(ctx context.Context, sh *taskShare, rec *taskRecord) {
		tick := time.NewTicker(remoteResultPoll)
		defer tick.Stop()
		for running(rec.Status) {
			select {
			case <-tick.C:
			case <-ctx.Done():
				if s.base.Err() != nil {
					req.Out.Respond(transport.Response{ID: req.Msg.ID, Err: errClosing()})
				} else {
					req.Out.Finish()
				}
				return
			}
			next, err := sh.lookup(ctx, rec.ID)
			if err != nil {
				r.fail(s.storeError(rec.ID, err))
				return
			}
			if next == nil {
				r.fail(wire.Internal("Task " + rec.ID + " is no longer held: it expired or the task store's bound dropped it"))
				return
			}
			rec = next
		}
		var terr *wire.Error
		if rec.Status == taskFailed {
			terr = rec.wireError()
		}
		req.Out.Respond(taskResultResponse(req, rec.ID, rec.Status, rec.Result, terr))
	})
}

// remoteList is tasks/list for a session whose tasks other replicas may
// hold: the local ones and the records of the session's, oldest first.
func (c *session) remoteList(r *request) {
	s := c.srv
	c.offReader(r, func(ctx context.Context) {
		recs := s.tasks.localRecords(r.Session, s.tasks.share.id)
		held := map[string]bool{}
		for _, rec := range recs {
			held[rec.ID] = true
		}
		c2, cancel2 := context.WithTimeout(ctx, storeWait)
		defer cancel2()
		keys, err := s.tasks.share.store.Keys(c2, taskKeyPrefix)
		if err != nil {
			r.fail(s.storeError("list", err))
			return
		}
		for _, k := range keys {
			id := strings.TrimPrefix(k, taskKeyPrefix)
			if held[id] {
				continue
			}
			b, ok, err := s.tasks.share.store.Get(c2, k)
			if err != nil {
				r.fail(s.storeError(id, err))
				return
			}
			if !ok {
				continue
			}
			if rec, err := decodeRecord(id, b); err == nil && !rec.Modern && !rec.Sessionless && rec.Session == r.Session.ID() {
				if running(rec.Status) {
					if rec, err = s.tasks.share.lookup(ctx, id); err != nil || rec == nil {
						continue // presence decides; a record gone meanwhile is not listed
					}
				}
				recs = append(recs, *rec)
			}
		}
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].Created.Before(recs[j].Created) })
		items := make([]json.RawMessage, len(recs))
		for i := range recs {
			items[i] = object(recs[i].fields(false)...)
		}
		c.taskReply(r, []field{{"tasks", wire.Marshal(items)}})
	})
}
