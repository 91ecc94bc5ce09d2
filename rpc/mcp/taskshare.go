package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Tasks shared between replicas (issue 26), with a shared state store
// only: without one none of this exists and nothing here starts.
//
// The replica that creates a task owns it: it runs the tool and keeps the
// task in its own store (tasks.go), its fast path, and writes the task's
// record to the shared store under mcp-bashd:task:<id> at creation, on
// each status change and at the end (progress messages coalesced). Any
// other replica answers tasks/get, tasks/result and tasks/list from the
// record; tasks/cancel and tasks/update are published on the owner's
// channel (mcp-bashd:replica:<owner>:tasks), which it applies as it
// applies a local request and answers on the asker's channel. A record
// lives as long as the local store keeps the task, never forever.
//
// The owner renews its presence (state.PresenceKey); a running task whose
// owner has no presence reads as failed, "the replica running this task
// stopped", and is written back so. While the store cannot be reached a
// request about a task not held here answers an error naming the store;
// the owner writes its tasks again once the store is back (a restarted
// Redis is empty: until then another replica reads an unknown task).

const (
	taskKeyPrefix = "mcp-bashd:task:"
	// ownerGoneMessage is a task's status message and error once its
	// owner stopped renewing its presence while the task ran.
	ownerGoneMessage = "the replica running this task stopped"
	// runningRecordFloor is the least a running task's record is kept
	// for, even past its TTL (a running task is never dropped); the
	// presence loop renews it before it runs out.
	runningRecordFloor = time.Minute
	// progressCoalesce gathers a task's progress messages into one write.
	progressCoalesce = 200 * time.Millisecond
	// remoteResultPoll is how often a tasks/result on another replica
	// reads the record while it waits for the end.
	remoteResultPoll = 250 * time.Millisecond
	// ownerReplyWait bounds the wait for the owner's answer to a
	// cancel or update; then its presence decides.
	ownerReplyWait = 5 * time.Second
	// storeWait bounds one store operation.
	storeWait = 3 * time.Second
)

func taskKey(id string) string { return taskKeyPrefix + id }

// replicaTasksChannel is where replica id hears the cancels and updates
// of its tasks, and the answers to its own.
func replicaTasksChannel(id string) string { return "mcp-bashd:replica:" + id + ":tasks" }

// taskRecord is a task as the shared store holds it.
type taskRecord struct {
	ID          string          `json:"id"`
	Status      string          `json:"status"`
	Message     string          `json:"statusMessage,omitempty"`
	Created     time.Time       `json:"createdAt"`
	Updated     time.Time       `json:"lastUpdatedAt"`
	TTLms       int64           `json:"ttlMs"`
	Modern      bool            `json:"modern"`
	Tool        string          `json:"tool"`
	Owner       string          `json:"owner"`
	Session     string          `json:"session,omitempty"`     // the 2025-11-25 session's Mcp-Session-Id
	Sessionless bool            `json:"sessionless,omitempty"` // made by a request without a session
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *recordError    `json:"error,omitempty"`
	Inputs      []recordInput   `json:"inputRequests,omitempty"`
}

type recordError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type recordInput struct {
	Key     string          `json:"key"`
	Request json.RawMessage `json:"request"`
}

func running(status string) bool { return status == taskWorking || status == taskAwaiting }

// encodeRecord is rec's JSON, its results' bytes as they are (no HTML
// escaping: a result read from another replica is the owner's, byte for
// byte).
func encodeRecord(rec *taskRecord) []byte { return wire.Marshal(rec) }

func decodeRecord(id string, b []byte) (*taskRecord, error) {
	var rec taskRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.ID != id {
		return nil, fmt.Errorf("%w: %s holds no task record", state.ErrUnavailable, taskKey(id))
	}
	return &rec, nil
}

// recordLocked is tk as a record (st.mu held).
func (st *taskStore) recordLocked(tk *task, owner string) taskRecord {
	rec := taskRecord{ID: tk.id, Status: tk.status, Message: tk.message, Created: tk.created, Updated: tk.updated,
		TTLms: tk.ttl.Milliseconds(), Modern: tk.modern, Tool: tk.tool, Owner: owner, Result: tk.result,
		Session: tk.session.ID(), Sessionless: tk.session.Standalone()}
	if tk.err != nil {
		rec.Error = &recordError{Code: tk.err.Code, Message: tk.err.Message}
	}
	for _, in := range tk.inputs {
		rec.Inputs = append(rec.Inputs, recordInput{Key: in.key, Request: in.request})
	}
	return rec
}

// fields are the Task members of rec as its shape has them; detailed
// adds, in 2026, the inlined result, error or inputRequests.
func (rec *taskRecord) fields(detailed bool) []field {
	ttl := json.RawMessage(fmt.Sprint(rec.TTLms))
	fs := []field{
		{"taskId", wire.Quote(rec.ID)},
		{"status", wire.Quote(rec.Status)},
	}
	if rec.Message != "" {
		fs = append(fs, field{"statusMessage", wire.Quote(rec.Message)})
	}
	fs = append(fs, field{"createdAt", wire.Quote(rec.Created.Format(time.RFC3339Nano))},
		field{"lastUpdatedAt", wire.Quote(rec.Updated.Format(time.RFC3339Nano))})
	if !rec.Modern {
		return append(fs, field{"ttl", ttl}, field{"pollInterval", json.RawMessage(fmt.Sprint(taskPollMs))})
	}
	fs = append(fs, field{"ttlMs", ttl}, field{"pollIntervalMs", json.RawMessage(fmt.Sprint(taskPollMs))})
	if !detailed {
		return fs
	}
	switch rec.Status {
	case taskCompleted:
		fs = append(fs, field{"result", rec.Result})
	case taskFailed:
		e := rec.wireError()
		fs = append(fs, field{"error", object(field{"code", json.RawMessage(fmt.Sprint(e.Code))}, field{"message", wire.Quote(e.Message)})})
	case taskAwaiting:
		ms := make([]wire.Member, len(rec.Inputs))
		for i, in := range rec.Inputs {
			ms[i] = wire.Member{Key: in.Key, Val: in.Request}
		}
		fs = append(fs, field{"inputRequests", wire.Object(ms...)})
	}
	return fs
}

func (rec *taskRecord) wireError() *wire.Error {
	if rec.Error == nil {
		return wire.Internal("Task " + rec.ID + " failed")
	}
	return wire.NewError(rec.Error.Code, rec.Error.Message)
}

// reachable is sameTaskOwner for a record: of the request's shape and, in
// 2025-11-25, of its session (by Mcp-Session-Id), or sessionless for a
// sessionless request. A task of a session without an id (stdio) is
// reachable on its own replica only.
func (rec *taskRecord) reachable(r *request) bool {
	switch {
	case rec.Modern != r.modern():
		return false
	case rec.Modern:
		return true
	case rec.Sessionless:
		return r.Session.Standalone()
	}
	return rec.Session != "" && !r.Session.Standalone() && r.Session.ID() == rec.Session
}

// orphan makes a running record failed: its owner stopped.
func (rec *taskRecord) orphan() {
	rec.Status, rec.Message, rec.Inputs, rec.Result = taskFailed, ownerGoneMessage, nil, nil
	rec.Error = &recordError{Code: wire.CodeInternal, Message: ownerGoneMessage}
	rec.Updated = time.Now().UTC()
}

// keepFor is how long the store keeps rec from now, by the local store's
// rule: its TTL from creation, at least one TTL when it is over; a running
// task at least runningRecordFloor.
func (rec *taskRecord) keepFor(now time.Time) time.Duration {
	ttl := time.Duration(rec.TTLms) * time.Millisecond
	keep := rec.Created.Add(ttl).Sub(now)
	if running(rec.Status) {
		return max(keep, runningRecordFloor)
	}
	if keep <= 0 {
		keep = ttl
	}
	return max(keep, time.Millisecond)
}

// taskOp is a message on a replica's tasks channel: a cancel or update
// for the owner, or the owner's reply to the asker.
type taskOp struct {
	Op        string                     `json:"op"` // cancel, update, reply
	Task      string                     `json:"task"`
	Responses map[string]json.RawMessage `json:"responses,omitempty"`
	From      string                     `json:"from,omitempty"`
	Nonce     string                     `json:"nonce"`
	Found     bool                       `json:"found,omitempty"`   // reply: the owner holds the task
	Running   bool                       `json:"running,omitempty"` // reply: it ran when the op came
	Fields    json.RawMessage            `json:"fields,omitempty"`  // reply to a 2025-11-25 cancel
}

// taskShare is a replica's side of the shared tasks.
type taskShare struct {
	st    *taskStore
	store state.Store
	id    string
	log   *zap.Logger

	present atomic.Bool // the presence key was written and not since lost
	renewed atomic.Bool // the presence loop has tried once
	dirty   atomic.Bool // a record write failed: write them all again

	mu      sync.Mutex
	waiting map[string]chan taskOp // by nonce: the replies awaited
}

func newTaskShare(st *taskStore, store state.Store, id string, log *zap.Logger) *taskShare {
	return &taskShare{st: st, store: store, id: id, log: log, waiting: map[string]chan taskOp{}}
}

// run keeps this replica present, subscribed to its channel and its
// records in the store until ctx ends (the server's stop).
func (sh *taskShare) run(ctx context.Context) {
	go sh.subscribe(ctx)
	tick := time.NewTicker(state.PresenceEvery)
	defer tick.Stop()
	for {
		sh.renew(ctx)
		select {
		case <-ctx.Done():
			c, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = state.Absent(c, sh.store, sh.id)
			cancel()
			return
		case <-tick.C:
		}
	}
}

// subscribe subscribes to the replica's channel, retrying every
// PresenceEvery while the store is down (once subscribed, the client
// resubscribes by itself after a reconnect).
func (sh *taskShare) subscribe(ctx context.Context) {
	for {
		err := sh.store.Subscribe(ctx, replicaTasksChannel(sh.id), func(msg []byte) { go sh.handle(msg) })
		if err == nil {
			return
		}
		sh.log.Warn("state store: not subscribed to this replica's task channel yet; cancels and updates from other replicas wait", zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(state.PresenceEvery):
		}
	}
}

// renew writes the presence key; when the store lost it (it was down, or
// restarted empty) or a record write failed, every task held is written
// again, presence first, so no reader takes them for orphans.
func (sh *taskShare) renew(ctx context.Context) {
	c, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	had, err := state.Present(c, sh.store, sh.id)
	if err == nil {
		err = state.MarkPresent(c, sh.store, sh.id)
	}
	if err != nil {
		sh.renewed.Store(true)
		if sh.present.Swap(false) {
			sh.log.Warn("state store unreachable: this replica's presence and tasks are not shared until it is back", zap.Error(err))
		}
		sh.dirty.Store(true)
		return
	}
	sh.renewed.Store(true)
	lost := !had && sh.present.Load()
	sh.present.Store(true)
	all := sh.dirty.Swap(false) || lost
	if all {
		sh.log.Info("state store reachable: writing this replica's tasks to it again")
	}
	sh.republish(all)
}

// republish writes the records of the tasks held: all of them, or the
// running ones whose record would run out before the next renewals.
func (sh *taskShare) republish(all bool) {
	now := time.Now()
	var tks []*task
	sh.st.mu.Lock()
	for _, tk := range sh.st.m {
		if all || (running(tk.status) && tk.recExpires.Sub(now) < 3*state.PresenceEvery) {
			tks = append(tks, tk)
		}
	}
	sh.st.mu.Unlock()
	for _, tk := range tks {
		sh.write(tk)
	}
}

// write puts tk's record as it is now. Writes of one task are serial and
// each takes its snapshot once it has the turn, so an older state never
// lands after a newer one.
func (sh *taskShare) write(tk *task) {
	tk.wmu.Lock()
	defer tk.wmu.Unlock()
	now := time.Now()
	sh.st.mu.Lock()
	held := sh.st.m[tk.id] == tk
	rec := sh.st.recordLocked(tk, sh.id)
	keep := rec.keepFor(now)
	if !tk.expires.IsZero() {
		keep = tk.expires.Sub(now) // ended: as long as the local store keeps it
	}
	sh.st.mu.Unlock()
	if !held || keep <= 0 {
		return // dropped here: its record runs out (or was deleted) too
	}
	if !sh.renewed.Load() {
		// The first write may come before the presence loop's: a reader
		// must not take the task for an orphan.
		c, cancel := context.WithTimeout(context.Background(), storeWait)
		if state.MarkPresent(c, sh.store, sh.id) == nil {
			sh.present.Store(true)
		}
		cancel()
	}
	c, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := sh.store.Set(c, taskKey(tk.id), encodeRecord(&rec), keep); err != nil {
		sh.dirty.Store(true)
		sh.log.Warn("task not shared: the state store did not take its record; other replicas read it once the store is back", zap.String("task", tk.id), zap.Error(err))
		return
	}
	sh.st.mu.Lock()
	tk.recExpires = now.Add(keep)
	sh.st.mu.Unlock()
}

// soon writes tk's record for a progress message: at once, then at most
// once per progressCoalesce while messages keep coming (the last one is
// always written).
func (sh *taskShare) soon(tk *task) {
	sh.st.mu.Lock()
	busy := tk.writeSoon
	tk.writeSoon, tk.writeAgain = true, busy
	sh.st.mu.Unlock()
	if busy {
		return
	}
	go func() {
		for {
			sh.write(tk)
			t := time.NewTimer(progressCoalesce)
			<-t.C
			sh.st.mu.Lock()
			again := tk.writeAgain
			tk.writeSoon, tk.writeAgain = again, false
			sh.st.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

// forget deletes a dropped task's record (the bound evicted it), so no
// replica answers what its owner no longer holds.
func (sh *taskShare) forget(id string) {
	go func() {
		c, cancel := context.WithTimeout(context.Background(), storeWait)
		defer cancel()
		_ = sh.store.Del(c, taskKey(id))
	}()
}

// put writes a record read from the store back (an orphan made failed).
func (sh *taskShare) put(ctx context.Context, rec *taskRecord) error {
	return sh.store.Set(ctx, taskKey(rec.ID), encodeRecord(rec), rec.keepFor(time.Now()))
}

// lookup reads task id's record: nil when the store has none. A running
// task whose owner is gone (no presence; or this replica, which does not
// hold it: it was restarted) is made failed and written back so.
func (sh *taskShare) lookup(ctx context.Context, id string) (*taskRecord, error) {
	c, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	b, ok, err := sh.store.Get(c, taskKey(id))
	if err != nil || !ok {
		return nil, err
	}
	rec, err := decodeRecord(id, b)
	if err != nil || !running(rec.Status) {
		return rec, err
	}
	gone := rec.Owner == sh.id
	if !gone {
		present, err := state.Present(c, sh.store, rec.Owner)
		if err != nil {
			return nil, err
		}
		gone = !present
	}
	if gone {
		rec.orphan()
		sh.log.Warn("task's replica is gone: the task failed", zap.String("task", id), zap.String("owner", rec.Owner))
		if err := sh.put(c, rec); err != nil {
			sh.log.Warn("failed task not written back", zap.String("task", id), zap.Error(err))
		}
	}
	return rec, nil
}

// handle is a message on this replica's channel.
func (sh *taskShare) handle(msg []byte) {
	var op taskOp
	if json.Unmarshal(msg, &op) != nil {
		return
	}
	if op.Op == "reply" {
		sh.mu.Lock()
		ch := sh.waiting[op.Nonce]
		delete(sh.waiting, op.Nonce)
		sh.mu.Unlock()
		if ch != nil {
			ch <- op
		}
		return
	}
	reply := taskOp{Op: "reply", Task: op.Task, Nonce: op.Nonce}
	if tk := sh.st.get(op.Task); tk != nil {
		reply.Found = true
		switch op.Op {
		case "cancel":
			reply.Running = sh.st.cancel(tk)
			if !tk.modern {
				reply.Fields = object(sh.st.fields(tk, false)...)
			}
		case "update":
			sh.st.mu.Lock()
			reply.Running = running(tk.status)
			sh.st.mu.Unlock()
			sh.st.answer(tk, op.Responses)
		}
		sh.log.Info("task request from another replica", zap.String("op", op.Op), zap.String("task", op.Task), zap.String("from", op.From))
	}
	c, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := sh.store.Publish(c, replicaTasksChannel(op.From), wire.Marshal(reply)); err != nil {
		sh.log.Warn("reply to another replica not sent", zap.String("task", op.Task), zap.String("to", op.From), zap.Error(err))
	}
}

// errNoReply: the owner is present but did not answer in time.
var errNoReply = errors.New("no reply")

// ask sends op to rec's owner and waits for its reply. When none comes,
// the owner's presence decides: gone, the task reads as ended (failed).
func (sh *taskShare) ask(ctx context.Context, rec *taskRecord, op taskOp) (taskOp, error) {
	op.From, op.Nonce, op.Task = sh.id, newTaskID(), rec.ID
	ch := make(chan taskOp, 1)
	sh.mu.Lock()
	sh.waiting[op.Nonce] = ch
	sh.mu.Unlock()
	defer func() {
		sh.mu.Lock()
		delete(sh.waiting, op.Nonce)
		sh.mu.Unlock()
	}()
	c, cancel := context.WithTimeout(ctx, storeWait)
	err := sh.store.Publish(c, replicaTasksChannel(rec.Owner), wire.Marshal(op))
	cancel()
	if err != nil {
		return taskOp{}, err
	}
	t := time.NewTimer(ownerReplyWait)
	defer t.Stop()
	select {
	case rep := <-ch:
		return rep, nil
	case <-ctx.Done():
		return taskOp{}, ctx.Err()
	case <-t.C:
	}
	now, err := sh.lookup(ctx, rec.ID)
	switch {
	case err != nil:
		return taskOp{}, err
	case now == nil:
		return taskOp{Found: false}, nil
	case !running(now.Status):
		return taskOp{Found: true, Fields: object(now.fields(false)...)}, nil
	}
	return taskOp{}, errNoReply
}
