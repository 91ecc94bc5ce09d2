package streamhttp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// batchAllowed says whether a POST may carry a JSON-RPC batch: only when
// the request is known to speak 2025-03-26, the one revision with batches
// (wire.BatchVersion) — its MCP-Protocol-Version header says so, or the
// session it names negotiated that revision. Otherwise an array keeps the
// gates' -32600, as every other revision (and the bash SDK) has it.
func (h *Handler) batchAllowed(r *http.Request) bool {
	if strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")) == wire.BatchVersion {
		return true
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" || h.opt.Sessionless {
		return false
	}
	h.mu.Lock()
	sc := h.sessions[id]
	h.mu.Unlock()
	return sc != nil && sc.session.Version() == wire.BatchVersion
}

// serveBatch serves a POST body that is a JSON-RPC batch, as 2025-03-26's
// transport says: a batch of notifications only is accepted with 202 and
// no body; one holding requests is answered with the array of their
// responses (JSON, or the last event of an SSE stream when a member's
// notifications went out first). The members run as the session's (or,
// without one, as a stateless connection's) requests.
func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request, members [][]byte) {
	if len(members) == 0 {
		h.opt.Log.Info("empty JSON-RPC batch refused")
		writeJSON(w, http.StatusBadRequest, wire.EmptyBatch())
		return
	}
	reqs, refused := transport.SplitBatch(members, strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")), h.opt.ModernEnabled,
		func(s string) { h.opt.Log.Info(s) })
	// A member that changes the session or runs bash makes the batch read
	// a shared session's record first, as such a request alone does
	// (shared.go); the method matters for nothing else here.
	method := ""
	for _, req := range reqs {
		if reads(req.Msg.Method) {
			method = req.Msg.Method
		}
	}
	sc, status, why := h.legacySession(r, method)
	if status != 0 {
		reject(w, status, why)
		return
	}
	st := newStream(w, r, h.opt.IOTimeout, false)
	defer st.handlerEnd()
	session := transport.NewStandaloneSession() // a client that keeps no session
	if sc != nil {
		st.sessionID, session = sc.id, sc.session
		if h.sh != nil {
			st.beforeRespond = func() { h.sh.flush(sc) }
		}
	}
	answers := 0
	for _, req := range reqs {
		if transport.Answers(req) {
			answers++
		}
	}
	var out func() transport.Stream
	if answers == 0 && len(refused) == 0 {
		out = func() transport.Stream { return noOutput{} }
	} else {
		b := transport.NewBatch(st, answers, refused)
		out = b.Member
	}
	for _, req := range reqs {
		req.Session, req.Out, req.Gone = session, out(), r.Context().Done()
	}
	h.deliverAll(sc, reqs, st, r)
	if sc != nil {
		defer sc.forget(st)
	}
	if answers == 0 && len(refused) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.await(st, r)
}

// deliverAll hands a batch's members to the session's reader in order, or
// (without a session, or once it has ended) to a stateless connection.
func (h *Handler) deliverAll(sc *sessionConn, reqs []*transport.Request, st *stream, r *http.Request) {
	for i, req := range reqs {
		if sc == nil || !sc.deliver(req, st, r.Context().Done()) {
			rest := reqs[i:]
			go h.opt.Serve(&oneConn{reqs: rest, session: rest[0].Session, st: st})
			return
		}
	}
}

// noOutput is where a notification of a batch without requests answers:
// nowhere, as a notification never gets an answer.
type noOutput struct{}

func (noOutput) Notify(string, json.RawMessage) {}
func (noOutput) Respond(transport.Response)     {}
func (noOutput) Finish()                        {}
