package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// 2026-07-28 multi round-trip requests (MRTR, SEP-2322). That revision has
// no server→client requests: a tool that asks the client (mcp_elicit,
// mcp_sample, mcp_roots, mcp_ask_all) ends its call with an
// input_required result naming the requests, and the client retries the
// same request with inputResponses. The tool then runs again from the
// start, and each ask it repeats is answered from the responses instead
// of ending the call. Answers from earlier rounds travel in requestState,
// which the daemon signs so a client cannot forge what the tool reads as
// the user's earlier answers, nor replay one request's state on another.

// StateKeyEnv names the environment variable holding the secret that
// signs requestState. Unset, each daemon draws a random key, and a
// retry must reach the daemon that issued the state: set the same secret
// on every daemon behind one URL.
const StateKeyEnv = "MCP_BASHD_STATE_KEY"

// stateSigner signs and checks requestState (HMAC-SHA256).
type stateSigner struct{ key []byte }

// newStateSigner keys a signer with secret, or a random key when secret
// is empty.
func newStateSigner(secret string) stateSigner {
	if secret != "" {
		k := sha256.Sum256([]byte("mcp-bashd requestState\x00" + secret))
		return stateSigner{key: k[:]}
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("mcp-bashd: no randomness for the requestState key: " + err.Error())
	}
	return stateSigner{key: k}
}

// roundState is what requestState carries: the request it belongs to and
// the answers the tool has read so far.
type roundState struct {
	Version int                        `json:"v"`
	Request string                     `json:"r"` // requestBinding
	Answers map[string]json.RawMessage `json:"a"`
}

const stateVersion = 1

var b64 = base64.RawURLEncoding

// seal is st as requestState: its JSON and its MAC, each base64url.
func (s stateSigner) seal(st roundState) string {
	st.Version = stateVersion
	if st.Answers == nil {
		st.Answers = map[string]json.RawMessage{}
	}
	payload, err := json.Marshal(st)
	if err != nil { // raw answers were checked to be JSON objects
		panic("mcp-bashd: requestState: " + err.Error())
	}
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(s.mac(payload))
}

func (s stateSigner) mac(payload []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write(payload)
	return h.Sum(nil)
}

var errStateIntegrity = errors.New("requestState failed its integrity check (it was altered, or issued by another server)")

// open checks a requestState's MAC and decodes it.
func (s stateSigner) open(state string) (roundState, error) {
	var st roundState
	p, m, ok := strings.Cut(state, ".")
	if !ok {
		return st, errStateIntegrity
	}
	payload, err1 := b64.DecodeString(p)
	sum, err2 := b64.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(sum, s.mac(payload)) {
		return st, errStateIntegrity
	}
	if json.Unmarshal(payload, &st) != nil || st.Version != stateVersion {
		return st, errStateIntegrity
	}
	return st, nil
}

// requestBinding names one request's content — method, tool or prompt
// name and arguments — so a state is only accepted on a retry of the
// request it was issued for.
func requestBinding(method, name string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(method + "\x00" + name + "\x00"))
	h.Write(wire.Compact(args))
	return hex.EncodeToString(h.Sum(nil))
}

// askCapability is the client capability each request an MRTR round may
// carry needs (the revision's InputRequest: these three methods only).
var askCapability = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// inputRequest is one request of an input_required round.
type inputRequest struct {
	key, method string
	params      json.RawMessage
}

// mrtrCall is one 2026 request's ask state: the answers it came with and
// what its run asked for. Ask is called from a goroutine per ask record.
type mrtrCall struct {
	signer  stateSigner
	binding string
	caps    map[string]json.RawMessage
	known   map[string]json.RawMessage // earlier rounds' answers, then this retry's inputResponses

	mu      sync.Mutex
	read    map[string]json.RawMessage // answers the run read: the next round's state
	pending []inputRequest             // unanswered asks, in order
	lacking map[string]json.RawMessage // capabilities asks needed and the client did not declare: name → what was needed
}

// rounds are a 2026 request's answers to earlier rounds, as written:
// requestState and inputResponses (nil when absent), decoded with the
// rest of its params and checked by newMRTR.
type rounds struct {
	state, responses json.RawMessage
}

// roundsJSON decodes rounds inside a method's params struct.
type roundsJSON struct {
	RequestState   json.RawMessage `json:"requestState"`
	InputResponses json.RawMessage `json:"inputResponses"`
}

func (r roundsJSON) rounds() rounds {
	return rounds{state: r.RequestState, responses: r.InputResponses}
}

// newMRTR checks a 2026 request's inputResponses and requestState (rd);
// method, name and args are what the state is bound to, caps is _meta's
// clientCapabilities. A malformed or tampered input is -32602.
func newMRTR(signer stateSigner, rd rounds, method, name string, args json.RawMessage, caps map[string]json.RawMessage) (*mrtrCall, *wire.Error) {
	m := &mrtrCall{
		signer: signer, binding: requestBinding(method, name, args),
		known: map[string]json.RawMessage{}, read: map[string]json.RawMessage{},
		lacking: map[string]json.RawMessage{}, caps: caps,
	}
	state, responses := rd.state, rd.responses
	if state != nil {
		var s string
		if json.Unmarshal(state, &s) != nil {
			return nil, wire.InvalidParams("requestState must be a string")
		}
		st, err := signer.open(s)
		if err != nil {
			return nil, wire.InvalidParams(err.Error())
		}
		if st.Request != m.binding {
			return nil, wire.InvalidParams("requestState was issued for another request (a different " + method + " name or arguments)")
		}
		for k, v := range st.Answers {
			m.known[k] = v
		}
	}
	if responses != nil {
		rs, err := wire.SplitObject(responses)
		if err != nil {
			return nil, wire.InvalidParams("inputResponses must be an object")
		}
		for _, r := range rs {
			if wire.FirstByte(r.Val) != '{' {
				return nil, wire.InvalidParams("inputResponses." + r.Key + " must be an object (the client's result for that input request)")
			}
			m.known[r.Key] = r.Val // a fresh answer wins over a carried one
		}
	}
	return m, nil
}

// askKey is the key of an ask the tool did not name (mcp_elicit,
// mcp_sample, mcp_roots): derived from its content, so the run after a
// retry, asking the same thing, finds the answer under the same key.
func askKey(method string, params json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(method + "\x00"))
	h.Write(wire.Compact(orEmpty(params)))
	prefix, _, _ := strings.Cut(method, "/")
	return prefix + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

func orEmpty(params json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(params)) == 0 || wire.FirstByte(params) == 'n' {
		return json.RawMessage(`{}`)
	}
	return params
}

// Ask is the call's supervisor.Request.Ask in 2026: each request answered
// by the client's responses gets its answer; otherwise the unanswered ones
// are kept for the input_required result and the call ends (an error
// wrapping supervisor.ErrEndCall). A request whose capability the client
// did not declare fails the ask, and the tool may go on without it.
func (m *mrtrCall) Ask(_ context.Context, items []supervisor.AskItem) ([]json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	reqs := make([]inputRequest, len(items))
	var lacking []string
	for _, it := range items {
		capName, ok := askCapability[it.Method]
		if !ok {
			return nil, fmt.Errorf("%s cannot be asked of a 2026-07-28 client: only elicitation/create, sampling/createMessage and roots/list can", it.Method)
		}
		if need := m.missing(capName, it.Params); need != nil {
			m.lacking[capName] = need
			if !slices.Contains(lacking, capName) {
				lacking = append(lacking, capName)
			}
		}
	}
	if len(lacking) > 0 {
		return nil, fmt.Errorf("the client did not declare the %s capability, so it cannot be asked that", strings.Join(lacking, " and "))
	}
	for i, it := range items {
		key := it.Key
		if key == "" {
			key = askKey(it.Method, it.Params)
		}
		reqs[i] = inputRequest{key: key, method: it.Method, params: orEmpty(it.Params)}
	}
	out := make([]json.RawMessage, len(reqs))
	var missing []string
	for i, r := range reqs {
		if a, ok := m.known[r.key]; ok {
			out[i] = a
			m.read[r.key] = a
			continue
		}
		missing = append(missing, r.key)
		m.addPending(r)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: the answer comes with the client's retry (input_required: %s)", supervisor.ErrEndCall, strings.Join(missing, ", "))
	}
	return out, nil
}

// missing is what the request needs of the client's capabilities that
// they lack, as requiredCapabilities spells it ({} for the capability
// itself, {"url":{}} for URL-mode elicitation); nil when they allow it.
func (m *mrtrCall) missing(capName string, params json.RawMessage) json.RawMessage {
	c, ok := m.caps[capName]
	if !ok || wire.FirstByte(c) != '{' {
		return json.RawMessage(`{}`)
	}
	if capName != "elicitation" {
		return nil
	}
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(params, &p)
	if p.Mode != "url" {
		return nil // form mode: elicitation: {} declares it
	}
	var modes map[string]json.RawMessage
	_ = json.Unmarshal(c, &modes)
	if _, ok := modes["url"]; ok {
		return nil
	}
	return json.RawMessage(`{"url":{}}`)
}

func (m *mrtrCall) addPending(r inputRequest) {
	for _, p := range m.pending {
		if p.key == r.key {
			return
		}
	}
	m.pending = append(m.pending, r)
}

// inputRequired is the input_required result of a run that ended on an
// unanswered ask (before the _meta every 2026 result gets); nil when
// nothing is pending.
func (m *mrtrCall) inputRequired() json.RawMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return nil
	}
	reqs := make([]wire.Member, len(m.pending))
	for i, p := range m.pending {
		reqs[i] = wire.Member{Key: p.key, Val: object(field{"method", wire.Quote(p.method)}, field{"params", p.params})}
	}
	state := m.signer.seal(roundState{Request: m.binding, Answers: m.read})
	return object(
		field{"resultType", json.RawMessage(`"input_required"`)},
		field{"inputRequests", wire.Object(reqs...)},
		field{"requestState", wire.Quote(state)},
	)
}

// missingCapability is the -32021 error for a run that failed after an ask
// the client's capabilities did not allow: what stopped it is the
// missing capability, not the tool; nil when no ask was refused so.
func (m *mrtrCall) missingCapability(what string) *wire.Error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.lacking) == 0 {
		return nil
	}
	names := make([]string, 0, len(m.lacking))
	for n := range m.lacking {
		names = append(names, n)
	}
	sort.Strings(names)
	caps := make([]wire.Member, len(names))
	for i, n := range names {
		caps[i] = wire.Member{Key: n, Val: m.lacking[n]}
	}
	return wire.MissingCapability(": "+what+" needs "+strings.Join(names, ", "), wire.Object(caps...))
}

// ended is the answer to a run that an unanswered ask ended: its
// input_required result; false for any other run (and on a nil m, the
// session eras). The supervisor only ends a call for an ErrEndCall from
// Ask, so a pending request is there; should it not be, the run is an
// error, never a silent empty result.
func (m *mrtrCall) ended(oc supervisor.Outcome) (*Result, bool) {
	if m == nil || oc.End != supervisor.EndedToAsk {
		return nil, false
	}
	if ir := m.inputRequired(); ir != nil {
		return &Result{Body: ir}, true
	}
	return errorResult(noPending), true
}

const noPending = "mcp-bashd: the run was ended for the client's input, but no input request was recorded"

// answer is a 2026 function run's response when MRTR decides it: the
// input_required result of a run an ask ended, or -32021 for a failed run
// after an ask the client's capabilities did not allow. false: the
// function's own result or failure applies.
func (m *mrtrCall) answer(id json.RawMessage, oc supervisor.Outcome, cfg *catalog.Config, what string) (transport.Response, bool) {
	if m == nil {
		return transport.Response{}, false
	}
	if oc.End == supervisor.EndedToAsk {
		ir := m.inputRequired()
		if ir == nil {
			return transport.Response{ID: id, Err: wire.Internal(noPending)}, true
		}
		return transport.Response{ID: id, Result: modernResult(ir, cfg.ServerInfo(), nil)}, true
	}
	if failed(oc) {
		if e := m.missingCapability(what); e != nil {
			return transport.Response{ID: id, Err: e}, true
		}
	}
	return transport.Response{}, false
}
