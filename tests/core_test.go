package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// The drop-in: the seed's server shape, run directly as ./server.sh with
// the shim in place of the SDK file.
func TestDropInGreeter(t *testing.T) {
	tmp := t.TempDir()
	s := harness.Exec(t, harness.RepoPath("examples/greeter/server.sh"), nil, []string{"MCP_BASHD=" + harness.Binary, "TMPDIR=" + tmp, "MCP_LOG_FILE=" + filepath.Join(tmp, "server.log")})
	if got := s.RoundTrip(harness.InitLine); got != `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"greeter","version":"1.0.0"},"capabilities":{"tools":{}},"instructions":"Use greet to say hello, count to count calls."}}` {
		t.Fatalf("initialize: %s", got)
	}
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if !strings.Contains(list, `"name":"greet"`) || !strings.Contains(list, `"name":"count"`) {
		t.Fatalf("tools/list: %s", list)
	}
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`); got != `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada"}],"isError":false}}` {
		t.Fatalf("greet: %s", got)
	}
	for i := 1; i <= 3; i++ {
		got := s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"count"}}`, i))
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","result":{"content":[{"type":"text","text":"%d"}],"isError":false}}`, i, i)
		if got != want {
			t.Fatalf("count %d: %s", i, got)
		}
	}
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{}}}`); got != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Error executing fail: this tool always fails"}],"isError":true}}` {
		t.Fatalf("fail: %s", got)
	}
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada","x":1}}}`); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "Unknown parameter(s): x") {
		t.Fatalf("validation: %s", got)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.Stderr)
	}
}

// Manifest mode: the daemon loads a plain file of tool functions.
func TestManifestPlainTools(t *testing.T) {
	tmp := t.TempDir()
	s := harness.Start(t, harness.Options{Args: []string{harness.RepoPath("examples/plain/tools.sh")}, Env: []string{"TMPDIR=" + tmp}})
	s.RoundTrip(harness.InitLine)
	list := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if strings.Contains(list, "x-mcp-bashd") {
		t.Fatalf("private key leaked into tools/list: %s", list)
	}
	args := `{"s":"$(touch /tmp/pwned) '\"quoted\"' \\n new\nline ` + "`id`" + `"}`
	req := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`
	got := s.RoundTrip(req)
	var resp struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.Result.IsError || resp.Result.Content[0].Text != args {
		t.Fatalf("echo round trip:\n got %s\nwant text %s", got, args)
	}
}

// Arguments reach the tool byte for byte, also far past argv's 128 KiB.
func TestTenMiBArgumentRoundTrip(t *testing.T) {
	s := harness.Start(t, harness.Options{Args: []string{harness.RepoPath("examples/plain/tools.sh")}, Env: []string{"TMPDIR=" + t.TempDir()}})
	s.RoundTrip(harness.InitLine)
	big := strings.Repeat("a\\\"b$(x)\\n", (10<<20)/10)
	args := `{"s":"` + big + `"}`
	got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`)
	var resp struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil || len(resp.Result.Content) != 1 {
		t.Fatalf("bad response (%d bytes)", len(got))
	}
	if resp.Result.Content[0].Text != args {
		t.Fatalf("10 MiB argument changed in transit (got %d bytes, want %d)", len(resp.Result.Content[0].Text), len(args))
	}
}

// ping and tools/list are answered while a call runs; responses carry ids.
func TestConcurrentPingDuringCall(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  `tool_wait() { while [ ! -e "$GATE" ]; do sleep 0.01; done; echo released; }`,
		"tools.json": harness.ToolsJSON("wait"),
	})
	gate := filepath.Join(dir, "gate")
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"GATE=" + gate, "TMPDIR=" + t.TempDir()}})
	s.RoundTrip(harness.InitLine)
	s.Send(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"wait"}}`)
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("ping during call: %s", got)
	}
	os.WriteFile(gate, nil, 0o644)
	if got := string(s.Recv()); !strings.Contains(got, `"id":"long"`) || !strings.Contains(got, "released") {
		t.Fatalf("long call: %s", got)
	}
}

// stdin EOF: every in-flight call finishes and is answered, then exit 0;
// a last line without a newline is answered.
func TestEOFDrainsInFlightCalls(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  `tool_nap() { sleep 0.2; echo "done $1"; }`,
		"tools.json": harness.ToolsJSON("nap"),
	})
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"TMPDIR=" + t.TempDir()}})
	s.RoundTrip(harness.InitLine)
	for i := 0; i < 20; i++ {
		s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nap","arguments":{"i":%d}}}`, i+1, i))
	}
	s.Stdin.Write([]byte(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)) // no newline
	s.Methods.Store(`"last"`, "ping")
	s.Stdin.Close()
	seen := map[string]bool{}
	for i := 0; i < 21; i++ {
		var m struct{ ID json.RawMessage }
		line := s.Recv()
		json.Unmarshal(line, &m)
		seen[string(m.ID)] = true
	}
	if len(seen) != 21 {
		t.Fatalf("answered %d distinct ids, want 21: %v", len(seen), seen)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v", ee)
	}
}

// A tool that leaves a background child holding its output returns at
// once, and the child is killed with the call's group.
func TestBackgroundChildDoesNotHoldTheCall(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  `tool_bg() { (sleep 100 &); sleep 100 & echo started; }`,
		"tools.json": harness.ToolsJSON("bg"),
	})
	marker := harness.MarkKey + "=" + strconv.Itoa(os.Getpid()) + "-bg"
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{marker, "TMPDIR=" + t.TempDir()}})
	s.RoundTrip(harness.InitLine)
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bg"}}`); !strings.Contains(got, `"text":"started"`) {
		t.Fatalf("bg: %s", got)
	}
	kv := strings.SplitN(marker, "=", 2)
	proctest.WaitUntil(t, harness.Deadline(t), "the call's background children are gone", func() (bool, string) {
		ps, err := proctest.WithEnv(kv[0], kv[1])
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range proctest.Alive(ps) {
			if p.PID != s.Cmd.Process.Pid {
				left = append(left, fmt.Sprintf("%d %v", p.PID, p.Cmdline))
			}
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
}

// Nothing but protocol reaches stdout, even when the script and its tools
// print at top level, in the hook and to stderr.
func TestStdoutCarriesOnlyProtocol(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh": `echo "top-level noise"; echo "stderr noise" >&2
mcp_before_tool_call() { echo "hook noise"; }
tool_loud() { echo "result"; echo "err" >&2; }`,
		"tools.json": harness.ToolsJSON("loud"),
	})
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"TMPDIR=" + t.TempDir()}})
	s.RoundTrip(harness.InitLine)
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"loud"}}`); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"result\nerr"}],"isError":false}}` {
		t.Fatalf("loud: %s", got)
	}
	s.CloseAndWait()
	for line := range s.Lines {
		t.Fatalf("unexpected extra stdout line: %q", line)
	}
}
