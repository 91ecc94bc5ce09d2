package tests

// Issue 14: change notifications. mcp_resource_updated URI, from a tool, a
// hook, a child or a detached process, reaches the clients subscribed to
// URI (resources/subscribe in the session eras, a subscriptions/listen
// stream in 2026-07-28); an edit of resources.json or prompts.json sends
// the list_changed notifications, and a listen stream carries
// tools/list_changed too.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
)

// mcpschemaCheck checks one event of a listen stream: its notifications,
// and the result that ends it.
func mcpschemaCheck(revision, line string) error {
	method := ""
	if strings.Contains(line, `"result"`) {
		method = "subscriptions/listen"
	}
	return mcpschema.Check(revision, method, []byte(line))
}

const sbServer = `
tool_touch() { mcp_resource_updated "$(sb_uri "$1")"; echo touched; }
tool_touch_child() { ( mcp_resource_updated "$(sb_uri "$1")" ) & wait; echo touched; }
# After its call ended, a process that left the call's group (setsid) still
# notifies: the helper is exported to it once loaded.
tool_touch_later() {
	mcp_resource_updated notes://warmup-never-subscribed
	export -f mcp_resource_updated __mcpbashd_esc
	setsid bash -c ': >"$STARTED"; while [ ! -e "$GATE" ]; do sleep 0.01; done; mcp_resource_updated notes://dir/late' </dev/null >/dev/null 2>&1 &
	# Out of the call's group before the call ends (and its group is killed).
	while [ ! -e "$STARTED" ]; do sleep 0.01; done
	echo started
}
mcp_before_tool_call() { [ "$1" != touch ] || mcp_resource_updated notes://hooked; }
sb_uri() { local re='"uri":"([^"]*)"'; [[ $1 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"; }
resource_a() { echo a; }
prompt_p() { echo p; }
`

var sbFiles = map[string]string{
	"server.sh":      sbServer,
	"tools.json":     harness.ToolsJSON("touch", "touch_child", "touch_later"),
	"resources.json": `{"resources":[{"uri":"notes://a","name":"a"}]}`,
	"prompts.json":   `{"prompts":[{"name":"p"}]}`,
	"config.json":    `{"capabilities":{"tools":{"listChanged":true}}}`,
}

func sbUpdated(uri string) string {
	return `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + uri + `"}}`
}

func TestSubscriptionsSessionEra(t *testing.T) {
	r := harness.Start(t, rl2Server(t, sbFiles))
	r.Request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sb","version":"0"}}`)
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, uri := range []string{"notes://a", "notes://dir/", "notes://hooked"} {
		if got := r.Request("resources/subscribe", `{"uri":"`+uri+`"}`); !strings.Contains(got, `"result":{}`) {
			t.Fatalf("subscribe %s: %s", uri, got)
		}
	}
	// From the tool, and from its before-call hook.
	r.Request("tools/call", `{"name":"touch","arguments":{"uri":"notes://a"}}`)
	r.AwaitNote(t, sbUpdated("notes://hooked"), rl2NoteBound, "mcp_resource_updated in mcp_before_tool_call")
	r.AwaitNote(t, sbUpdated("notes://a"), rl2NoteBound, "mcp_resource_updated in a tool")
	// From a child; a sub-resource of a subscribed URI.
	r.Request("tools/call", `{"name":"touch_child","arguments":{"uri":"notes://dir/x"}}`)
	r.AwaitNote(t, sbUpdated("notes://dir/x"), rl2NoteBound, "mcp_resource_updated in a child, for a sub-resource")
	// Unsubscribed: the update of notes://a is not sent; the one after it,
	// from the same process (the FIFO keeps their order), is.
	r.Request("resources/unsubscribe", `{"uri":"notes://a"}`)
	r.Request("tools/call", `{"name":"touch","arguments":{"uri":"notes://a"}}`)
	r.Request("tools/call", `{"name":"touch","arguments":{"uri":"notes://dir/after"}}`)
	r.AwaitNote(t, sbUpdated("notes://dir/after"), rl2NoteBound, "an update after the unsubscribe")
	for _, n := range r.Notes {
		if n == sbUpdated("notes://a") {
			t.Errorf("an update of notes://a after resources/unsubscribe: %q", r.Notes)
		}
	}
	// A detached process, after its call ended.
	if text, _ := rl2Call(r, "touch_later"); text != "started" {
		t.Fatalf("touch_later: %q", text)
	}
	rfTouch(t, r.Dir, "gate")
	r.AwaitNote(t, sbUpdated("notes://dir/late"), rl2NoteBound, "mcp_resource_updated in a detached process after its call")

	// resources.json and prompts.json edited: list_changed for each.
	rl2Replace(t, filepath.Join(r.Dir, "resources.json"), `{"resources":[{"uri":"notes://a","name":"a"},{"uri":"notes://b","name":"a"}]}`)
	r.AwaitNote(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, rl2NoteBound, "resources.json was edited")
	rl2Replace(t, filepath.Join(r.Dir, "prompts.json"), `{"prompts":[{"name":"p","description":"now described"}]}`)
	r.AwaitNote(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`, rl2NoteBound, "prompts.json was edited")
	if ee := r.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, r.Stderr)
	}
}

func sbListenNote(method, id, params string) string {
	p := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}`
	if params != "" {
		p = params + "," + p
	}
	return `{"jsonrpc":"2.0","method":"` + method + `","params":{` + p + `}}`
}

// 2026-07-28 over stdio: subscriptions/listen is acknowledged first, with
// the filter the server honors; only what it asked for is sent, each
// tagged with its subscriptionId; notifications/cancelled ends it.
func TestSubscriptionsListenStdio(t *testing.T) {
	r := harness.Start(t, rl2Server(t, sbFiles))
	r.Revision = "2026-07-28"
	r.Send(`{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{` + rsMeta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["notes://a"],"unknownKind":true}}}`)
	ack := sbListenNote("notifications/subscriptions/acknowledged", `"L1"`, `"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["notes://a"]}`)
	if got := string(r.Recv()); got != ack {
		t.Fatalf("first message after subscriptions/listen:\n got %s\nwant %s", got, ack)
	}
	call := func(id, uri string) {
		r.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + rsMeta + `,"name":"touch","arguments":{"uri":"` + uri + `"}}}`)
		r.Await(id)
	}
	call("1", "notes://b") // not asked for
	call("2", "notes://a")
	r.AwaitNote(t, sbListenNote("notifications/resources/updated", `"L1"`, `"uri":"notes://a"`), rl2NoteBound, "an update of a subscribed resource")
	for _, n := range r.Notes {
		if strings.Contains(n, "notes://b") || strings.Contains(n, "notes://hooked") {
			t.Errorf("a notification the stream did not ask for: %s", n)
		}
	}
	rl2Replace(t, filepath.Join(r.Dir, "prompts.json"), `{"prompts":[{"name":"p"},{"name":"q"}]}`)
	r.AwaitNote(t, sbListenNote("notifications/prompts/list_changed", `"L1"`, ""), rl2NoteBound, "prompts.json was edited")
	rl2Replace(t, filepath.Join(r.Dir, "tools.json"), harness.ToolsJSON("touch", "touch_child"))
	r.AwaitNote(t, sbListenNote("notifications/tools/list_changed", `"L1"`, ""), rl2NoteBound, "tools.json was edited")

	// Cancelled: L1 hears nothing more; a second stream does.
	r.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`)
	rl2WaitLog(t, r, "subscription ended", `"L1"`)
	r.Send(`{"jsonrpc":"2.0","id":"L2","method":"subscriptions/listen","params":{` + rsMeta + `,"notifications":{"resourcesListChanged":true}}}`)
	r.AwaitNote(t, sbListenNote("notifications/subscriptions/acknowledged", `"L2"`, `"notifications":{"resourcesListChanged":true}`), rl2NoteBound, "the second listen")
	rl2Replace(t, filepath.Join(r.Dir, "resources.json"), `{"resources":[]}`)
	r.AwaitNote(t, sbListenNote("notifications/resources/list_changed", `"L2"`, ""), rl2NoteBound, "resources.json was edited")
	for _, n := range r.Notes {
		if strings.Contains(n, `"L1"`) {
			t.Errorf("a notification on the cancelled stream: %s", n)
		}
	}
	if ee := r.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, r.Stderr)
	}
}

// A server that offers nothing a listen stream could carry answers
// subscriptions/listen -32601; a malformed filter is -32602.
func TestSubscriptionsListenRefused(t *testing.T) {
	r := harness.Start(t, rl2Server(t, map[string]string{"server.sh": "tool_x() { :; }\n", "tools.json": harness.ToolsJSON("x")}))
	r.Revision = "2026-07-28"
	if got := r.Request("subscriptions/listen", `{`+rsMeta+`,"notifications":{"toolsListChanged":true}}`); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: subscriptions/listen"}}` {
		t.Errorf("tools-only server without listChanged: %s", got)
	}
	r2 := harness.Start(t, rl2Server(t, sbFiles))
	r2.Revision = "2026-07-28"
	if got := r2.Request("subscriptions/listen", `{`+rsMeta+`}`); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: notifications is required and must be a SubscriptionFilter object"}}` {
		t.Errorf("no filter: %s", got)
	}
}

// 2026-07-28 over HTTP: the listen stream is an SSE response that stays
// open; an update reaches it while other POSTs come and go; at shutdown
// the server ends it with a SubscriptionsListenResult (and does not wait
// for the drain).
func TestSubscriptionsListenHTTP(t *testing.T) {
	dir := harness.WriteFiles(t, sbFiles)
	mark := t.Name()
	d := harness.StartHTTP(t, harness.Options{Script: filepath.Join(dir, "server.sh"), Flags: []string{"--drain", "30s"}, Env: []string{"TMPDIR=" + t.TempDir()}, Marked: mark})
	post := func(method, name, body string) *http.Response {
		req, _ := http.NewRequest("POST", d.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	listen := post("subscriptions/listen", "", `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{`+rsMeta+`,"notifications":{"resourceSubscriptions":["notes://a"]}}}`)
	defer listen.Body.Close()
	if ct := listen.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("listen answered %s %q", listen.Status, ct)
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(listen.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
		close(events)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("listen stream ended waiting for %s", what)
			}
			if err := mcpschemaCheck("2026-07-28", e); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			return e
		case <-time.After(time.Until(harness.Deadline(t))):
			t.Fatalf("no %s on the listen stream", what)
		}
		return ""
	}
	if got, want := next("the acknowledgment"), sbListenNote("notifications/subscriptions/acknowledged", "7", `"notifications":{"resourceSubscriptions":["notes://a"]}`); got != want {
		t.Fatalf("first event:\n got %s\nwant %s", got, want)
	}
	call := post("tools/call", "touch", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{`+rsMeta+`,"name":"touch","arguments":{"uri":"notes://a"}}}`)
	var body bytes.Buffer
	body.ReadFrom(call.Body)
	call.Body.Close()
	if !strings.Contains(body.String(), `"text":"touched"`) {
		t.Fatalf("tools/call: %s %s", call.Status, body.String())
	}
	if got, want := next("the update"), sbListenNote("notifications/resources/updated", "7", `"uri":"notes://a"`); got != want {
		t.Fatalf("update:\n got %s\nwant %s", got, want)
	}
	stopped := time.Now()
	d.Cmd.Process.Signal(syscall.SIGTERM)
	final := next("the result ending the stream")
	var res struct {
		ID     json.RawMessage `json:"id"`
		Result struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(final), &res) != nil || string(res.ID) != "7" || res.Result.ResultType != "complete" || string(res.Result.Meta["io.modelcontextprotocol/subscriptionId"]) != "7" {
		t.Errorf("the stream's last event: %s", final)
	}
	if _, more := <-events; more {
		t.Errorf("the stream went on after its result")
	}
	select {
	case <-d.Done:
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("the daemon did not exit")
	}
	// Bounded by the 30 s drain it was given, were the stream waited for.
	if took := time.Since(stopped); took > 15*time.Second {
		t.Errorf("shutdown took %v: the listen stream held the drain", took)
	}
}
