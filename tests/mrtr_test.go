package tests

// Issue 15, 2026-07-28: a tool that asks the client (mcp_elicit,
// mcp_sample, mcp_roots, mcp_ask_all) ends its call with an
// input_required result; the client retries with inputResponses and the
// requestState, the tool runs again from the start and the helper prints
// the answer. Driven by the Go SDK v1.8.0 client, whose multi round-trip
// middleware answers input_required from its elicitation, sampling and
// roots handlers, over stdio and HTTP; tampering is driven on the raw wire.
// Every server message is checked against the official 2026 schema.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

const mrServer = `
mr_field() { local re="\"$1\"[[:space:]]*:[[:space:]]*\"([^\"]*)\""; [[ $2 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"; }
# Counts its runs: each ask that ends the call means one run more.
tool_delete() {
	printf 'run\n' >>"$MR_RUNS"
	local answer summary roots
	answer=$(mcp_elicit "Delete $(mr_field path "$1")?" '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}') || return 1
	summary=$(mcp_sample '{"messages":[{"role":"user","content":{"type":"text","text":"Summarise the deletion"}}],"maxTokens":20}') || return 1
	roots=$(mcp_roots) || return 1
	printf 'answer=%s summary=%s root=%s\n' "$answer" "$(mr_field text "$summary")" "$(mr_field uri "$roots")"
}
# Asks twice at once from a child process: one round.
tool_both() {
	printf 'run\n' >>"$MR_RUNS"
	( mcp_ask_all '{"who":{"method":"elicitation/create","params":{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}},"where":{"method":"roots/list","params":{}}}' )
}
# Leaves a child running when its ask ends the call.
tool_linger() {
	local st
	sleep 1000 &
	read -r -a st </proc/$BASHPID/stat
	printf '%s %s\n' "${st[4]}" "$!" >"$MR_LINGER"
	mcp_elicit "Go on?" '{"type":"object","properties":{}}' >/dev/null || return 1
	echo done
}
resource_note() {
	local roots
	roots=$(mcp_roots) || return 1
	printf 'note for %s\n' "$(mr_field uri "$roots")"
}
prompt_ctx() {
	local a
	a=$(mcp_elicit "Context?" '{"type":"object","properties":{"ok":{"type":"boolean"}}}') || return 1
	printf 'context %s\n' "$a"
}
`

var mrFiles = map[string]string{
	"server.sh": mrServer,
	"tools.json": `{"tools":[
		{"name":"delete","description":"asks before deleting","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}},
		{"name":"both","description":"asks two things at once","inputSchema":{"type":"object"}},
		{"name":"linger","description":"asks with a child running","inputSchema":{"type":"object"}}]}`,
	"prompts.json":   `{"prompts":[{"name":"ctx","description":"asks for context"}]}`,
	"resources.json": `{"resources":[{"uri":"note://x","name":"note","mimeType":"text/plain"}]}`,
}

// mrClient is what the Go SDK client's handlers saw.
type mrClient struct {
	mu       sync.Mutex
	elicited []string
	sampled  int
}

func (h *mrClient) options(elicit bool) *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			h.mu.Lock()
			h.sampled++
			h.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "e2e", Content: &mcp.TextContent{Text: "SUMMARY-42"}}, nil
		},
	}
	if elicit {
		o.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			h.elicited = append(h.elicited, r.Params.Message)
			h.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true, "name": "Ada"}}, nil
		}
	}
	return o
}

// mrConnect connects a Go SDK client (default: 2026-07-28, stateless) to
// a daemon serving mrFiles over stdio or HTTP; wire lists the messages.
func mrConnect(t *testing.T, overHTTP bool, opts *mcp.ClientOptions, runs string) (*mcp.ClientSession, func() []clMsg, *harness.Output) {
	t.Helper()
	return mrConnectPinned(t, overHTTP, opts, runs, "")
}

// mrConnectPinned is mrConnect with the session pinned to version ("":
// the SDK's default, 2026-07-28).
func mrConnectPinned(t *testing.T, overHTTP bool, opts *mcp.ClientOptions, runs, version string) (*mcp.ClientSession, func() []clMsg, *harness.Output) {
	t.Helper()
	dir := harness.WriteFiles(t, mrFiles)
	mark := harness.Mark(t, "cl")
	t.Cleanup(func() { harness.KillMarked(mark) })
	env := []string{"TMPDIR=" + t.TempDir(), "MR_RUNS=" + runs}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-bashd-e2e-mrtr", Version: "0"}, opts)
	client.AddRoots(&mcp.Root{URI: "file:///e2e/root", Name: "e2e"})
	var transport mcp.Transport
	var wire func() []clMsg
	stderr := &harness.Output{}
	if overHTTP {
		d := harness.StartHTTP(t, harness.Options{Script: filepath.Join(dir, "server.sh"), Env: env, Marked: mark})
		stderr = d.Stderr
		proxy := cmStartProxy(t, d.URL)
		transport = &mcp.StreamableClientTransport{Endpoint: proxy.url, HTTPClient: &http.Client{}, MaxRetries: -1}
		wire = proxy.wire
	} else {
		cmd := harness.Command(t, harness.Options{Dir: dir, Env: env, Marked: mark})
		cmd.Stderr = stderr
		w := &clWire{}
		transport = &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: w}
		wire = w.all
	}
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	var sopts *mcp.ClientSessionOptions
	want := clModernVersion
	if version != "" {
		sopts, want = &mcp.ClientSessionOptions{ProtocolVersion: version}, version
	}
	cs, err := client.Connect(ctx, transport, sopts)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != want {
		t.Fatalf("negotiated %s, want %s", v, want)
	}
	return cs, wire, stderr
}

// mrRounds lists the results the server gave the client's requests for
// method (and name), in order: "input_required:KEY,KEY" or "complete".
func mrRounds(t *testing.T, msgs []clMsg, method, name string) []string {
	t.Helper()
	ids := map[string]bool{}
	for _, m := range msgs {
		f := m.fields(t)
		var p struct{ Name string }
		json.Unmarshal(f.Params, &p)
		if !m.In && f.Method == method && p.Name == name {
			ids[string(f.ID)] = true
		}
	}
	var out []string
	for _, m := range msgs {
		f := m.fields(t)
		if !m.In || f.Method != "" || !ids[string(f.ID)] {
			continue
		}
		var r struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		}
		switch {
		case f.Error != nil:
			out = append(out, "error")
		case json.Unmarshal(f.Result, &r) == nil && r.ResultType == "input_required":
			keys := make([]string, 0, len(r.InputRequests))
			for _, v := range r.InputRequests {
				var req struct{ Method string }
				json.Unmarshal(v, &req)
				keys = append(keys, req.Method)
			}
			sort.Strings(keys)
			out = append(out, "input_required:"+strings.Join(keys, ","))
		default:
			out = append(out, r.ResultType)
		}
	}
	return out
}

func mrRuns(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run\n")
}

func TestMRTRGoSDKStdio(t *testing.T) { mrGoSDK(t, false) }
func TestMRTRGoSDKHTTP(t *testing.T)  { mrGoSDK(t, true) }

func mrGoSDK(t *testing.T, overHTTP bool) {
	runs := filepath.Join(t.TempDir(), "runs")
	h := &mrClient{}
	cs, wire, stderr := mrConnect(t, overHTTP, h.options(true), runs)
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()

	// Three asks one after another: three input_required rounds, the tool
	// run four times, each answer reaching it.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "/srv/old"}})
	if err != nil {
		t.Fatalf("tools/call delete: %v\nstderr:\n%s", err, stderr.String())
	}
	text := mrText(t, res.Content)
	if want := `answer={"action":"accept","content":{"name":"Ada","ok":true}} summary=SUMMARY-42 root=file:///e2e/root`; res.IsError || text != want {
		t.Errorf("delete = %q (isError %v), want %q", text, res.IsError, want)
	}
	if n := mrRuns(t, runs); n != 4 {
		t.Errorf("delete ran %d times, want 4 (once per round)", n)
	}
	h.mu.Lock()
	if len(h.elicited) != 1 || h.elicited[0] != "Delete /srv/old?" || h.sampled != 1 {
		t.Errorf("client handlers saw elicitations %q and %d samplings, want one each", h.elicited, h.sampled)
	}
	h.mu.Unlock()
	rounds := mrRounds(t, wire(), "tools/call", "delete")
	if want := []string{"input_required:elicitation/create", "input_required:sampling/createMessage", "input_required:roots/list", "complete"}; strings.Join(rounds, " ") != strings.Join(want, " ") {
		t.Errorf("tools/call rounds %q, want %q", rounds, want)
	}

	// mcp_ask_all from a child: both requests in one round.
	os.Remove(runs)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "both", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call both: %v", err)
	}
	if text := mrText(t, res.Content); !strings.Contains(text, `"who":{"action":"accept"`) || !strings.Contains(text, `"where":{"roots":[{"name":"e2e","uri":"file:///e2e/root"}]}`) {
		t.Errorf("both = %q", text)
	}
	if rounds := mrRounds(t, wire(), "tools/call", "both"); strings.Join(rounds, " ") != "input_required:elicitation/create,roots/list complete" {
		t.Errorf("tools/call both rounds %q", rounds)
	}
	if n := mrRuns(t, runs); n != 2 {
		t.Errorf("both ran %d times, want 2", n)
	}

	// A prompt function asks the same way.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ctx"})
	if err != nil {
		t.Fatalf("prompts/get ctx: %v", err)
	}
	if len(pr.Messages) != 1 || !strings.Contains(mrText(t, []mcp.Content{pr.Messages[0].Content}), `context {"action":"accept"`) {
		t.Errorf("prompts/get ctx = %+v", pr.Messages)
	}
	if rounds := mrRounds(t, wire(), "prompts/get", "ctx"); strings.Join(rounds, " ") != "input_required:elicitation/create complete" {
		t.Errorf("prompts/get rounds %q", rounds)
	}

	// And a resource function.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://x"})
	if err != nil {
		t.Fatalf("resources/read note://x: %v", err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "note for file:///e2e/root\n" {
		t.Errorf("resources/read note://x = %+v", rr.Contents)
	}
	cs.Close()
	clCheckWire(t, clModernVersion, wire())
}

func mrText(t *testing.T, content []mcp.Content) string {
	t.Helper()
	if len(content) != 1 {
		t.Fatalf("want one content item, got %d", len(content))
	}
	tc, ok := content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", content[0])
	}
	return tc.Text
}

// A client that declared no elicitation: mcp_elicit fails at once (no
// round), the tool fails, and the answer is -32021 naming elicitation.
func TestMRTRMissingCapability(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	h := &mrClient{}
	cs, wire, _ := mrConnect(t, false, h.options(false), runs)
	ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "/srv/old"}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32021 || string(je.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Fatalf("tools/call delete without elicitation: %v (%#v)", err, je)
	}
	if n := mrRuns(t, runs); n != 1 {
		t.Errorf("delete ran %d times, want 1", n)
	}
	cs.Close()
	clCheckWire(t, clModernVersion, wire())
}

// The raw wire: a tampered requestState, or a genuine one sent with other
// arguments, is -32602 and the tool does not run; the answer in
// inputResponses alone (no state) is taken; a wrong key is asked again.
func TestMRTRRawStdio(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	dir := harness.WriteFiles(t, mrFiles)
	linger := filepath.Join(t.TempDir(), "linger")
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"TMPDIR=" + t.TempDir(), "MR_RUNS=" + runs, "MR_LINGER=" + linger}})
	s.Revision = clModernVersion
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}`
	call := func(id, extra string) map[string]any {
		t.Helper()
		line := s.RoundTrip(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta + `,"name":"delete","arguments":{"path":"/a"}` + extra + `}}`)
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	r1 := call("1", "")["result"].(map[string]any)
	if r1["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", r1)
	}
	state := r1["requestState"].(string)
	var key string
	for k := range r1["inputRequests"].(map[string]any) {
		key = k
	}
	answer := `,"inputResponses":{"` + key + `":{"action":"accept","content":{"ok":true}}}`

	e := call("2", answer+`,"requestState":"`+state+`-TAMPERED"`)["error"].(map[string]any)
	if e["code"].(float64) != -32602 || !strings.Contains(e["message"].(string), "integrity") {
		t.Errorf("tampered state: %v", e)
	}
	line := s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,"name":"delete","arguments":{"path":"/b"}` + answer + `,"requestState":"` + state + `"}}`)
	if !strings.Contains(line, `"code":-32602`) || !strings.Contains(line, "another request") {
		t.Errorf("state of /a sent with /b: %s", line)
	}
	if n := mrRuns(t, runs); n != 1 {
		t.Errorf("delete ran %d times, want 1: a refused state must not run the tool", n)
	}

	// The answer without the state: the elicitation is answered, the next
	// ask (sampling) ends round 2, whose state carries the answer.
	r2 := call("4", answer)["result"].(map[string]any)
	reqs, _ := json.Marshal(r2["inputRequests"])
	if r2["resultType"] != "input_required" || !strings.Contains(string(reqs), "sampling/createMessage") || strings.Contains(string(reqs), "elicitation") {
		t.Errorf("round 2: %v", r2)
	}
	// A wrong key: asked again.
	r3 := call("5", `,"inputResponses":{"nope":{"action":"accept"}}`)["result"].(map[string]any)
	if _, again := r3["inputRequests"].(map[string]any)[key]; r3["resultType"] != "input_required" || !again {
		t.Errorf("wrong key: %v", r3)
	}
	if bad := call("6", `,"inputResponses":null`); bad["error"] == nil {
		t.Errorf("inputResponses null: %v", bad)
	}

	// The run an ask ended is gone, children included, by the time its
	// input_required is written.
	line = s.RoundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + meta + `,"name":"linger","arguments":{}}}`)
	if !strings.Contains(line, `"resultType":"input_required"`) {
		t.Fatalf("linger: %s", line)
	}
	b, err := os.ReadFile(linger)
	var pgid, child int
	if _, serr := fmt.Sscan(string(b), &pgid, &child); err != nil || serr != nil {
		t.Fatalf("linger's pids %q: %v %v", b, err, serr)
	}
	group, err := proctest.InGroup(pgid)
	if err != nil {
		t.Fatal(err)
	}
	if left := proctest.Alive(group); len(left) > 0 {
		t.Errorf("input_required was answered with the run's group %d alive: %v (child %d)", pgid, left, child)
	}
}

// Over HTTP a refused state is a 400 with the -32602 error.
func TestMRTRTamperedHTTP(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	dir := harness.WriteFiles(t, mrFiles)
	mark := harness.Mark(t, "cl")
	d := harness.StartHTTP(t, harness.Options{Script: filepath.Join(dir, "server.sh"), Env: []string{"TMPDIR=" + t.TempDir(), "MR_RUNS=" + runs}, Marked: mark})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", d.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "delete")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		line := strings.TrimSpace(b.String())
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			line = data
		}
		if err := mcpschema.Check(clModernVersion, "tools/call", []byte(line)); err != nil {
			t.Errorf("response not valid for 2026-07-28: %v\n%s", err, line)
		}
		return resp.StatusCode, line
	}
	status, line := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"delete","arguments":{}}}`)
	var r struct {
		Result struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &r); status != 200 || r.Result.ResultType != "input_required" {
		t.Fatalf("round 1: %d %s", status, line)
	}
	status, line = post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta + `,"name":"delete","arguments":{},"requestState":"` + r.Result.RequestState + `-TAMPERED"}}`)
	if status != http.StatusBadRequest || !strings.Contains(line, `"code":-32602`) {
		t.Errorf("tampered: %d %s", status, line)
	}
	if n := mrRuns(t, runs); n != 1 {
		t.Errorf("delete ran %d times, want 1", n)
	}
}

// The same tool, unchanged, in a session era (2025-11-25): the asks go to
// the client as requests while the tool waits, so it runs once; the
// answers are the same as in 2026-07-28 (TestMRTRGoSDK*).
func TestMRTRSameToolSessionEra(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		name := "stdio"
		if overHTTP {
			name = "http"
		}
		t.Run(name, func(t *testing.T) {
			runs := filepath.Join(t.TempDir(), "runs")
			h := &mrClient{}
			cs, wire, stderr := mrConnectPinned(t, overHTTP, h.options(true), runs, "2025-11-25")
			ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "/srv/old"}})
			if err != nil {
				t.Fatalf("tools/call delete: %v\nstderr:\n%s", err, stderr.String())
			}
			if text, want := mrText(t, res.Content), `answer={"action":"accept","content":{"name":"Ada","ok":true}} summary=SUMMARY-42 root=file:///e2e/root`; res.IsError || text != want {
				t.Errorf("delete = %q (isError %v), want %q", text, res.IsError, want)
			}
			if n := mrRuns(t, runs); n != 1 {
				t.Errorf("delete ran %d times in a session era, want 1", n)
			}
			var asked []string
			for _, m := range wire() {
				if f := m.fields(t); m.In && f.ID != nil && f.Method != "" {
					asked = append(asked, f.Method)
				}
			}
			if strings.Join(asked, " ") != "elicitation/create sampling/createMessage roots/list" {
				t.Errorf("server requests %q", asked)
			}
			cs.Close()
		})
	}
}
