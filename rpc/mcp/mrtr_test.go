package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

var nameAsk = supervisor.AskItem{Key: "user_name", Method: "elicitation/create", Params: json.RawMessage(`{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)}

func mustMRTR(t *testing.T, s stateSigner, params string) *mrtrCall {
	t.Helper()
	m, e := newMRTRFrom(s, json.RawMessage(params), "tools/call", "greet", json.RawMessage(`{"a":1}`), json.RawMessage(allCaps))
	if e != nil {
		t.Fatalf("newMRTR(%s): %v", params, e.Message)
	}
	return m
}

// roundTrip asks items of a fresh call made from params and returns the
// answers, or the input_required result when the call ended.
func roundTrip(t *testing.T, s stateSigner, params string, items ...supervisor.AskItem) ([]json.RawMessage, map[string]any) {
	t.Helper()
	m := mustMRTR(t, s, params)
	out, err := m.Ask(context.Background(), items)
	if err == nil {
		if m.inputRequired() != nil {
			t.Fatal("answered ask left an input_required result")
		}
		return out, nil
	}
	if !errors.Is(err, supervisor.ErrEndCall) {
		t.Fatalf("Ask: %v, want an ErrEndCall", err)
	}
	var r map[string]any
	if err := json.Unmarshal(m.inputRequired(), &r); err != nil {
		t.Fatal(err)
	}
	return nil, r
}

func TestMRTRRounds(t *testing.T) {
	s := newStateSigner("")
	_, r := roundTrip(t, s, `{"name":"greet"}`, nameAsk)
	if r["resultType"] != "input_required" {
		t.Fatalf("resultType %v", r["resultType"])
	}
	req := r["inputRequests"].(map[string]any)["user_name"].(map[string]any)
	if req["method"] != "elicitation/create" || req["params"].(map[string]any)["message"] != "What is your name?" {
		t.Fatalf("inputRequests.user_name = %v", req)
	}
	state1 := r["requestState"].(string)

	// Round 2 answers step one and asks a second question: the state
	// changes and carries the first answer.
	color := supervisor.AskItem{Key: "color", Method: "elicitation/create", Params: json.RawMessage(`{"message":"Colour?"}`)}
	m := mustMRTR(t, s, `{"name":"greet","requestState":"`+state1+`","inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}}`)
	if out, err := m.Ask(context.Background(), []supervisor.AskItem{nameAsk}); err != nil || !strings.Contains(string(out[0]), "Alice") {
		t.Fatalf("round 2 first ask: %s %v", out, err)
	}
	if _, err := m.Ask(context.Background(), []supervisor.AskItem{color}); !errors.Is(err, supervisor.ErrEndCall) {
		t.Fatalf("round 2 second ask: %v", err)
	}
	var r2 map[string]any
	_ = json.Unmarshal(m.inputRequired(), &r2)
	state2 := r2["requestState"].(string)
	if state2 == state1 || len(r2["inputRequests"].(map[string]any)) != 1 {
		t.Fatalf("round 2 result %v", r2)
	}

	// Round 3 sends only the second answer: the first comes from the state.
	m = mustMRTR(t, s, `{"name":"greet","requestState":"`+state2+`","inputResponses":{"color":{"action":"accept","content":{"color":"blue"}}}}`)
	a1, err1 := m.Ask(context.Background(), []supervisor.AskItem{nameAsk})
	a2, err2 := m.Ask(context.Background(), []supervisor.AskItem{color})
	if err1 != nil || err2 != nil || !strings.Contains(string(a1[0]), "Alice") || !strings.Contains(string(a2[0]), "blue") {
		t.Fatalf("round 3: %s %v / %s %v", a1, err1, a2, err2)
	}
}

func TestMRTRSeveralInOneRound(t *testing.T) {
	s := newStateSigner("")
	items := []supervisor.AskItem{
		nameAsk,
		{Key: "greeting", Method: "sampling/createMessage", Params: json.RawMessage(`{"messages":[],"maxTokens":50}`)},
		{Key: "client_roots", Method: "roots/list"},
	}
	_, r := roundTrip(t, s, `{"name":"greet"}`, items...)
	reqs := r["inputRequests"].(map[string]any)
	if len(reqs) != 3 {
		t.Fatalf("inputRequests %v", reqs)
	}
	if p := reqs["client_roots"].(map[string]any)["params"]; p == nil {
		t.Fatal("roots/list without params object")
	}
	// Two answered, one missing: asked again alone; the state keeps the two.
	_, r = roundTrip(t, s, `{"name":"greet","inputResponses":{"user_name":{"action":"accept"},"client_roots":{"roots":[]}}}`, items...)
	if reqs := r["inputRequests"].(map[string]any); len(reqs) != 1 || reqs["greeting"] == nil {
		t.Fatalf("re-asked %v", reqs)
	}
	out, r := roundTrip(t, s, `{"name":"greet","requestState":"`+r["requestState"].(string)+`","inputResponses":{"greeting":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}}`, items...)
	if r != nil || len(out) != 3 || !strings.Contains(string(out[2]), "roots") {
		t.Fatalf("final round %s %v", out, r)
	}
}

func TestMRTRMissingAndExtraResponses(t *testing.T) {
	s := newStateSigner("")
	// A wrong key: the request is asked again, not an error.
	if _, r := roundTrip(t, s, `{"name":"greet","inputResponses":{"wrong_key":{"action":"accept"}}}`, nameAsk); r == nil {
		t.Fatal("wrong key answered the ask")
	}
	// Extra keys beside the right one are ignored, and not carried.
	m := mustMRTR(t, s, `{"name":"greet","inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}},"unknown_extra_key":{"action":"accept"}}}`)
	if _, err := m.Ask(context.Background(), []supervisor.AskItem{nameAsk}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ask(context.Background(), []supervisor.AskItem{{Key: "x", Method: "roots/list"}}); err == nil {
		t.Fatal("unanswered ask answered")
	}
	var r map[string]any
	_ = json.Unmarshal(m.inputRequired(), &r)
	st, err := s.open(r["requestState"].(string))
	if err != nil || len(st.Answers) != 1 || st.Answers["user_name"] == nil {
		t.Fatalf("carried answers %v %v", st.Answers, err)
	}
}

func TestMRTRDerivedKeys(t *testing.T) {
	a := askKey("elicitation/create", json.RawMessage(`{"message":"Sure?", "requestedSchema":{}}`))
	b := askKey("elicitation/create", json.RawMessage(`{"message":"Sure?","requestedSchema":{}}`))
	c := askKey("elicitation/create", json.RawMessage(`{"message":"Really?","requestedSchema":{}}`))
	if a != b || a == c || !strings.HasPrefix(a, "elicitation-") {
		t.Fatalf("keys %q %q %q", a, b, c)
	}
	if askKey("roots/list", nil) != askKey("roots/list", json.RawMessage(`{}`)) {
		t.Fatal("roots/list without params keyed differently from {}")
	}
	// An unnamed ask's answer, sent under its derived key, reaches the re-run.
	s := newStateSigner("")
	sure := supervisor.AskItem{Method: "elicitation/create", Params: json.RawMessage(`{"message":"Sure?"}`)}
	_, r := roundTrip(t, s, `{"name":"greet"}`, sure)
	var key string
	for k := range r["inputRequests"].(map[string]any) {
		key = k
	}
	out, r := roundTrip(t, s, `{"name":"greet","inputResponses":{"`+key+`":{"action":"accept"}}}`, sure)
	if r != nil || string(out[0]) != `{"action":"accept"}` {
		t.Fatalf("re-run: %s %v", out, r)
	}
}

func TestMRTRStateIntegrity(t *testing.T) {
	s := newStateSigner("")
	_, r := roundTrip(t, s, `{"name":"greet"}`, nameAsk)
	state := r["requestState"].(string)
	p, mac, _ := strings.Cut(state, ".")
	forged := roundState{Version: stateVersion, Request: requestBinding("tools/call", "greet", json.RawMessage(`{"a":1}`)), Answers: map[string]json.RawMessage{"user_name": json.RawMessage(`{"action":"accept"}`)}}
	fj, _ := json.Marshal(forged)
	cases := map[string]string{
		"suffix":        state + "-TAMPERED",
		"other payload": b64.EncodeToString(fj) + "." + mac,
		"no mac":        p,
		"other key":     newStateSigner("another daemon").seal(forged),
		"not base64":    "!!." + mac,
	}
	for name, st := range cases {
		_, e := newMRTRFrom(s, json.RawMessage(`{"requestState":"`+st+`"}`), "tools/call", "greet", json.RawMessage(`{"a":1}`), json.RawMessage(allCaps))
		if e == nil || e.Code != wire.CodeInvalidParams || !strings.Contains(e.Message, "integrity") {
			t.Errorf("%s: %+v, want -32602 integrity", name, e)
		}
	}
	// A valid state on another tool or other arguments is refused too.
	for _, c := range []struct{ name, args string }{{"other", `{"a":1}`}, {"greet", `{"a":2}`}} {
		_, e := newMRTRFrom(s, json.RawMessage(`{"requestState":"`+state+`"}`), "tools/call", c.name, json.RawMessage(c.args), json.RawMessage(allCaps))
		if e == nil || e.Code != wire.CodeInvalidParams || !strings.Contains(e.Message, "another request") {
			t.Errorf("state replayed on %s %s: %+v", c.name, c.args, e)
		}
	}
	// A shared secret lets a second daemon accept the first one's state.
	a, b := newStateSigner("shared"), newStateSigner("shared")
	if _, err := b.open(a.seal(forged)); err != nil {
		t.Fatal("same secret, state refused:", err)
	}
}

func TestMRTRBadInput(t *testing.T) {
	s := newStateSigner("")
	for _, params := range []string{
		`{"inputResponses":null}`,
		`{"inputResponses":[]}`,
		`{"inputResponses":{"user_name":12345}}`,
		`{"requestState":42}`,
	} {
		_, e := newMRTRFrom(s, json.RawMessage(params), "tools/call", "greet", json.RawMessage(`{}`), json.RawMessage(allCaps))
		if e == nil || e.Code != wire.CodeInvalidParams {
			t.Errorf("%s: %+v, want -32602", params, e)
		}
	}
}

func TestMRTRCapabilities(t *testing.T) {
	s := newStateSigner("")
	m, _ := newMRTRFrom(s, json.RawMessage(`{}`), "tools/call", "greet", json.RawMessage(`{}`), json.RawMessage(`{"sampling":{}}`))
	_, err := m.Ask(context.Background(), []supervisor.AskItem{nameAsk})
	if err == nil || errors.Is(err, supervisor.ErrEndCall) || !strings.Contains(err.Error(), "elicitation capability") {
		t.Fatalf("elicitation without the capability: %v", err)
	}
	if _, err := m.Ask(context.Background(), []supervisor.AskItem{{Key: "q", Method: "sampling/createMessage", Params: json.RawMessage(`{}`)}}); !errors.Is(err, supervisor.ErrEndCall) {
		t.Fatalf("sampling: %v", err)
	}
	var r map[string]any
	_ = json.Unmarshal(m.inputRequired(), &r)
	if reqs := r["inputRequests"].(map[string]any); len(reqs) != 1 || reqs["q"] == nil {
		t.Fatalf("inputRequests %v", reqs)
	}
	e := m.missingCapability("tool greet")
	if e == nil || e.Code != wire.CodeMissingCapability || string(e.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Fatalf("missingCapability %+v", e)
	}
	// URL-mode elicitation needs elicitation.url.
	m, _ = newMRTRFrom(s, json.RawMessage(`{}`), "tools/call", "greet", json.RawMessage(`{}`), json.RawMessage(`{"elicitation":{"form":{}}}`))
	if _, err := m.Ask(context.Background(), []supervisor.AskItem{{Method: "elicitation/create", Params: json.RawMessage(`{"mode":"url","url":"https://x"}`)}}); err == nil || errors.Is(err, supervisor.ErrEndCall) {
		t.Fatalf("url mode with form only: %v", err)
	}
	if e := m.missingCapability("tool greet"); e == nil || string(e.Data) != `{"requiredCapabilities":{"elicitation":{"url":{}}}}` {
		t.Fatalf("url mode: %+v", e)
	}
	// Several lacking at once: all named.
	m, _ = newMRTRFrom(s, json.RawMessage(`{}`), "tools/call", "greet", json.RawMessage(`{}`), json.RawMessage(`{}`))
	_, err = m.Ask(context.Background(), []supervisor.AskItem{nameAsk, {Key: "r", Method: "roots/list"}})
	if err == nil || !strings.Contains(err.Error(), "elicitation and roots") {
		t.Fatalf("two lacking: %v", err)
	}
	if e := m.missingCapability("tool greet"); e == nil || string(e.Data) != `{"requiredCapabilities":{"elicitation":{},"roots":{}}}` {
		t.Fatalf("two lacking: %+v", e)
	}
	if _, err := m.Ask(context.Background(), []supervisor.AskItem{{Method: "ping"}}); err == nil || errors.Is(err, supervisor.ErrEndCall) {
		t.Fatalf("ping: %v", err)
	}
}

// newMRTRFrom is newMRTR of a request's params and _meta capabilities as
// written, decoded as the method table decodes them (tools/call).
func newMRTRFrom(s stateSigner, params json.RawMessage, method, name string, args, caps json.RawMessage) (*mrtrCall, *wire.Error) {
	cp, e := parseCallParams(params)
	if e != nil {
		return nil, e
	}
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	return newMRTR(s, cp.rounds, method, name, args, c)
}
