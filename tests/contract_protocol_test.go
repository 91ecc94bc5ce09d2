// Contract items 2-9 and 31 of the bash SDK: initialize and tools/list from
// the configuration files, the request gates, and ps visibility.

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// ---------------------------------------------------------------- 8, 9

func TestInitializeDefaults(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `:`, tools: `{"tools":[]}`}))
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); got != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}` {
		t.Errorf("no params version, no config: %s", got)
	}
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"initialize"}`); got != `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2024-11-05","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}` {
		t.Errorf("no params at all: %s", got)
	}
	for i, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`, 10+i, v)
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":%q,"serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}`, 10+i, v)
		if got := s.RoundTrip(line); got != want {
			t.Errorf("version %s:\n got %s\nwant %s", v, got, want)
		}
	}
	line := `{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`
	if got := s.RoundTrip(line); got != `{"jsonrpc":"2.0","id":20,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}` {
		t.Errorf("unknown version: %s", got)
	}
}

func TestInitializeWithConfig(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `:`, tools: `{"tools":[]}`,
		config: "{\n  \"protocolVersion\": \"2025-06-18\",\n  \"serverInfo\": {\"name\": \"probe\", \"version\": \"9.9.9\"},\n  \"instructions\": \"Be kind.\"\n}\n"}))
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); got != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"probe","version":"9.9.9"},"capabilities":{"tools":{}},"instructions":"Be kind."}}` {
		t.Errorf("absent version: %s", got)
	}
	line := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`
	if got := harness.Parse(t, s.RoundTrip(line)); !strings.Contains(got.Raw, `"protocolVersion":"2025-03-26"`) {
		t.Errorf("a supported client version is echoed: %s", got.Raw)
	}
	line = `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`
	if got := harness.Parse(t, s.RoundTrip(line)); !strings.Contains(got.Raw, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("an unknown client version gets the configured one: %s", got.Raw)
	}
}

// A config that is not one JSON object is -32603 naming the path; the
// server keeps serving everything else.
func TestInitializeInvalidConfig(t *testing.T) {
	for _, c := range []struct{ name, body string }{
		{"malformed", `{ not json`}, {"empty", "\n"}, {"two documents", `{"protocolVersion":"1.0"}` + "\n" + `{"protocolVersion":"2.0"}`},
		{"array", `[1]`}, {"null", `null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := harness.Start(t, ctServer(t, ctOpt{script: `tool_x() { echo x; }`, tools: harness.ToolsJSON("x"), config: c.body}))
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Cannot read server configuration: ` + ctConfFile(s) + `"}}`
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("ping: %s", got)
			}
			ctWantText(t, s.Call(3, "x", `{}`), false, "x")
		})
	}
}

// A tools list that is not one JSON object is -32603 on tools/list.
func TestToolsListInvalid(t *testing.T) {
	for _, c := range []struct {
		name, body string
		missing    bool
	}{{"missing", "", true}, {"malformed", `{"tools": [ broken`, false}, {"empty", "", false},
		{"two documents", `{"tools":[]}` + "\n" + `{"tools":[]}`, false}, {"array", `[]`, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := harness.Start(t, ctServer(t, ctOpt{script: `:`, tools: c.body, noTools: c.missing}))
			s.RoundTrip(harness.InitLine)
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Cannot read tools list: ` + ctToolsFile(s) + `"}}`
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			if got := s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("ping: %s", got)
			}
		})
	}
}

// tools/list is .tools verbatim (compact, key order kept) or [] without it.
func TestToolsListVerbatim(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `:`, tools: "{\n \"tools\": [ {\"name\": \"greet\", \"description\": \"Say <hello> & bye.\", \"inputSchema\": {\"type\": \"object\", \"properties\": {\"z\": {\"type\": \"string\"}, \"a\": {\"type\": \"integer\"}}}} ]\n}\n"}))
	s.RoundTrip(harness.InitLine)
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"greet","description":"Say <hello> & bye.","inputSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}}}}]}}` {
		t.Errorf("got %s", got)
	}
	s2 := harness.Start(t, ctServer(t, ctOpt{script: `:`, tools: `{"other":1}`}))
	s2.RoundTrip(harness.InitLine)
	if got := s2.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` {
		t.Errorf("no tools key: %s", got)
	}
}

// An edited tools.json is seen by the next tools/list and tools/call,
// without a restart.
func TestToolsListEditedWithoutRestart(t *testing.T) {
	start := func(t *testing.T) (*harness.Daemon, func(id int) string) {
		s := harness.Start(t, ctServer(t, ctOpt{script: `tool_aa() { echo aa; }
tool_bb() { echo bb; }
tool_cc() { echo cc; }`, tools: harness.ToolsJSON("aa")}))
		s.RoundTrip(harness.InitLine)
		list := func(id int) string {
			return s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		}
		if got := list(1); !strings.Contains(got, `"name":"aa"`) {
			t.Fatalf("first list: %s", got)
		}
		return s, list
	}
	t.Run("in place, new size", func(t *testing.T) {
		s, list := start(t)
		if err := os.WriteFile(ctToolsFile(s), []byte(harness.ToolsJSON("aa", "bb")), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := list(2); !strings.Contains(got, `"name":"bb"`) {
			t.Errorf("edit not seen by tools/list: %s", got)
		}
		ctWantText(t, s.Call(3, "bb", `{}`), false, "bb")
	})
	t.Run("replaced by rename", func(t *testing.T) {
		s, list := start(t)
		tmp := ctToolsFile(s) + ".new"
		if err := os.WriteFile(tmp, []byte(harness.ToolsJSON("cc")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, ctToolsFile(s)); err != nil {
			t.Fatal(err)
		}
		if got := list(2); !strings.Contains(got, `"name":"cc"`) || strings.Contains(got, `"name":"aa"`) {
			t.Errorf("edit not seen by tools/list: %s", got)
		}
		ctWantError(t, s.Call(3, "aa", `{}`), -32601, "Tool not found: aa")
	})
	// Same size, same inode, and the same mtime as the version the daemon
	// read: what an in-place save within one timestamp tick leaves on a
	// filesystem or kernel with coarse timestamps (jiffy-granular ext4 on
	// kernels without multigrain timestamps, 1-2 s on others). The mtime is
	// set back explicitly so the case does not depend on this machine's
	// clock granularity.
	t.Run("in place, same size, same mtime", func(t *testing.T) {
		s, list := start(t)
		fi, err := os.Stat(ctToolsFile(s))
		if err != nil {
			t.Fatal(err)
		}
		next := harness.ToolsJSON("cc")
		if len(next) != int(fi.Size()) {
			t.Fatalf("test bug: sizes differ")
		}
		if err := os.WriteFile(ctToolsFile(s), []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(ctToolsFile(s), fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if got := list(2); !strings.Contains(got, `"name":"cc"`) || strings.Contains(got, `"name":"aa"`) {
			t.Errorf("same-size in-place edit not seen by tools/list: %s", got)
		}
		if r := s.Call(3, "cc", `{}`); r.Result == nil {
			t.Errorf("same-size in-place edit not seen by tools/call: %s", r.Raw)
		}
	})
}

// server/discover without the 2026-07-28 _meta is answered at once with
// an error, also while a call is running, so a client probing for the
// stateless revision falls back to initialize without waiting. The code is
// the one shared/spec/REVISIONS.md gives for a request missing its
// required _meta (-32602; the conformance suite sends exactly this).
// resources/list, resources/templates/list and prompts/list are empty.
func TestOtherMethods(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `tool_wait() { : > "$MARKS/started"; while [ ! -e "$MARKS/gate" ]; do sleep 0.01; done; echo released; }`, tools: harness.ToolsJSON("wait")}))
	s.RoundTrip(harness.InitLine)
	s.Send(harness.CallLine(1, "wait", `{}`))
	proctest.WaitUntil(t, harness.Deadline(t), "the tool started", func() (bool, string) { return ctExists(s, "started"), "" })
	if r := harness.Parse(t, s.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}`)); r.Error == nil || r.Error.Code != -32602 || string(r.ID) != "2" {
		t.Errorf("server/discover without _meta: %s", r.Raw)
	}
	for i, c := range []struct{ method, result string }{
		{"resources/list", `{"resources":[]}`},
		{"resources/templates/list", `{"resourceTemplates":[]}`},
		{"prompts/list", `{"prompts":[]}`},
	} {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, 10+i, c.result)
		if got := s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, 10+i, c.method)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.method, got, want)
		}
	}
	os.WriteFile(filepath.Join(ctMarks(s), "gate"), nil, 0o644)
	ctWantText(t, harness.Parse(t, string(s.Recv())), false, "released")
}

// ---------------------------------------------------------------- 31

// While a call runs, its bash processes show the server script, the
// script's own arguments (a marker) and the tool name in their command
// line, as the SDK's subshells did. Manifest and drop-in forms.
func TestProcessesShowScriptAndArguments(t *testing.T) {
	const tool = `tool_ps_probe_tool() {
  printf '%s\n' "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" > "$MARKS/tool.pid.tmp"
  ( while [ ! -e "$MARKS/gate" ]; do sleep 0.01; done ) &
  local sub=$!
  printf '%s\n' "$sub" > "$MARKS/sub.pid"
  mv "$MARKS/tool.pid.tmp" "$MARKS/tool.pid"
  wait "$sub"
  echo released
}`
	instance := fmt.Sprintf("--ct-instance=%d-%d", os.Getpid(), time.Now().UnixNano())
	check := func(t *testing.T, s *harness.Daemon, marks, script string) {
		s.RoundTrip(harness.InitLine)
		s.Send(harness.CallLine(1, "ps_probe_tool", `{}`))
		pidFile := filepath.Join(marks, "tool.pid")
		proctest.WaitUntil(t, harness.Deadline(t), "the tool started", func() (bool, string) {
			_, err := os.Stat(pidFile)
			return err == nil, ""
		})
		toolPID := ctReadPID(t, pidFile)
		subPID := ctReadPID(t, filepath.Join(marks, "sub.pid"))
		ps, err := proctest.Scan()
		if err != nil {
			t.Fatal(err)
		}
		pgid := -1
		for _, p := range ps {
			if p.PID == toolPID {
				pgid = p.PGID
			}
		}
		checked := map[int]bool{}
		for _, p := range ps {
			// A fork caught between stat and cmdline while it execs sleep
			// shows comm "bash" but argv "sleep": only bash argv counts.
			if p.PGID != pgid || p.Comm != "bash" || p.State == 'Z' || len(p.Cmdline) == 0 || filepath.Base(p.Cmdline[0]) != "bash" {
				continue
			}
			checked[p.PID] = true
			cl := strings.Join(p.Cmdline, " ")
			for _, want := range []string{script, instance, "ps_probe_tool"} {
				if !strings.Contains(cl, want) {
					t.Errorf("pid %d (%s): cmdline %q lacks %q", p.PID, p.Comm, p.Cmdline, want)
				}
			}
		}
		// (and a spawned call's sentinel: a forked call has none)
		if !checked[toolPID] || !checked[subPID] {
			t.Errorf("expected the tool shell %d and its subshell %d among the call's bash processes, checked %v", toolPID, subPID, checked)
		}
		os.WriteFile(filepath.Join(marks, "gate"), nil, 0o644)
		ctWantText(t, harness.Parse(t, string(s.Recv())), false, "released")
	}
	t.Run("manifest", func(t *testing.T) {
		s := harness.Start(t, ctServer(t, ctOpt{script: tool, tools: harness.ToolsJSON("ps_probe_tool"), scriptArgs: []string{instance}}))
		check(t, s, ctMarks(s), filepath.Join(s.Dir, "server.sh"))
	})
	t.Run("drop-in", func(t *testing.T) {
		dir := t.TempDir()
		script := filepath.Join(dir, "server.sh")
		ctWrite(t, filepath.Join(dir, "tools.json"), harness.ToolsJSON("ps_probe_tool"), 0o644, nil)
		ctWrite(t, script, "#!/usr/bin/env bash\nexport MCP_TOOLS_LIST_FILE=\""+filepath.Join(dir, "tools.json")+"\"\nsource \"$SHIM\"\n"+tool+"\nrun_mcp_server\n", 0o755, nil)
		s := harness.Exec(t, script, []string{instance}, []string{"MCP_BASHD=" + harness.Binary, "SHIM=" + harness.RepoPath("scripts/mcpserver_core.sh"), "MARKS=" + dir, "TMPDIR=" + t.TempDir()})
		check(t, s, dir, script)
	})
}

func ctReadPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %q", path, b)
	}
	return n
}

// A tool that waits for its own background jobs with a bare `wait` (or
// lists them with `jobs`) sees only its own jobs: nothing the daemon starts
// in the tool's shell may be one of them. Bounded by a per-tool timeout so
// a hang fails fast.
func TestToolWaitSeesOnlyItsOwnJobs(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `tool_jobs() { printf 'jobs=%s\n' "$(jobs -p | wc -l)"; }
tool_par() { local i; for i in 1 2 3; do (sleep 0.05; echo "job $i" > "$MARKS/job.$i") & done; wait; echo waited; }`,
		tools: `{"tools":[{"name":"jobs","inputSchema":{"type":"object"}},{"name":"par","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"5s"}}]}`,
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "jobs", `{}`), false, "jobs=0")
	ctWantText(t, s.Call(2, "par", `{}`), false, "waited")
	for i := 1; i <= 3; i++ {
		if !ctExists(s, "job."+strconv.Itoa(i)) {
			t.Errorf("job %d did not finish before wait returned", i)
		}
	}
}

// ---------------------------------------------------------------- 2–7

// The request gates through the binary, in the SDK's order and with its
// texts; every rejected line leaves the server serving, and nothing is
// ever answered for a notification.
func TestRequestGates(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `tool_x() { : > "$MARKS/x.ran"; echo x; }`, tools: harness.ToolsJSON("x")}))
	s.RoundTrip(harness.InitLine)
	const (
		parse    = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}`
		oneDoc   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Expected exactly one JSON document per line"}}`
		notObj   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}}`
		badIDTyp = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or an integer"}}`
	)
	badVersion := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be 2.0"}}`
	}
	for _, c := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, parse},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`, oneDoc},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}{"jsonrpc":"2.0","id":4,"method":"ping"}`, oneDoc},
		{`   `, oneDoc}, // zero documents: the SDK's bats pins this text
		{`[1,2]`, notObj}, {`false`, notObj}, {`null`, notObj}, {`5`, notObj}, {`"x"`, notObj},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, badVersion("5")},
		{`{"jsonrpc":"1.0","id":"s","method":"ping"}`, badVersion(`"s"`)},
		{`{"jsonrpc":"1.0","id":1.5,"method":"ping"}`, badVersion("null")},
		{`{"jsonrpc":"1.0","id":[1],"method":"ping"}`, badVersion("null")},
		{`{"id":6,"method":"ping"}`, badVersion("6")},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, badIDTyp},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, badIDTyp},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, badIDTyp},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, badIDTyp},
		{`{"jsonrpc":"2.0","id":[],"method":"tools/call","params":{"name":"x"}}`, badIDTyp},
		{`{"jsonrpc":"2.0","id":"7","method":"ping"}`, `{"jsonrpc":"2.0","id":"7","result":{}}`},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`},
		{`{"jsonrpc":"2.0","id":8,"method":"foo/bar"}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found: foo/bar"}}`},
		{`{"jsonrpc":"2.0","id":9,"method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: notifications/initialized"}}`},
		{`{"jsonrpc":"2.0","id":10,"method":"notifications/cancelled","params":{"requestId":1}}`, `{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"Method not found: notifications/cancelled"}}`},
	} {
		if got := s.RoundTrip(c.line); got != c.want {
			t.Errorf("line %s\n got %s\nwant %s", c.line, got, c.want)
		}
	}
	// Notifications (no id key) and empty lines are never answered: the
	// next line out is the ping's.
	for _, n := range []string{
		``,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`,
		`{"jsonrpc":"2.0","method":"some/unknown"}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`,
	} {
		s.Send(n)
	}
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
		t.Errorf("a notification or empty line was answered: %s", got)
	}
	if ctExists(s, "x.ran") {
		t.Error("a tools/call from a rejected line or a notification ran")
	}
}

// An entry whose "inputSchema" comes before its "name" is the same tool:
// key order inside a tools.json entry carries no meaning, so every text
// naming the tool names it.
func TestSchemaEntryKeyOrder(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `tool_late() { echo late; }`,
		tools:  `{"tools":[{"inputSchema":{"type":"object","required":["n"]},"description":"d","name":"late"}]}`,
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "late", `{}`), true, "Missing required parameter(s): n.")
	ctWantText(t, s.Call(2, "late", `{"n":1e999999}`), true, "Cannot validate arguments for late: they could not be evaluated against its schema.")
	ctWantText(t, s.Call(3, "late", `{"n":1}`), false, "late")
}
