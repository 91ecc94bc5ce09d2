// Seed 001: a directory of executables that answer `list` (--tools-dir).

package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ==== Seed 001: a tools/ directory of executables ====

// sdSeedList is the `list` output of the seed README's example provider,
// byte for byte.
const sdSeedList = `{ "name": "echo", "title": "Echo Tool", "description": "Echoes the input text.", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] } }
{ "name": "add", "title": "Addition Tool", "description": "Adds two numbers.", "inputSchema": { "type": "object", "properties": { "a": { "type": "number" }, "b": { "type": "number" } }, "required": ["a","b"] } }
`

// examples/toolsdir/tools/test.sh behaves as the seed README shows when
// run by hand: `list` prints its two objects, `echo`/`add` print a tool
// result.
func TestToolsDirProviderByHand(t *testing.T) {
	exe := harness.RepoPath("examples/toolsdir/tools/test.sh")
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Env = sdEnv()
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run("list"); out != sdSeedList || code != 0 {
		t.Errorf("list (status %d):\n%s\nwant:\n%s", code, out, sdSeedList)
	}
	for _, c := range []struct{ tool, args, text string }{
		{"echo", `{"text":"Hello"}`, "Hello"},
		{"echo", `{"text":"say \"hi\"\\n"}`, `say \"hi\"\\n`},
		{"add", `{"a":4,"b":4}`, "8"},
		{"add", `{"a":40,"b":2}`, "42"},
		{"add", `{ "b" : -2.5 , "a" : 1.25 }`, "-1.25"},
		{"add", `{"a":0.1,"b":0.2}`, "0.3"},
	} {
		out, code := run(c.tool, c.args)
		want := `{"content":[{"type":"text","text":"` + c.text + `"}],"isError":false}` + "\n"
		if out != want || code != 0 {
			t.Errorf("%s %s (status %d): %q, want %q", c.tool, c.args, code, out, want)
		}
	}
	if _, code := run("add", `{"a":4}`); code != 1 {
		t.Errorf("add with a missing argument: status %d, want 1", code)
	}
	if out, code := run("nope"); code != 1 || out != `{"error":{"message":"Unknown"}}`+"\n" {
		t.Errorf("unknown tool: status %d %q", code, out)
	}
}

// mcp-bashd --tools-dir examples/toolsdir/tools: the seed's provider
// serves tools/list and calls, the argument schema is enforced, and the
// placeholder lists the seed answers are there.
func TestToolsDirExample(t *testing.T) {
	s := harness.Start(t, sdDaemon([]string{"--tools-dir", harness.RepoPath("examples/toolsdir/tools")}))
	s.RoundTrip(harness.InitLine)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sdWantLine(t, "tools/list", s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","title":"Echo Tool","description":"Echoes the input text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},{"name":"add","title":"Addition Tool","description":"Adds two numbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]}}`)
	sdWantLine(t, "add 4+4", s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":4,"b":4}}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"8"}],"isError":false}}`)
	sdWantLine(t, "add 40+2", s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"42"}],"isError":false}}`)
	sdWantLine(t, "echo", s.RoundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"Hello"}}}`),
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Hello"}],"isError":false}}`)
	// Arguments the schema rejects never reach the executable: an isError
	// naming what is wrong (the seed let the tool fail with exit 1).
	for i, c := range []struct{ args, want string }{
		{`{"a":40}`, "Missing required parameter(s): b"},
		{`{"a":"40","b":2}`, `Invalid type(s): a expected number, got string ("40")`},
	} {
		text, isErr := sdText(t, s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":%s}}`, 5+i, c.args)))
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("add %s: %q isError=%v, want an isError containing %q", c.args, text, isErr, c.want)
		}
	}
	if r := harness.Parse(t, s.RoundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mul","arguments":{}}}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown tool: %+v", r)
	}
	for i, c := range []struct{ method, want string }{
		{"resources/list", `{"resources":[]}`},
		{"resources/templates/list", `{"resourceTemplates":[]}`},
		{"prompts/list", `{"prompts":[]}`},
	} {
		id := 8 + i
		sdWantLine(t, c.method, s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, c.method)), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, c.want))
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.Stderr)
	}
}

// The Go SDK as the host of a tools directory.
func TestToolsDirGoSDK(t *testing.T) {
	g, err := sdGoConnect(t, &mcp.CommandTransport{Command: harness.Command(t, sdDaemon([]string{"--tools-dir", harness.RepoPath("examples/toolsdir/tools")}))}, "", nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"echo", "add"}) {
		t.Errorf("tools = %q", got)
	}
	if text, isErr := g.call("add", map[string]any{"a": 1.5, "b": 2.25}); text != "3.75" || isErr {
		t.Errorf("add = %q isError=%v", text, isErr)
	}
	if text, isErr := g.call("echo", map[string]any{"text": "ünïcode \"quoted\"\nline"}); text != "ünïcode \"quoted\"\nline" || isErr {
		t.Errorf("echo = %q isError=%v", text, isErr)
	}
	if text, isErr := g.call("add", map[string]any{"a": 1}); !isErr || !strings.Contains(text, "Missing required parameter(s): b") {
		t.Errorf("add without b = %q isError=%v", text, isErr)
	}
	g.closeStdio(sdModern)
}

// sdWriteExe writes an executable (mode 0755) or a plain file (0644).
func sdWriteExe(t *testing.T, path, body string, exe bool) {
	t.Helper()
	mode := os.FileMode(0o644)
	if exe {
		mode = 0o755
	}
	// Written aside and renamed into place: a directory listing never sees
	// a half-written executable.
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// What a provider prints comes back as the seed's server passed it: a
// tool result (content, isError) as it is, anything else as text; a
// non-zero exit is an isError; a provider that does not answer `list`, a
// file that is not executable and a subdirectory are skipped. Calls run
// under the supervisor like bash tools: own process group, MCP_CALL_TMPDIR
// (removed afterwards), x-mcp-bashd timeouts, cancellation.
func TestToolsDirProviders(t *testing.T) {
	dir := t.TempDir()
	sdWriteExe(t, filepath.Join(dir, "p.sh"), `#!/usr/bin/env bash
case $1 in
list)
    echo '{"name":"full","description":"prints a whole result","inputSchema":{"type":"object"}}'
    echo '{"name":"fullerr","description":"a result with isError","inputSchema":{"type":"object"}}'
    echo '{"name":"plain","description":"prints text","inputSchema":{"type":"object"}}'
    echo '{"name":"notresult","description":"JSON that is no result","inputSchema":{"type":"object"}}'
    echo '{"name":"exitfull","description":"a result, then exit 2","inputSchema":{"type":"object"}}'
    echo '{"name":"where","description":"where it runs","inputSchema":{"type":"object"}}'
    echo '{"name":"block","description":"runs until stopped","inputSchema":{"type":"object"}}'
    echo '{"name":"slow","description":"has a timeout","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"1s"}}'
    ;;
full) echo '{"content":[{"type":"text","text":"one"},{"type":"text","text":"two"}],"structuredContent":{"n":2},"isError":false}' ;;
fullerr) echo '{"content":[{"type":"text","text":"refused"}],"isError":true}' ;;
plain) printf 'plain text\n\n' ;;
notresult) echo '{"foo":1}' ;;
exitfull) echo '{"content":[{"type":"text","text":"x"}],"isError":false}'; exit 2 ;;
where)
    read -r _ _ _ _ pgid _ </proc/$$/stat
    [ -d "$MCP_CALL_TMPDIR" ] && printf '%s %s %s %s' "$pgid" "$MCP_CALL_TMPDIR" "$#" "$2"
    ;;
block)
    printf '%s %s' "$$" "$MCP_CALL_TMPDIR" >"$READY.tmp"
    mv "$READY.tmp" "$READY"
    exec sleep 600
    ;;
slow) exec sleep 600 ;;
esac
`, true)
	// Not a provider: `list` is a usage error (text on stdout, exit 64).
	sdWriteExe(t, filepath.Join(dir, "noanswer.sh"), "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo 'usage: noanswer.sh run'; exit 64; }\necho '{\"name\":\"ghost\",\"inputSchema\":{\"type\":\"object\"}}'\n", true)
	sdWriteExe(t, filepath.Join(dir, "notes.txt"), "{\"name\":\"notes\",\"inputSchema\":{\"type\":\"object\"}}\n", false)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	s := harness.Start(t, sdDaemon([]string{"--tools-dir", dir}, "READY="+ready))
	tmp := s.Tmp
	s.RoundTrip(harness.InitLine)

	list := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var lr struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(list), &lr)
	var names []string
	for _, tl := range lr.Result.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"full", "fullerr", "plain", "notresult", "exitfull", "where", "block", "slow"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tools = %q, want %q (noanswer.sh, notes.txt and sub/ skipped)", names, want)
	}
	if strings.Contains(list, "x-mcp-bashd") {
		t.Errorf("the private x-mcp-bashd key reached tools/list: %s", list)
	}
	call := func(id int, name, args string) string {
		return s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
	}
	sdWantLine(t, "full result passed through", call(2, "full", `{}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"one"},{"type":"text","text":"two"}],"structuredContent":{"n":2},"isError":false}}`)
	sdWantLine(t, "isError result passed through", call(3, "fullerr", `{}`),
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"refused"}],"isError":true}}`)
	sdWantLine(t, "plain text", call(4, "plain", `{}`),
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"plain text"}],"isError":false}}`)
	sdWantLine(t, "JSON that is not a result is text", call(5, "notresult", `{}`),
		`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\"foo\":1}"}],"isError":false}}`)
	if text, isErr := sdText(t, call(6, "exitfull", `{}`)); !isErr || !strings.Contains(text, `{"content":[{"type":"text","text":"x"}],"isError":false}`) {
		t.Errorf("non-zero exit after a success result: %q isError=%v, want an isError", text, isErr)
	}
	if r := harness.Parse(t, call(7, "ghost", `{}`)); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("a tool of the provider that does not answer list: %+v", r)
	}

	// EXE NAME ARGS_JSON in its own process group with a call directory.
	text, isErr := sdText(t, call(8, "where", `{"q":"a b"}`))
	f := strings.SplitN(text, " ", 4)
	if isErr || len(f) != 4 {
		t.Fatalf("where: %q isError=%v", text, isErr)
	}
	daemonPgid, _ := syscall.Getpgid(s.Cmd.Process.Pid)
	if pg, _ := strconv.Atoi(f[0]); pg == 0 || pg == daemonPgid {
		t.Errorf("the executable ran in process group %s (the daemon's is %d)", f[0], daemonPgid)
	}
	if !strings.HasPrefix(f[1], tmp+"/mcp-call.") || f[2] != "2" || f[3] != `{"q":"a b"}` {
		t.Errorf("where: tmpdir %q argc %q args %q", f[1], f[2], f[3])
	}
	if _, err := os.Stat(f[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call's MCP_CALL_TMPDIR %s outlived the call: %v", f[1], err)
	}

	// A per-tool timeout from the list line.
	sdWantLine(t, "timeout", call(9, "slow", `{}`),
		`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Tool slow timed out after 1s and was stopped."}],"isError":true}}`)

	// Cancellation: no response for the id, the process is gone, the
	// call directory too, and the server answers the next request.
	s.Send(`{"jsonrpc":"2.0","id":"blk","method":"tools/call","params":{"name":"block","arguments":{}}}`)
	var fields []string
	proctest.WaitUntil(t, harness.Deadline(t), "the blocking tool to start", func() (bool, string) {
		b, err := os.ReadFile(ready)
		fields = strings.Fields(string(b))
		return err == nil && len(fields) == 2, fmt.Sprint(err)
	})
	pid, _ := strconv.Atoi(fields[0])
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"blk"}}`)
	proctest.WaitUntil(t, harness.Deadline(t), "the cancelled executable to be gone", func() (bool, string) {
		p, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true, ""
		}
		_, statErr := os.Stat(fields[1])
		return false, fmt.Sprintf("%s (tmpdir: %v)", p, statErr)
	})
	proctest.WaitUntil(t, harness.Deadline(t), "the cancelled call's directory to be removed", func() (bool, string) {
		_, err := os.Stat(fields[1])
		return errors.Is(err, os.ErrNotExist), fmt.Sprint(err)
	})
	sdWantLine(t, "ping after cancel", s.RoundTrip(`{"jsonrpc":"2.0","id":10,"method":"ping"}`), `{"jsonrpc":"2.0","id":10,"result":{}}`)

	// The seed's convention passes ARGS_JSON in argv, which Linux caps at
	// 128 KiB per string: a bigger argument is a clear isError, and the
	// server goes on.
	big := strings.Repeat("x", 200<<10)
	if text, isErr := sdText(t, call(11, "where", `{"s":"`+big+`"}`)); !isErr || !strings.Contains(text, "Argument list too long") {
		t.Errorf("a 200 KiB argument: isError=%v %.200q", isErr, text)
	}
	sdWantLine(t, "ping after a refused exec", s.RoundTrip(`{"jsonrpc":"2.0","id":12,"method":"ping"}`), `{"jsonrpc":"2.0","id":12,"result":{}}`)
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.Stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "mcp-call.*")); len(left) != 0 {
		t.Errorf("call directories left behind: %q", left)
	}
}

// The seed's contract: a provider prints its tool result on stdout, and its
// stderr is a log (the seed logged it, and parsed stdout alone). A warning
// on stderr must not turn a valid result into text.
func TestToolsDirStderrIsNotTheResult(t *testing.T) {
	dir := t.TempDir()
	sdWriteExe(t, filepath.Join(dir, "w.sh"), `#!/usr/bin/env bash
case $1 in
list) echo '{"name":"warn","inputSchema":{"type":"object"}}' ;;
warn)
    echo "warning: cache cold" >&2
    echo '{"content":[{"type":"text","text":"result"}],"isError":false}'
    ;;
esac
`, true)
	s := harness.Start(t, sdDaemon([]string{"--tools-dir", dir}))
	s.RoundTrip(harness.InitLine)
	sdWantLine(t, "a result on stdout with a warning on stderr", s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warn","arguments":{}}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"result"}],"isError":false}}`)
}

// Two executables advertising one name: tools/list fails with the seed's
// -32603 "Duplicate tool names: NAME:NEW,EXISTING" (the later file in
// name order is the new one); the server keeps answering, and removing one
// of the two restores the list.
func TestToolsDirDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.sh"), filepath.Join(dir, "b.sh")
	sdWriteExe(t, a, "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"solo\",\"inputSchema\":{\"type\":\"object\"}}'; echo '{\"name\":\"dup\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"a:$1\"\n", true)
	sdWriteExe(t, b, "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"dup\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"b:$1\"\n", true)
	s := harness.Start(t, sdDaemon([]string{"--tools-dir", dir}))
	s.RoundTrip(harness.InitLine)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Duplicate tool names: dup:` + b + `,` + a + `"}}`
	sdWantLine(t, "tools/list with a duplicate", s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), want)
	s.Revision = sdModern
	sdWantLine(t, "2026 tools/list with a duplicate", s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+sdMeta+`}}`), want)
	s.Revision = "2025-11-25"
	sdWantLine(t, "ping", s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), `{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	list := s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if !strings.Contains(list, `"name":"solo"`) || !strings.Contains(list, `"name":"dup"`) {
		t.Errorf("after removing b.sh: %s", list)
	}
	if text, isErr := sdText(t, s.RoundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"dup","arguments":{}}}`)); text != "a:dup" || isErr {
		t.Errorf("dup after the fix: %q isError=%v", text, isErr)
	}
}

// A `list` that prints something other than one tool object per line:
// tools/list fails naming the file and the line; fixing the file (no
// restart) restores the list.
func TestToolsDirInvalidList(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "c.sh")
	good := `{"name":"fine","inputSchema":{"type":"object"}}`
	provider := func(lines string) string {
		return "#!/usr/bin/env bash\n[ \"$1\" = list ] && cat <<'EOF'\n" + lines + "EOF\n"
	}
	sdWriteExe(t, exe, provider(good+"\n"), true)
	s := harness.Start(t, sdDaemon([]string{"--tools-dir", dir}))
	s.RoundTrip(harness.InitLine)
	for i, c := range []struct {
		name, lines, want string
	}{
		{"invalid JSON on line 2", good + "\n" + `{"name":"broken",` + "\n", "line 2: not valid JSON"},
		{"blank lines count", good + "\n\n" + `{"name": nope}` + "\n", "line 3: not valid JSON"},
		{"not an object", `["fine"]` + "\n", "line 1: is not a JSON object"},
		{"two documents on a line", good + " " + good + "\n", "line 1: holds more than one JSON document"},
		{"no name", good + "\n" + `{"inputSchema":{"type":"object"}}` + "\n", "line 2: no string name"},
	} {
		sdWriteExe(t, exe, provider(c.lines), true)
		r := harness.Parse(t, s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)))
		prefix := "Invalid tool JSON from " + exe + " " + c.want
		if r.Error == nil || r.Error.Code != -32603 || !strings.HasPrefix(r.Error.Message, prefix) {
			t.Errorf("%s: got %+v, want -32603 starting %q", c.name, r.Error, prefix)
		}
	}
	sdWriteExe(t, exe, "#!/usr/bin/env bash\n[ \"$1\" = list ] && echo '"+good+"'\n", true)
	if list := s.RoundTrip(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); !strings.Contains(list, `"name":"fine"`) {
		t.Errorf("after the fix: %s", list)
	}
}

// --tools-dir together with a server script: tools.json's tools first,
// then the directory's; both kinds of call work in one server.
func TestToolsDirWithServerScript(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  "PREFIX=from-script\ntool_scripted() { echo \"$PREFIX\"; }\n",
		"tools.json": harness.ToolsJSON("scripted"),
	})
	tools := filepath.Join(dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	sdWriteExe(t, filepath.Join(tools, "t.sh"), "#!/usr/bin/env bash\n[ \"$1\" = list ] && { echo '{\"name\":\"listed\",\"inputSchema\":{\"type\":\"object\"}}'; exit 0; }\necho \"from-dir $1 $2\"\n", true)
	g, err := sdGoConnect(t, &mcp.CommandTransport{Command: harness.Command(t, sdDaemon([]string{"--tools-dir", tools, filepath.Join(dir, "server.sh")}))}, "2025-11-25", nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := g.toolNames(); !reflect.DeepEqual(got, []string{"scripted", "listed"}) {
		t.Errorf("tools = %q", got)
	}
	if text, isErr := g.call("scripted", map[string]any{}); text != "from-script" || isErr {
		t.Errorf("scripted = %q isError=%v", text, isErr)
	}
	if text, isErr := g.call("listed", map[string]any{"k": 1}); text != `from-dir listed {"k":1}` || isErr {
		t.Errorf("listed = %q isError=%v", text, isErr)
	}
	g.closeStdio("2025-11-25")
}
