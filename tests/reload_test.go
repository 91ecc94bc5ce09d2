package tests

// Hot reload (issue 5): when the server script, tools.json, config.json or
// a tools directory changes, mcp-bashd reloads without dropping in-flight
// calls — a call that started before the change finishes on the old
// definitions — announces it with notifications/tools/list_changed where
// the server advertises listChanged, and keeps serving the last good
// definitions when a change breaks them, logging the file and line.
//
// Every wait for a reload is a readiness condition (a call's result or a
// log record changes), bounded by deadline(t); none is a fixed sleep.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// rl2NoteBound bounds the wait for a notification that may never come: the
// daemon checks its files every 500 ms, so this is a bound for a hang (a
// missing notification), not a timing assertion.
const rl2NoteBound = 20 * time.Second

const rl2ListChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// rl2Server writes files into a fresh directory and describes the daemon
// serving its server.sh (manifest mode), with flags before the script.
func rl2Server(t *testing.T, files map[string]string, flags ...string) harness.Options {
	dir := t.TempDir()
	return harness.Options{Files: files, Dir: dir, Flags: flags, CleanEnv: true, TempDir: true, Log: true, Mark: "sd",
		Env: []string{"GATE=" + filepath.Join(dir, "gate"), "STARTED=" + filepath.Join(dir, "started")}}
}

// rl2Call runs a tool and returns its text and isError, or the error message
// and true for a JSON-RPC error.
func rl2Call(r *harness.Daemon, tool string) (string, bool) {
	r.T.Helper()
	line := r.Request("tools/call", `{"name":"`+tool+`","arguments":{}}`)
	res := harness.Parse(r.T, line)
	if res.Error != nil {
		return fmt.Sprintf("error %d: %s", res.Error.Code, res.Error.Message), true
	}
	return sdText(r.T, line)
}

// rl2WaitCall calls tool until its text is want: the readiness condition of
// a reload.
func rl2WaitCall(t *testing.T, r *harness.Daemon, tool, want, what string) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), what, func() (bool, string) {
		text, isErr := rl2Call(r, tool)
		return text == want && !isErr, fmt.Sprintf("%s returned %q (isError=%v)", tool, text, isErr)
	})
}

// rl2ToolNames lists the tools tools/list returns.
func rl2ToolNames(r *harness.Daemon) []string {
	r.T.Helper()
	line := r.Request("tools/list", "")
	var lr struct {
		Result *struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &lr) != nil || lr.Result == nil {
		r.T.Fatalf("tools/list: %s", line)
	}
	names := []string{}
	for _, tl := range lr.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// rl2Replace replaces a file's content at once (written aside, renamed
// over), as editors save: the daemon never reads half a file.
func rl2Replace(t *testing.T, path, content string) {
	t.Helper()
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
	if err := os.WriteFile(tmp, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// rl2Records reads the daemon's JSON log records.
func rl2Records(path string) []map[string]any {
	b, _ := os.ReadFile(path)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// rl2WaitLog waits for a log record with message msg whose fields contain
// every one of parts (in any string field).
func rl2WaitLog(t *testing.T, r *harness.Daemon, msg string, parts ...string) map[string]any {
	t.Helper()
	return rl2WaitLogAfter(t, r, 0, msg, parts...)
}

// rl2WaitLogAfter is waitLog on the records after the first skip.
func rl2WaitLogAfter(t *testing.T, r *harness.Daemon, skip int, msg string, parts ...string) map[string]any {
	t.Helper()
	var found map[string]any
	proctest.WaitUntil(t, harness.Deadline(t), fmt.Sprintf("a log record %q mentioning %q", msg, parts), func() (bool, string) {
		var last []string
		recs := rl2Records(r.Log)
		for _, rec := range recs[min(skip, len(recs)):] {
			if rec["msg"] != msg {
				continue
			}
			b, _ := json.Marshal(rec)
			last = append(last, string(b))
			all := true
			for _, p := range parts {
				hit := false
				for _, v := range rec {
					if s, ok := v.(string); ok && strings.Contains(s, p) {
						hit = true
					}
				}
				all = all && hit
			}
			if all {
				found = rec
				return true, ""
			}
		}
		return false, fmt.Sprintf("records with that message: %q", last)
	})
	return found
}

// A call in flight across a change of the script finishes on the old
// definitions — the function and the helper it calls as they were when it
// started — while a call started after the reload uses the new ones.
func TestInFlightCallKeepsOldDefinition(t *testing.T) {
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh": `GEN=old
describe() { echo "helper of the $GEN script"; }
tool_slow() {
    : >"$STARTED"
    while [ ! -e "$GATE" ]; do sleep 0.01; done
    echo "slow, first definition: $(describe)"
}
tool_gen() { echo "$GEN"; }
`,
		"tools.json": harness.ToolsJSON("slow", "gen"),
	}))
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	r.Send(`{"jsonrpc":"2.0","id":"inflight","method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	proctest.WaitUntil(t, harness.Deadline(t), "the first call to be running", func() (bool, string) {
		_, err := os.Stat(filepath.Join(r.Dir, "started"))
		return err == nil, fmt.Sprint(err)
	})
	rl2Replace(t, filepath.Join(r.Dir, "server.sh"), `GEN=new
describe() { echo "helper of the $GEN script"; }
tool_slow() { echo "slow, second definition: $(describe)"; }
tool_gen() { echo "$GEN"; }
`)
	rl2WaitCall(t, r, "gen", "new", "the reloaded script to serve calls")
	if text, isErr := rl2Call(r, "slow"); text != "slow, second definition: helper of the new script" || isErr {
		t.Errorf("a call started after the reload: %q isError=%v", text, isErr)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := r.Await(`"inflight"`)
	if text, isErr := sdText(t, got); text != "slow, first definition: helper of the old script" || isErr {
		t.Errorf("the call in flight across the change: %s", got)
	}
	rl2WaitLog(t, r, "server script reloaded", filepath.Join(r.Dir, "server.sh"))
	if ee := r.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, r.Stderr)
	}
}

// An edit to tools.json is seen by the very next request: no restart, no
// waiting.
func TestToolsJSONEditSeenByNextRequest(t *testing.T) {
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh":  "tool_one() { echo one; }\ntool_two() { echo two; }\n",
		"tools.json": harness.ToolsJSON("one"),
	}))
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"one"}) {
		t.Errorf("tools before the edit = %q", got)
	}
	if text, _ := rl2Call(r, "two"); text != "error -32601: Tool not found: two" {
		t.Errorf("an undeclared tool before the edit: %q", text)
	}
	tools := filepath.Join(r.Dir, "tools.json")
	rl2Replace(t, tools, harness.ToolsJSON("one", "two"))
	if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("tools after adding two = %q", got)
	}
	if text, isErr := rl2Call(r, "two"); text != "two" || isErr {
		t.Errorf("two after it was declared: %q isError=%v", text, isErr)
	}
	rl2Replace(t, tools, harness.ToolsJSON("two"))
	if text, _ := rl2Call(r, "one"); text != "error -32601: Tool not found: one" {
		t.Errorf("one after it was removed from tools.json: %q", text)
	}
}

// With capabilities.tools.listChanged: true in config.json, an initialized
// client gets notifications/tools/list_changed when tools.json changes and
// when the script's set of functions changes; tools/list then shows it.
func TestListChangedAfterInitialize(t *testing.T) {
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh":   "tool_one() { echo one; }\n",
		"tools.json":  harness.ToolsJSON("one"),
		"config.json": `{"serverInfo":{"name":"reloading","version":"1"},"capabilities":{"tools":{"listChanged":true}}}`,
	}))
	sdWantLine(t, "initialize", r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"reloading","version":"1"},"capabilities":{"tools":{"listChanged":true}}}}`)
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	rl2Replace(t, filepath.Join(r.Dir, "tools.json"), harness.ToolsJSON("one", "three"))
	r.AwaitNote(t, rl2ListChanged, rl2NoteBound, "an edit of tools.json")
	if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"one", "three"}) {
		t.Errorf("tools after the edit = %q", got)
	}
	if text, _ := rl2Call(r, "three"); text != "error -32601: Tool not found: three" {
		t.Errorf("three before its function exists: %q", text)
	}

	rl2Replace(t, filepath.Join(r.Dir, "server.sh"), "tool_one() { echo one; }\ntool_three() { echo three; }\n")
	r.AwaitNote(t, rl2ListChanged, rl2NoteBound, "a new function in the script")
	if text, isErr := rl2Call(r, "three"); text != "three" || isErr {
		t.Errorf("three after the notification: %q isError=%v", text, isErr)
	}
	if ee := r.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, r.Stderr)
	}
}

// The same with a real host: the Go SDK pinned to a legacy revision calls
// its ToolListChangedHandler, and its next tools/list has the new tool.
func TestGoSDKLegacyListChanged(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":   "tool_one() { echo one; }\ntool_two() { echo two; }\n",
		"tools.json":  harness.ToolsJSON("one"),
		"config.json": `{"capabilities":{"tools":{"listChanged":true}}}`,
	})
	changed := make(chan struct{}, 16)
	cmd := harness.Command(t, sdDaemon([]string{filepath.Join(dir, "server.sh")}))
	g, err := sdGoConnect(t, &mcp.CommandTransport{Command: cmd}, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"one"}) {
		t.Errorf("tools = %q", got)
	}
	rl2Replace(t, filepath.Join(dir, "tools.json"), harness.ToolsJSON("one", "two"))
	select {
	case <-changed:
	case <-time.After(min(rl2NoteBound, time.Until(harness.Deadline(t)))):
		t.Fatalf("the Go SDK's ToolListChangedHandler was not called within %v of the edit", rl2NoteBound)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("tools after the notification = %q", got)
	}
	if text, isErr := g.call("two", map[string]any{}); text != "two" || isErr {
		t.Errorf("two = %q isError=%v", text, isErr)
	}
	g.closeStdio("2025-11-25")
}

// The Go SDK's default (2026-07-28) connect with a ToolListChangedHandler,
// on a server whose config.json declares listChanged: true. The SDK then
// opens a subscriptions/listen stream; a 2026 server that advertises
// listChanged must deliver list_changed there (REVISIONS.md), or must not
// advertise it. Either way the host must be able to connect.
func TestGoSDKModernListChanged(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":   "tool_one() { echo one; }\ntool_two() { echo two; }\n",
		"tools.json":  harness.ToolsJSON("one"),
		"config.json": `{"capabilities":{"tools":{"listChanged":true}}}`,
	})
	changed := make(chan struct{}, 16)
	cmd := harness.Command(t, sdDaemon([]string{filepath.Join(dir, "server.sh")}))
	g, err := sdGoConnect(t, &mcp.CommandTransport{Command: cmd}, "", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if err != nil {
		t.Fatalf("the Go SDK's default client cannot connect to a server that declares tools.listChanged: %v", err)
	}
	caps := g.cs.InitializeResult().Capabilities
	if caps == nil || caps.Tools == nil || !caps.Tools.ListChanged {
		return // not advertised: nothing to deliver
	}
	rl2Replace(t, filepath.Join(dir, "tools.json"), harness.ToolsJSON("one", "two"))
	select {
	case <-changed:
	case <-time.After(min(rl2NoteBound, time.Until(harness.Deadline(t)))):
		g.wire.mu.Lock()
		defer g.wire.mu.Unlock()
		t.Fatalf("server/discover advertises tools.listChanged but no list_changed reached the client within %v of the edit; the server sent: %q", rl2NoteBound, g.wire.in)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("tools after the notification = %q", got)
	}
}

// A script edit that breaks the server — a bash syntax error, a top level
// that fails — is logged with the file and the line, and the last good
// definitions keep serving; fixing the file restores service.
func TestBrokenScriptKeepsServing(t *testing.T) {
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh":  "GEN=one\ntool_gen() { echo \"$GEN\"; }\n",
		"tools.json": harness.ToolsJSON("gen"),
	}))
	script := filepath.Join(r.Dir, "server.sh")
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	if text, _ := rl2Call(r, "gen"); text != "one" {
		t.Fatalf("gen before any edit: %q", text)
	}

	rl2Replace(t, script, "GEN=two\ntool_gen() { echo \"$GEN\"; }\ntool_bad() { if then fi; }\n")
	rl2WaitLog(t, r, "reload failed; the previous definitions keep serving", script+": line 3: syntax error")
	if text, isErr := rl2Call(r, "gen"); text != "one" || isErr {
		t.Errorf("after a syntax error: gen = %q isError=%v, want the last good definition's \"one\"", text, isErr)
	}

	rl2Replace(t, script, "set -e\ncd /nonexistent-rl2-dir\nGEN=three\ntool_gen() { echo \"$GEN\"; }\n")
	rl2WaitLog(t, r, "reload failed; the previous definitions keep serving", "exit status 1", script+": line 2: cd: /nonexistent-rl2-dir")
	if text, isErr := rl2Call(r, "gen"); text != "one" || isErr {
		t.Errorf("after a failing top level: gen = %q isError=%v, want \"one\"", text, isErr)
	}

	rl2Replace(t, script, "GEN=four\ntool_gen() { echo \"$GEN\"; }\n")
	rl2WaitCall(t, r, "gen", "four", "the fixed script to serve calls")
	if ee := r.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, r.Stderr)
	}
}

// Invalid JSON in tools.json or config.json: the last good file keeps
// serving, the log names the file and the line; the fix takes effect at
// the next request.
func TestBrokenJSONKeepsServing(t *testing.T) {
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh":   "tool_one() { echo one; }\ntool_two() { echo two; }\n",
		"tools.json":  harness.ToolsJSON("one"),
		"config.json": `{"serverInfo":{"name":"cfg-one","version":"1"}}`,
	}))
	tools := filepath.Join(r.Dir, "tools.json")
	config := filepath.Join(r.Dir, "config.json")
	initialize := func() string {
		var res struct {
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		line := r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
		json.Unmarshal([]byte(line), &res)
		return res.Result.ServerInfo.Name
	}
	if name := initialize(); name != "cfg-one" {
		t.Fatalf("serverInfo before any edit: %q", name)
	}
	const unusable = "tools list changed but is unusable; the last good one keeps serving"
	for _, c := range []struct{ name, body, line string }{
		{"a stray comma on line 3", "{\n  \"tools\": [\n    {\"name\": \"one\", \"inputSchema\": {\"type\": \"object\"}},,\n  ]\n}\n", "line 3"},
		{"a save cut short after line 3", "{\n  \"tools\": [\n    {\"name\": \"one\",\n", "line 3"},
	} {
		seen := len(rl2Records(r.Log))
		rl2Replace(t, tools, c.body)
		if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"one"}) {
			t.Errorf("%s: tools/list = %q, want the last good list", c.name, got)
		}
		if text, isErr := rl2Call(r, "one"); text != "one" || isErr {
			t.Errorf("%s: one = %q isError=%v", c.name, text, isErr)
		}
		rec := rl2WaitLogAfter(t, r, seen, unusable, tools)
		if e, _ := rec["error"].(string); !strings.Contains(e, c.line) {
			t.Errorf("%s: the log record does not name the line (%s): %v", c.name, c.line, rec)
		}
	}
	rl2Replace(t, tools, harness.ToolsJSON("one", "two"))
	if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("tools/list after the fix = %q", got)
	}

	seen := len(rl2Records(r.Log))
	rl2Replace(t, config, "{\n  \"serverInfo\": {\"name\": \"cfg-two\" \"version\": \"1\"}\n}\n")
	if name := initialize(); name != "cfg-one" {
		t.Errorf("initialize after config.json broke: serverInfo %q, want the last good \"cfg-one\"", name)
	}
	rec := rl2WaitLogAfter(t, r, seen, "server configuration changed but is unusable; the last good one keeps serving", config)
	if e, _ := rec["error"].(string); !strings.Contains(e, "line 2") {
		t.Errorf("the config.json record does not name line 2: %v", rec)
	}
	rl2Replace(t, config, `{"serverInfo":{"name":"cfg-two","version":"1"}}`)
	if name := initialize(); name != "cfg-two" {
		t.Errorf("initialize after the config fix: %q", name)
	}
}

// A drop-in server started as ./server.sh (the shim in place of the SDK)
// reloads too, with the script's own arguments kept: the daemon runs the
// edited script again exactly as it was started.
func TestDropInReloadKeepsScriptArguments(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh": `#!/usr/bin/env bash
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export MCP_TOOLS_LIST_FILE="$HERE/tools.json"
source "$HERE/mcpserver_core.sh"
GEN=one
ARG="$1"
tool_gen() { echo "$GEN $ARG"; }
run_mcp_server
`,
		"tools.json": harness.ToolsJSON("gen"),
	})
	if err := os.Symlink(harness.RepoPath("scripts/mcpserver_core.sh"), filepath.Join(dir, "mcpserver_core.sh")); err != nil {
		t.Fatal(err)
	}
	r := harness.Start(t, harness.Options{Exe: filepath.Join(dir, "server.sh"), Args: []string{"the-arg"}, Dir: dir,
		CleanEnv: true, Env: []string{"MCP_BASHD=" + harness.Binary}, TempDir: true, Mark: "sd"})
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	if text, _ := rl2Call(r, "gen"); text != "one the-arg" {
		t.Fatalf("gen before the edit: %q", text)
	}
	body, err := os.ReadFile(filepath.Join(dir, "server.sh"))
	if err != nil {
		t.Fatal(err)
	}
	rl2Replace(t, filepath.Join(dir, "server.sh"), strings.Replace(string(body), "GEN=one", "GEN=two", 1))
	rl2WaitCall(t, r, "gen", "two the-arg", "the edited drop-in script to serve calls")
	if ee := r.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, r.Stderr)
	}
}

// A tools directory is reloaded too: an executable added to it shows in
// the next tools/list, and a client that was told listChanged hears of it.
func TestToolsDirChangeNotifies(t *testing.T) {
	tools := t.TempDir()
	sdWriteExe(t, filepath.Join(tools, "p.sh"), "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"first\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"ran $1\"\n", true)
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh":   "tool_scripted() { echo scripted; }\n",
		"tools.json":  harness.ToolsJSON("scripted"),
		"config.json": `{"capabilities":{"tools":{"listChanged":true}}}`,
	}, "--tools-dir", tools))
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"scripted", "first"}) {
		t.Errorf("tools = %q", got)
	}
	sdWriteExe(t, filepath.Join(tools, "q.sh"), "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"second\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"ran $1\"\n", true)
	if got := rl2ToolNames(r); !reflect.DeepEqual(got, []string{"scripted", "first", "second"}) {
		t.Errorf("tools after adding q.sh = %q", got)
	}
	if text, isErr := rl2Call(r, "second"); text != "ran second" || isErr {
		t.Errorf("second = %q isError=%v", text, isErr)
	}
	r.AwaitNote(t, rl2ListChanged, rl2NoteBound, "an executable was added to the tools directory")
}

// Issue 9, bug 2: list_changed follows what changed, not which file the
// watcher listed first. config.json edited together with a script that
// gains a tool function says list_changed (the watcher used to say nothing
// when both changed in one poll); an edit of config.json alone leaves
// tools/list as it was and says nothing (it used to say list_changed).
func TestListChangedFollowsTheTools(t *testing.T) {
	cfg := `{"capabilities":{"tools":{"listChanged":true}}%s}`
	r := harness.Start(t, rl2Server(t, map[string]string{
		"server.sh":   "tool_one() { echo one; }\n",
		"tools.json":  harness.ToolsJSON("one", "two"),
		"config.json": fmt.Sprintf(cfg, ""),
	}))
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	rl2Replace(t, filepath.Join(r.Dir, "config.json"), fmt.Sprintf(cfg, `,"instructions":"edited"`))
	rl2Replace(t, filepath.Join(r.Dir, "server.sh"), "tool_one() { echo one; }\ntool_two() { echo two; }\n")
	r.AwaitNote(t, rl2ListChanged, rl2NoteBound, "config.json and the script changed together (the script gained tool_two)")
	if text, isErr := rl2Call(r, "two"); text != "two" || isErr {
		t.Errorf("two after the reload = %q isError=%v", text, isErr)
	}
	seen := len(rl2Records(r.Log))
	rl2Replace(t, filepath.Join(r.Dir, "config.json"), fmt.Sprintf(cfg, `,"instructions":"again"`))
	// The watcher logs its decision after any notification it sent, so
	// once the record is there a list_changed would already be on the
	// wire ahead of the ping's response.
	rec := rl2WaitLogAfter(t, r, seen, "server files changed")
	r.Request("ping", "")
	for _, n := range r.Notes {
		if n == rl2ListChanged {
			t.Errorf("list_changed after an edit of config.json alone (tools/list did not change); decision: %v", rec)
		}
	}
	if rec["list_changed_sent"] != false || rec["tools_list_changed"] != false {
		t.Errorf("decision for a config.json edit: %v", rec)
	}
}

// Issue 9, bug 1: listing a tools directory runs its providers, which may
// take long; it never holds up the connection's reader. A tools/list that
// needs a provider that blocks is answered when the provider returns,
// while a ping sent right behind it is answered at once.
func TestSlowToolsDirListDoesNotHoldPing(t *testing.T) {
	tools := t.TempDir()
	ctl := t.TempDir()
	provider := "#!/usr/bin/env bash\nif [ \"$1\" = list ]; then\n" +
		"  if [ -e " + ctl + "/slow ]; then : > " + ctl + "/listing; until [ -e " + ctl + "/release ]; do sleep 0.01; done; fi\n" +
		"  echo '{\"name\":\"%s\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0\nfi\necho \"ran $1\"\n"
	sdWriteExe(t, filepath.Join(tools, "p.sh"), fmt.Sprintf(provider, "first"), true)
	r := harness.Start(t, rl2Server(t, map[string]string{"server.sh": "tool_scripted() { echo scripted; }\n", "tools.json": harness.ToolsJSON("scripted")}, "--tools-dir", tools))
	// Whatever happens, the provider is released before the daemon stops.
	t.Cleanup(func() { os.WriteFile(filepath.Join(ctl, "release"), nil, 0o644) })
	r.Request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rl2","version":"0"}}`)
	if err := os.WriteFile(filepath.Join(ctl, "slow"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A new provider: the directory must be listed again, and every
	// listing now blocks until release.
	sdWriteExe(t, filepath.Join(tools, "q.sh"), fmt.Sprintf(provider, "second"), true)
	r.Send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	proctest.WaitUntil(t, harness.Deadline(t), "a provider's list to start", func() (bool, string) {
		_, err := os.Stat(filepath.Join(ctl, "listing"))
		return err == nil, fmt.Sprint(err)
	})
	r.Send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	bound := time.After(min(rl2NoteBound, time.Until(harness.Deadline(t))))
	for got := false; !got; {
		select {
		case line, ok := <-r.Lines:
			if !ok {
				t.Fatalf("server closed stdout\nstderr:\n%s", r.Stderr)
			}
			r.Check(line)
			switch {
			case bytes.Contains(line, []byte(`"id":"ping"`)):
				got = true
			case bytes.Contains(line, []byte(`"id":"list"`)):
				t.Fatalf("tools/list answered while its provider was blocked: %s", line)
			}
		case <-bound:
			t.Fatalf("ping not answered within %v while a tools-directory provider's list was blocked: the reader is held up", rl2NoteBound)
		}
	}
	if err := os.WriteFile(filepath.Join(ctl, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	line := r.Await(`"list"`)
	if !strings.Contains(line, `"name":"second"`) || !strings.Contains(line, `"name":"first"`) {
		t.Errorf("tools/list after the provider returned: %s", line)
	}
}
