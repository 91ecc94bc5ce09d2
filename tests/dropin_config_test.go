// Drop-in configuration (issue 11): a config file
// named explicitly must exist (item 8), schemas the SDK tolerated keep
// working (item 9), daemon settings from the environment and a strictly
// sequential mode (item 10), and the manifest form reading the files the
// script names (item 15).

package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// cfgScript is a drop-in server: it sources the shim, may set the config
// file itself (CFG_SET_CONFIG), and has a tool that blocks on a gate.
const cfgScript = `#!/usr/bin/env bash
source "$SHIM"
if [ -n "${CFG_SET_CONFIG:-}" ]; then MCP_CONFIG_FILE=$CFG_SET_CONFIG; fi
tool_echo() { printf '%s' "$1"; }
# block: records its pid under its tag (and whether another block was
# running: overlap.TAG), then waits for one line on the gate.
tool_block() {
    local re='"tag"[[:space:]]*:[[:space:]]*"([^"]*)"'
    [[ $1 =~ $re ]]
    local tag=${BASH_REMATCH[1]}
    if [ -e "$CFG_DIR/busy" ]; then : >"$CFG_DIR/overlap.$tag"; fi
    : >"$CFG_DIR/busy"
    printf '%s' "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" >"$CFG_DIR/started.$tag.tmp" && mv "$CFG_DIR/started.$tag.tmp" "$CFG_DIR/started.$tag"
    read -r _ <"$CFG_GATE"
    rm -f "$CFG_DIR/busy"
    printf 'released %s' "$tag"
}
run_mcp_server
`

const cfgToolsJSON = `{"tools":[
 {"name":"echo","description":"echo","inputSchema":{"type":"object"}},
 {"name":"block","description":"block","inputSchema":{"type":"object","properties":{"tag":{"type":"string"}}}}]}`

// cfgServer is a written server and what its tools need.
type cfgServer struct {
	dir, script, ctl, log string
	gate                  *cmGate
	env                   []string
}

func cfgNewServer(t *testing.T, files map[string]string) *cfgServer {
	t.Helper()
	if files == nil {
		files = map[string]string{}
	}
	if _, ok := files["server.sh"]; !ok {
		files["server.sh"] = cfgScript
	}
	if _, ok := files["tools.json"]; !ok {
		files["tools.json"] = cfgToolsJSON
	}
	s := &cfgServer{dir: harness.WriteFiles(t, files), ctl: t.TempDir(), gate: cmNewGate(t)}
	s.script = filepath.Join(s.dir, "server.sh")
	s.log = filepath.Join(s.ctl, "daemon.log")
	s.env = []string{"MCP_BASHD=" + harness.Binary, "SHIM=" + harness.RepoPath("scripts/mcpserver_core.sh"), "TMPDIR=" + t.TempDir(),
		"CFG_DIR=" + s.ctl, "CFG_GATE=" + s.gate.path, "MCP_LOG_FILE=" + s.log}
	return s
}

// dropIn starts ./server.sh (the drop-in form) in its own directory, where
// the SDK's defaults (tools.json, config.json) are.
func (s *cfgServer) dropIn(t *testing.T, env ...string) *harness.Daemon {
	t.Helper()
	return harness.Start(t, harness.Options{Exe: s.script, Args: []string{}, WorkDir: s.dir, Env: append(append([]string{}, s.env...), env...)})
}

// started waits for the block call tagged tag to run and returns its pid.
func (s *cfgServer) started(t *testing.T, tag string) int {
	t.Helper()
	var pid int
	proctest.WaitUntil(t, harness.Deadline(t), "block "+tag+" to start", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(s.ctl, "started."+tag))
		if err != nil {
			return false, err.Error()
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil, string(b)
	})
	return pid
}

// logLines are the daemon's JSON log lines whose message is msg.
func (s *cfgServer) logLines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	return cfgLogLines(t, s.log, msg)
}

// cfgLogLines returns the log file's JSON lines whose message is msg (all of them for "").
func cfgLogLines(t *testing.T, path, msg string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && (msg == "" || m["msg"] == msg) {
			out = append(out, m)
		}
	}
	return out
}

func cfgID(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %s", line)
	}
	return string(m.ID)
}

func cfgCall(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// ==== item 8: a config file named explicitly and missing ====

// Under bash-mcp-sdk a missing MCP_CONFIG_FILE answers initialize with
// -32603 naming it. A file the environment, the script or --config names
// must therefore exist; only the default beside the script may be absent.
func TestNamedConfigMissing(t *testing.T) {
	const defaults = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}`
	const discover = `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	missing := filepath.Join(t.TempDir(), "gone", "config.json")
	// A shim vendored before it said whether MCP_CONFIG_FILE was named: it
	// exported its default, which must still be optional.
	shim, err := os.ReadFile(harness.RepoPath("scripts/mcpserver_core.sh"))
	if err != nil {
		t.Fatal(err)
	}
	oldShim := filepath.Join(t.TempDir(), "mcpserver_core.sh")
	before := strings.ReplaceAll(string(shim), `export __MCPBASHD_CONFIG_NAMED="${MCP_CONFIG_FILE:+1}" MCP_CONFIG_FILE=`, `export MCP_CONFIG_FILE=`)
	if before == string(shim) {
		t.Fatal("the shim's export line changed; update this test")
	}
	if err := os.WriteFile(oldShim, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string // nil: the drop-in form (./server.sh)
		env  []string
		want string // "" : the defaults
	}{
		{name: "drop-in default absent"},
		{name: "drop-in default absent, older shim", env: []string{"SHIM=" + oldShim}},
		{name: "drop-in environment names it", env: []string{"MCP_CONFIG_FILE=nope.json"}, want: "nope.json"},
		{name: "drop-in script names it", env: []string{"CFG_SET_CONFIG=conf/missing.json"}, want: "conf/missing.json"},
		{name: "manifest default absent", args: []string{}},
		{name: "manifest --config names it", args: []string{"--config", missing}, want: missing},
		{name: "manifest environment names it", args: []string{}, env: []string{"MCP_CONFIG_FILE=" + missing}, want: missing},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := cfgNewServer(t, nil)
			var srv *harness.Daemon
			if c.args == nil {
				srv = s.dropIn(t, c.env...)
			} else {
				srv = harness.Start(t, harness.Options{Args: append(c.args, s.script), Env: append(append([]string{}, s.env...), c.env...)})
			}
			got := srv.RoundTrip(harness.InitLine)
			if c.want == "" {
				if got != defaults {
					t.Fatalf("initialize: %s", got)
				}
				return
			}
			want := `{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"Cannot read server configuration: ` + c.want + `"}}`
			if got != want {
				t.Fatalf("initialize:\n got %s\nwant %s", got, want)
			}
			// The 2026 SDK's counterpart, server/discover, refuses too.
			d := srv.RoundTrip(discover)
			if !strings.Contains(d, `"code":-32603`) || !strings.Contains(d, "Cannot read server configuration: "+c.want) {
				t.Errorf("server/discover: %s", d)
			}
			// Tools do not depend on it.
			if got := srv.RoundTrip(cfgCall(1, "echo", `{"a":1}`)); !strings.Contains(got, `"text":"{\"a\":1}"`) {
				t.Errorf("call: %s", got)
			}
			if ee := srv.CloseAndWait(); ee != nil {
				t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
			}
			// The log says which file and why.
			found := false
			for _, l := range s.logLines(t, "") {
				// The SDK's sentence, with the path and reason as fields too.
				m, _ := l["msg"].(string)
				p, _ := l["path"].(string)
				e, _ := l["error"].(string)
				found = found || (m == "File not found: "+p && strings.HasSuffix(p, c.want) && strings.Contains(e, "no such file or directory"))
			}
			if !found {
				b, _ := os.ReadFile(s.log)
				t.Errorf("no log line naming %s and its reason:\n%s", c.want, b)
			}
		})
	}
}

// ==== item 9: schemas the SDK tolerated ====

const cfgMalformedTools = `{"tools":[
 {"name":"lenient","description":"malformed keywords the SDK left unenforced","inputSchema":{"type":"object","properties":{
   "empty":{"type":[]},"mixed":{"type":["string",7]},"bound":{"minimum":"3"},"d4":{"minimum":0,"exclusiveMinimum":true}}}},
 {"name":"guarded","description":"a pattern RE2 cannot compile","inputSchema":{"type":"object","properties":{
   "name":{"type":"string","pattern":"^(?!-)[a-z-]+$"}}}},
 {"name":"outer","description":"a nested dispatch","inputSchema":{"type":"object"}}]}`

// A tool whose schema holds malformed keywords keeps working (they are not
// enforced, as under the SDK) and each is logged once per version of
// tools.json; a pattern that cannot be compiled refuses the strings it
// applies to with the SDK's evaluation-failure text.
func TestMalformedSchemasKeepWorking(t *testing.T) {
	s := cfgNewServer(t, map[string]string{"tools.json": cfgMalformedTools, "server.sh": `#!/usr/bin/env bash
source "$SHIM"
tool_lenient() { printf 'ran %s' "$1"; }
tool_guarded() { printf 'ran %s' "$1"; }
tool_outer() { handle_tools_call 9 '{"name":"lenient","arguments":{"empty":"x"}}'; }
run_mcp_server
`})
	srv := s.dropIn(t)
	srv.RoundTrip(harness.InitLine)
	args := `{"empty":5,"mixed":5,"bound":1,"d4":0}`
	for i := 1; i <= 3; i++ {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ran {\"empty\":5,\"mixed\":5,\"bound\":1,\"d4\":0}"}],"isError":false}}`, i)
		if got := srv.RoundTrip(cfgCall(i, "lenient", args)); got != want {
			t.Fatalf("lenient:\n got %s\nwant %s", got, want)
		}
	}
	if got := srv.RoundTrip(cfgCall(4, "guarded", `{"name":"-rf"}`)); got != `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Cannot validate arguments for guarded: they could not be evaluated against its schema."}],"isError":true}}` {
		t.Errorf("guarded with a string: %s", got)
	}
	if got := srv.RoundTrip(cfgCall(5, "guarded", `{}`)); !strings.Contains(got, `"text":"ran {}"`) {
		t.Errorf("guarded without one: %s", got)
	}
	// A nested dispatch's output is its answer alone: the warnings (and the
	// absent default config.json) are the serving daemon's to report.
	if got := srv.RoundTrip(cfgCall(8, "outer", `{}`)); got != `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ran {\\\"empty\\\":\\\"x\\\"}\"}],\"isError\":false}}"}],"isError":false}}` {
		t.Errorf("nested dispatch: %s", got)
	}
	const malformed = "inputSchema keyword is malformed and not enforced"
	const pattern = "inputSchema pattern cannot be evaluated; strings it applies to are refused"
	count := func() (int, int) { return len(s.logLines(t, malformed)), len(s.logLines(t, pattern)) }
	if m, p := count(); m != 4 || p != 1 {
		b, _ := os.ReadFile(s.log)
		t.Fatalf("logged %d malformed keywords and %d patterns, want 4 and 1:\n%s", m, p, b)
	}
	keywords := map[string]bool{}
	for _, l := range s.logLines(t, malformed) {
		keywords[fmt.Sprint(l["tool"], " ", l["keyword"])] = l["reason"] != ""
	}
	for _, k := range []string{"lenient /properties/empty/type", "lenient /properties/mixed/type", "lenient /properties/bound/minimum", "lenient /properties/d4/exclusiveMinimum"} {
		if !keywords[k] {
			t.Errorf("no log line for %s: %v", k, keywords)
		}
	}
	// A new version of the file is reported again, once.
	tmp := filepath.Join(s.dir, "tools.json.new")
	if err := os.WriteFile(tmp, []byte(cfgMalformedTools+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, "tools.json")); err != nil {
		t.Fatal(err)
	}
	srv.RoundTrip(cfgCall(6, "lenient", args))
	proctest.WaitUntil(t, harness.Deadline(t), "the new version's warnings", func() (bool, string) {
		m, p := count()
		return m == 8 && p == 2, fmt.Sprint(m, p)
	})
	srv.RoundTrip(cfgCall(7, "lenient", args))
	if m, p := count(); m != 8 || p != 2 {
		t.Errorf("after another call: %d and %d warnings, want 8 and 2", m, p)
	}
	if ee := srv.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
	}
}

// ==== item 10: settings from the environment, the sequential mode ====

// A host that starts ./server.sh has no command line of ours: the settings
// come from MCP_BASHD_<NAME> and MCP_BASHD_FLAGS, the command line winning
// over MCP_BASHD_FLAGS, which wins over MCP_BASHD_<NAME>.
func TestSettingsFromTheEnvironment(t *testing.T) {
	s := cfgNewServer(t, nil)
	timedOut := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Tool block timed out after 150ms and was stopped."}],"isError":true}}`
	t.Run("drop-in", func(t *testing.T) {
		srv := s.dropIn(t, "MCP_BASHD_TIMEOUT=150ms")
		srv.RoundTrip(harness.InitLine)
		if got := srv.RoundTrip(cfgCall(1, "block", `{"tag":"t1"}`)); got != timedOut {
			t.Errorf("MCP_BASHD_TIMEOUT: %s", got)
		}
		if ee := srv.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
		}
	})
	t.Run("precedence", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "daemon.log")
		env := append(append([]string{}, s.env...), "MCP_LOG_FILE="+log,
			"MCP_BASHD_MAX_CONCURRENCY=3", "MCP_BASHD_GRACE=9s", "MCP_BASHD_TIMEOUT=150ms", "MCP_BASHD_SEQUENTIAL=0",
			"MCP_BASHD_FLAGS= --max-concurrency 5  --grace 3s --drain 1500ms ")
		srv := harness.Start(t, harness.Options{Args: []string{"--max-concurrency", "7", s.script}, Env: env})
		srv.RoundTrip(harness.InitLine)
		if got := srv.RoundTrip(cfgCall(1, "block", `{"tag":"t2"}`)); got != timedOut {
			t.Errorf("timeout: %s", got)
		}
		if ee := srv.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
		}
		lines := cfgLogLines(t, log, "serving")
		if len(lines) != 1 {
			t.Fatalf("%d serving lines", len(lines))
		}
		got, _ := json.Marshal(lines[0]["settings"])
		if want := `{"drain":1.5,"grace":3,"max_concurrency":7,"sequential":false,"timeout":0.15}`; string(got) != want {
			t.Errorf("settings %s, want %s", got, want)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct{ env, names string }{
			{"MCP_BASHD_MAX_CONCURRENCY=lots", "MCP_BASHD_MAX_CONCURRENCY"},
			{"MCP_BASHD_SEQUENTIAL=yes please", "MCP_BASHD_SEQUENTIAL"},
			{"MCP_BASHD_FLAGS=--no-such-flag", "MCP_BASHD_FLAGS"},
			{"MCP_BASHD_FLAGS=--grace 1s other.sh", "MCP_BASHD_FLAGS"},
			{"MCP_BASHD_FLAGS=--snapshot-fd 3", "MCP_BASHD_FLAGS"},
		} {
			cmd := exec.Command(harness.Binary, s.script)
			cmd.Env = append(append(os.Environ(), s.env...), c.env)
			out, err := cmd.CombinedOutput()
			if !strings.Contains(fmt.Sprint(err), "exit status 2") || !strings.Contains(string(out), c.names) {
				t.Errorf("%s: %v\n%s", c.env, err, out)
			}
		}
	})
}

// bash-mcp-sdk answered strictly in arrival order: a ping sent during a
// call was answered after it. --sequential (MCP_BASHD_SEQUENTIAL=1) does
// the same, while a cancellation of the running call still cancels it.
func TestSequentialAnswersInArrivalOrder(t *testing.T) {
	s := cfgNewServer(t, nil)
	srv := s.dropIn(t, "MCP_BASHD_SEQUENTIAL=1")
	srv.RoundTrip(harness.InitLine)

	// A ping behind a running call waits for it.
	srv.Send(cfgCall(1, "block", `{"tag":"a"}`))
	s.started(t, "a")
	srv.Send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	s.gate.release(t)
	if got := string(srv.Recv()); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"released a"}],"isError":false}}` {
		t.Fatalf("first answer: %s", got)
	}
	if got := string(srv.Recv()); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("second answer: %s", got)
	}

	// A cancellation of the running call overtakes the queue and cancels
	// it: no answer for it, the queued ping next, the tool gone.
	srv.Send(cfgCall(3, "block", `{"tag":"b"}`))
	pid := s.started(t, "b")
	srv.Send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	srv.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	if got := string(srv.Recv()); got != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Fatalf("after the cancellation: %s", got)
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the cancelled tool to be gone", func() (bool, string) {
		p, err := proctest.Scan()
		if err != nil {
			return false, err.Error()
		}
		for _, q := range proctest.Alive(p) {
			if q.PID == pid {
				return false, q.String()
			}
		}
		return true, ""
	})

	// A cancellation of a call that has not started yet is handled in its
	// turn, after that call: it finds nothing in flight (as under the SDK).
	srv.Send(cfgCall(5, "block", `{"tag":"c"}`))
	s.started(t, "c")
	srv.Send(cfgCall(6, "echo", `{"e":6}`))
	srv.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	srv.Send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	s.gate.release(t)
	for _, want := range []string{"5", "6", "7"} {
		got := string(srv.Recv())
		if id := cfgID(t, got); id != want {
			t.Fatalf("answer %s, want id %s", got, want)
		}
		if want == "6" && !strings.Contains(got, `"text":"{\"e\":6}"`) {
			t.Errorf("echo: %s", got)
		}
	}
	if ee := srv.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
	}
	lines := s.logLines(t, "serving")
	if len(lines) != 1 || fmt.Sprint(lines[0]["settings"].(map[string]any)["sequential"]) != "true" {
		t.Errorf("serving: %v", lines)
	}
}

// Over HTTP every POST is its own request: --sequential handles one at a
// time server-wide, in the order they arrive. The second call finds the
// first one's "busy" file gone: it started only once the first had ended.
func TestSequentialOverHTTP(t *testing.T) {
	s := cfgNewServer(t, nil)
	mark := "cfg-seq-http-" + strconv.Itoa(os.Getpid())
	d := harness.StartHTTP(t, harness.Options{Script: s.script, Flags: []string{"--sequential"}, Env: s.env, Marked: mark})
	answers := make(chan string, 2)
	post := func(body string) {
		req, _ := http.NewRequest(http.MethodPost, d.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answers <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers <- string(b)
	}
	go post(cfgCall(1, "block", `{"tag":"h1"}`))
	s.started(t, "h1")
	go post(cfgCall(2, "block", `{"tag":"h2"}`))
	s.gate.release(t)
	s.started(t, "h2")
	s.gate.release(t)
	got := ""
	for range 2 {
		select {
		case a := <-answers:
			got += a
		case <-time.After(time.Until(harness.Deadline(t))):
			t.Fatalf("no answer\n%s", d.Stderr.String())
		}
	}
	if !strings.Contains(got, "released h1") || !strings.Contains(got, "released h2") {
		t.Errorf("answers: %s", got)
	}
	if _, err := os.Stat(filepath.Join(s.ctl, "overlap.h2")); err == nil {
		t.Errorf("the second call ran while the first was running")
	}
	d.StopClean(t, mark)
}

// ==== item 15: the manifest form reads the files the script names ====

// cfgNamingScript changes directory and names its files relative to the
// new one, as servers written for the SDK do.
const cfgNamingScript = `#!/usr/bin/env bash
cd "$(dirname "${BASH_SOURCE[0]}")/srv" || exit 1
MCP_TOOLS_LIST_FILE=decl/tools.json
export MCP_CONFIG_FILE=decl/config.json
MCP_LOG_FILE=logs/server.log
source "$SHIM"
tool_where() { pwd; }
run_mcp_server
`

func TestManifestReadsTheFilesTheScriptNames(t *testing.T) {
	s := cfgNewServer(t, map[string]string{
		"server.sh":            cfgNamingScript,
		"tools.json":           harness.ToolsJSON("beside"), // the old default: must not be read
		"srv/decl/tools.json":  harness.ToolsJSON("where"),
		"srv/decl/config.json": `{"serverInfo":{"name":"named-by-script","version":"2.0.0"}}`,
		"srv/logs/.keep":       "",
		"other.json":           harness.ToolsJSON("flagged"),
	})
	env := []string{"SHIM=" + harness.RepoPath("scripts/mcpserver_core.sh"), "TMPDIR=" + t.TempDir()} // no MCP_* of the host
	elsewhere := t.TempDir()
	srv := harness.Start(t, harness.Options{Args: []string{s.script}, Env: env, WorkDir: elsewhere})
	if got := srv.RoundTrip(harness.InitLine); !strings.Contains(got, `"serverInfo":{"name":"named-by-script","version":"2.0.0"}`) {
		t.Errorf("initialize: %s", got)
	}
	if got := srv.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !strings.Contains(got, `"name":"where"`) || strings.Contains(got, "beside") {
		t.Errorf("tools/list: %s", got)
	}
	if got := srv.RoundTrip(cfgCall(2, "where", `{}`)); !strings.Contains(got, `"text":"`+filepath.Join(s.dir, "srv")+`"`) {
		t.Errorf("where: %s", got)
	}
	if ee := srv.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
	}
	serving := cfgLogLines(t, filepath.Join(s.dir, "srv/logs/server.log"), "serving")
	if len(serving) != 1 || serving[0]["tools"] != filepath.Join(s.dir, "srv/decl/tools.json") || serving[0]["config_named"] != true {
		t.Errorf("the script's log file: %v", serving)
	}

	// A flag still wins.
	srv = harness.Start(t, harness.Options{Args: []string{"--tools", filepath.Join(s.dir, "other.json"), s.script}, Env: env, WorkDir: elsewhere})
	if got := srv.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !strings.Contains(got, `"name":"flagged"`) {
		t.Errorf("tools/list with --tools: %s", got)
	}
	srv.CloseAndWait()

	// And the commands for people read the same files.
	run := func(args ...string) (string, error) {
		cmd := exec.Command(harness.Binary, args...)
		cmd.Env, cmd.Dir = append(os.Environ(), env...), elsewhere
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("tools", s.script); err != nil || !strings.Contains(out, "where") || strings.Contains(out, "beside") {
		t.Errorf("tools: %v\n%s", err, out)
	}
	if out, err := run("check", s.script); err != nil || !strings.Contains(out, ": ok (1 tools)") {
		t.Errorf("check: %v\n%s", err, out)
	}
	if out, err := run("call", s.script, "where"); err != nil || strings.TrimSpace(out) != filepath.Join(s.dir, "srv") {
		t.Errorf("call: %v\n%s", err, out)
	}
}

// The repository's weather server (the 2026 SDK's README example) names
// its files before sourcing the SDK: it works in the manifest form and
// with tools/check/call, from any directory.
func TestWeatherInManifestForm(t *testing.T) {
	dir := t.TempDir()
	src := harness.RepoPath("examples/weather")
	for _, f := range []string{"weatherserver.sh", "mcpserver_core.sh", "mcpserver_http.sh", "assets/weatherserver_config.json", "assets/weatherserver_tools.json"} {
		b, err := os.ReadFile(filepath.Join(src, f)) // through the symlinks
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "logs"), 0o755)
	script := filepath.Join(dir, "weatherserver.sh")
	env := []string{"TMPDIR=" + t.TempDir(), "MCP_BASHD=" + harness.Binary}
	elsewhere := t.TempDir()
	srv := harness.Start(t, harness.Options{Args: []string{script}, Env: env, WorkDir: elsewhere})
	if got := srv.RoundTrip(harness.InitLine); !strings.Contains(got, `"name":"WeatherServer"`) {
		t.Errorf("initialize: %s", got)
	}
	if got := srv.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !strings.Contains(got, `"name":"get_weather"`) {
		t.Errorf("tools/list: %s", got)
	}
	if got := srv.RoundTrip(cfgCall(2, "get_weather", `{"location":"Paris"}`)); !strings.Contains(got, `Partly cloudy`) || strings.Contains(got, `"isError":true`) {
		t.Errorf("get_weather: %s", got)
	}
	if ee := srv.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, srv.Stderr)
	}
	if len(cfgLogLines(t, filepath.Join(dir, "logs/weatherserver.log"), "serving")) != 1 {
		t.Errorf("logs/weatherserver.log has no serving line")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", script}, "get_weather"},
		{[]string{"check", script}, "ok (1 tools)"},
		{[]string{"call", script, "get_weather", "location=Tokyo"}, `"conditions":"Clear"`},
	} {
		cmd := exec.Command(harness.Binary, c.args...)
		cmd.Env, cmd.Dir = append(os.Environ(), env...), elsewhere
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %v\n%s", c.args[0], err, out)
		}
	}
}
