package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/mcpschema"
)

// JSON-RPC batches: revision 2025-03-26 (and only it) requires a server to
// take a JSON array of requests and notifications and answer with the
// array of the responses. Each test drives real bash tools inside a batch
// and checks every answer against the 2025-03-26 schema, element by
// element with the method it answers.

const btScript = `tool_echo() {
	local v
	v=$(jq -r .v <<<"$1")
	mcp_progress 1 2 "half way"
	echo "echo $v"
}
tool_fail() { echo "broken $1" >&2; return 3; }
`

const btTools = `{"tools":[
 {"name":"echo","description":"echo v","inputSchema":{"type":"object","properties":{"v":{"type":"string"}}}},
 {"name":"fail","description":"fails","inputSchema":{"type":"object"}}]}`

func btInit(version string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"batch","version":"0"}}}`
}

// btBatch is the batch every transport gets: two real tool calls (one
// with a progress token), a ping, a notification, a member that is not an
// object, a member with a bad jsonrpc, and an initialize.
const btBatch = `[` +
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"v":"one"},"_meta":{"progressToken":"p1"}}},` +
	`{"jsonrpc":"2.0","id":"two","method":"ping"},` +
	`{"jsonrpc":"2.0","method":"notifications/initialized"},` +
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{}}},` +
	`5,` +
	`{"jsonrpc":"1.0","id":4,"method":"ping"},` +
	`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}` +
	`]`

// btMethods is the method each id of btBatch names, for the schema check.
var btMethods = map[string]string{`1`: "tools/call", `"two"`: "ping", `3`: "tools/call", `4`: "", `5`: "", `null`: ""}

// btCheckArray checks an answer to btBatch: one response per member that
// is not a notification, each valid for 2025-03-26 with the method it
// answers, with the expected outcome.
func btCheckArray(t *testing.T, line []byte) {
	t.Helper()
	if err := mcpschema.Check("2025-03-26", "", line); err != nil {
		t.Fatalf("batch answer not valid for 2025-03-26: %v\n%s", err, line)
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(line, &arr); err != nil {
		t.Fatalf("batch answer is not an array: %v\n%s", err, line)
	}
	got := map[string]string{}
	var ids []string
	for _, el := range arr {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(el, &m); err != nil {
			t.Fatal(err)
		}
		id := string(m.ID)
		if err := mcpschema.Check("2025-03-26", btMethods[id], el); err != nil {
			t.Errorf("element %s not valid for 2025-03-26: %v", el, err)
		}
		ids = append(ids, id)
		switch {
		case m.Error != nil:
			got[id] = "error " + itoa(m.Error.Code) + " " + m.Error.Message
		case m.Result != nil && len(m.Result.Content) > 0:
			got[id] = "text " + m.Result.Content[0].Text
			if m.Result.IsError {
				got[id] = "isError " + m.Result.Content[0].Text
			}
		default:
			got[id] = "result " + string(el)
		}
	}
	sort.Strings(ids)
	if strings.Join(ids, " ") != `"two" 1 3 4 5 null` {
		t.Errorf("answered ids %v, want one answer each for 1, \"two\", 3, 4, 5 and the non-object member (null)\n%s", ids, line)
	}
	want := map[string]string{
		`1`:    "text echo one",
		`3`:    "isError Error executing fail: broken {}",
		`4`:    "error -32600 Invalid Request: jsonrpc must be 2.0",
		`5`:    "error -32600 Invalid Request: initialize must not be part of a JSON-RPC batch",
		`null`: "error -32600 Invalid Request: expected a JSON object",
	}
	for id, w := range want {
		if !strings.HasPrefix(got[id], w) {
			t.Errorf("answer for id %s: %q, want %q", id, got[id], w)
		}
	}
	if !strings.HasPrefix(got[`"two"`], `result {"jsonrpc":"2.0","id":"two","result":{}}`) {
		t.Errorf("ping in the batch answered %q", got[`"two"`])
	}
}

// btRecv is the server's next line, which may be an array (the harness's
// recv reads objects only); the caller checks it against the schema.
func btRecv(t *testing.T, s *harness.Daemon) []byte {
	t.Helper()
	select {
	case line, ok := <-s.Lines:
		if !ok {
			t.Fatalf("server closed stdout; stderr:\n%s", s.Stderr.String())
		}
		if err := mcpschema.Check("2025-03-26", "", line); err != nil {
			t.Errorf("line not valid for 2025-03-26: %v\n%s", err, line)
		}
		return []byte(strings.TrimSuffix(string(line), "\n"))
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatalf("no line before the deadline; stderr:\n%s", s.Stderr.String())
	}
	return nil
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func btServerDir(t *testing.T) string {
	return harness.WriteFiles(t, map[string]string{"server.sh": btScript, "tools.json": btTools})
}

func TestBatchStdio2025_03_26(t *testing.T) {
	dir := btServerDir(t)
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}})
	if r := s.RoundTrip(btInit("2025-03-26")); !strings.Contains(r, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize: %s", r)
	}
	s.Send(btBatch)
	// The progress of member 1 comes on its own line, then the array.
	var arr []byte
	for arr == nil {
		line := btRecv(t, s)
		switch {
		case strings.HasPrefix(string(line), "["):
			arr = line
		case strings.Contains(string(line), `"notifications/progress"`):
			if !strings.Contains(string(line), `"progressToken":"p1"`) {
				t.Errorf("progress for the wrong token: %s", line)
			}
		default:
			t.Fatalf("unexpected line before the batch answer: %s", line)
		}
	}
	btCheckArray(t, arr)

	// Notifications only: nothing is written; the next answer is the ping's.
	s.Send(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]`)
	if r := s.RoundTrip(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); r != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("after a batch of notifications, the next line is %s", r)
	}
	// An empty array is one Invalid Request error, not an array.
	if r := s.RoundTrip(`[]`); r != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: an empty JSON-RPC batch"}}` {
		t.Errorf("empty batch answered %s", r)
	}
	// Members that are not requests: one error entry each.
	s.Send(`[1,"x"]`)
	if r := string(btRecv(t, s)); r != `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}}]` {
		t.Errorf("[1,\"x\"] answered %s", r)
	}
}

// Every other revision keeps the gates' answer (and the bash SDK's) for an
// array: one -32600 "expected a JSON object", nothing run.
func TestBatchRefusedOutside2025_03_26(t *testing.T) {
	const notObject = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}}`
	for _, v := range []string{"", "2024-11-05", "2025-06-18", "2025-11-25"} {
		t.Run("v"+v, func(t *testing.T) {
			dir := btServerDir(t)
			s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}})
			if v != "" {
				s.RoundTrip(btInit(v))
			}
			for _, line := range []string{btBatch, `[]`} {
				if r := s.RoundTrip(line); r != notObject {
					t.Errorf("%.40s answered %s, want %s", line, r, notObject)
				}
			}
		})
	}
}

// btHTTP posts body with the session's headers and returns status, the
// content type and the JSON-RPC payload (an SSE stream's last event).
func btHTTP(t *testing.T, url, session, version, body string) (int, string, []byte, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/event-stream") {
		return resp.StatusCode, ct, b, nil
	}
	var events []string
	for _, l := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			events = append(events, d)
		}
	}
	if len(events) == 0 {
		return resp.StatusCode, ct, nil, nil
	}
	return resp.StatusCode, ct, []byte(events[len(events)-1]), events[:len(events)-1]
}

// btServer is the batch server.
var btServer = harness.Options{Files: map[string]string{"server.sh": btScript, "tools.json": btTools}}

func TestBatchHTTP2025_03_26(t *testing.T) {
	url := harness.StartHTTP(t, btServer).URL
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(btInit("2025-03-26")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("initialize started no session")
	}

	// A 2025-03-26 client sends no MCP-Protocol-Version: the session says.
	status, ct, payload, before := btHTTP(t, url, session, "", btBatch)
	if status != http.StatusOK {
		t.Fatalf("batch: HTTP %d %s %s", status, ct, payload)
	}
	for _, ev := range before {
		if err := mcpschema.Check("2025-03-26", "", []byte(ev)); err != nil || !strings.Contains(ev, `"notifications/progress"`) {
			t.Errorf("event before the answer: %s (%v)", ev, err)
		}
	}
	btCheckArray(t, payload)

	// Notifications only: 202 Accepted, no body.
	status, _, payload, _ = btHTTP(t, url, session, "", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if status != http.StatusAccepted || len(payload) != 0 {
		t.Errorf("notifications-only batch: HTTP %d %q, want 202 and no body", status, payload)
	}
	// Empty array: 400 with one Invalid Request error.
	status, _, payload, _ = btHTTP(t, url, session, "", `[]`)
	if status != http.StatusBadRequest || string(payload) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: an empty JSON-RPC batch"}}`+"\n" {
		t.Errorf("empty batch: HTTP %d %s", status, payload)
	}
	// Without a session, the header names the revision.
	status, _, payload, _ = btHTTP(t, url, "", "2025-03-26", `[{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"v":"eight"}}}]`)
	if status != http.StatusOK || !strings.Contains(string(payload), `"text":"echo eight"`) || payload[0] != '[' {
		t.Errorf("sessionless batch: HTTP %d %s", status, payload)
	}
}

func TestBatchHTTPRefusedOutside2025_03_26(t *testing.T) {
	url := harness.StartHTTP(t, btServer).URL
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		status, _, payload, _ := btHTTP(t, url, "", v, btBatch)
		if status != http.StatusBadRequest || !strings.Contains(string(payload), `"message":"Invalid Request: expected a JSON object"`) {
			t.Errorf("%s: HTTP %d %s", v, status, payload)
		}
	}
}
