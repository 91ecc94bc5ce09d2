package transport

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// A JSON-RPC batch (revision 2025-03-26 only, wire.BatchVersion) is served
// as its members: each goes through the gates as a line of its own and, if
// it is a request or a notification, to the server like any other message.
// Their answers are gathered by a Batch and leave as one array once the
// last request is answered; the members' notifications (progress, logs)
// go out as they come, as for a single request.

// SplitBatch gates each member of a batch. Requests and notifications come
// back in order as Requests with their era decided (Out is the caller's to
// set); members that are refused come back as the error lines that answer
// them: a gate's refusal, an initialize request (which "MUST NOT be part of
// a JSON-RPC batch"), and a 2026-07-28 request, which has no batches.
// logf receives each refusal's log sentence.
func SplitBatch(members [][]byte, versionHeader string, modernEnabled func() bool, logf func(sentence string)) (reqs []*Request, refused [][]byte) {
	for _, m := range members {
		msg, gerr := wire.Parse(m)
		switch {
		case gerr != nil:
			logf("JSON-RPC batch member refused: " + gerr.Sentence)
			refused = append(refused, gerr.Line())
			continue
		case msg == nil:
			continue
		case msg.IsResponse:
			// An answer to a request the server sent: handed on as it is
			// (Answers says it gets no answer of its own).
			reqs = append(reqs, &Request{Msg: msg})
			continue
		}
		req := Decode(msg, versionHeader, modernEnabled)
		var why *wire.Error
		switch {
		case msg.Method == "initialize":
			why = wire.InitializeInBatch()
		case req.Era == Modern:
			why = wire.InvalidRequest("a JSON-RPC batch may hold " + wire.BatchVersion + " messages only")
		}
		if why != nil {
			logf("JSON-RPC batch member refused: " + why.Message)
			if msg.HasID {
				refused = append(refused, Response{ID: msg.ID, Err: why}.Line())
			}
			continue
		}
		reqs = append(reqs, req)
	}
	return reqs, refused
}

// Batch gathers the answers to one batch's requests.
type Batch struct {
	out     Stream
	mu      sync.Mutex
	pending int
	lines   [][]byte
	done    bool
	written chan struct{} // closed once the array went out (or none will)
}

// NewBatch starts gathering: out gets the members' notifications at once
// and, when the last of requests answers have come (the refused members'
// lines count as already there), one Response holding the array. With no
// line at all to send (only notifications, or every request cancelled),
// out is finished without a response. requests is how many members will
// answer through Member; with none, the array goes out now.
func NewBatch(out Stream, requests int, refused [][]byte) *Batch {
	b := &Batch{out: out, pending: requests, lines: refused, written: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	return b
}

// Answers reports whether a batch member is answered (through Member): a
// request, not a notification nor a client's response.
func Answers(r *Request) bool { return r.Msg.HasID && !r.Msg.IsResponse }

// Member is the Stream a member request of the batch answers on.
func (b *Batch) Member() Stream { return batchMember{b} }

// answered takes one request's answer (nil: it gets none).
func (b *Batch) answered(line []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if line != nil {
		b.lines = append(b.lines, line)
	}
	b.pending--
	b.flushLocked()
}

func (b *Batch) flushLocked() {
	if b.pending > 0 || b.done {
		return
	}
	b.done = true
	defer close(b.written)
	if len(b.lines) == 0 {
		b.out.Finish()
		return
	}
	arr := []byte{'['}
	for i, l := range b.lines {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, bytes.TrimRight(l, "\n")...)
	}
	b.out.Respond(Response{Raw: append(arr, ']', '\n')})
	b.lines = nil
}

type batchMember struct{ b *Batch }

func (m batchMember) Notify(method string, params json.RawMessage) { m.b.out.Notify(method, params) }
func (m batchMember) Respond(r Response)                           { m.b.answered(r.Line()) }
func (m batchMember) Finish()                                      { m.b.answered(nil) }

// Written is closed once the batch's array has been written (or the batch
// ended without one): until then a member's answer is held in memory, and
// the server counts it against the slot that produced it.
func (m batchMember) Written() <-chan struct{} { return m.b.written }

// WrittenOf finds, under s and the wrappers that give it back with
// Unwrap, a stream whose answers are held until a later write (a batch
// member's) and returns the channel closed at that write; false for a
// stream that writes an answer when it is given.
func WrittenOf(s Stream) (<-chan struct{}, bool) {
	for s != nil {
		if w, ok := s.(interface{ Written() <-chan struct{} }); ok {
			return w.Written(), true
		}
		u, ok := s.(interface{ Unwrap() Stream })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	return nil, false
}
