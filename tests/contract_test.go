package tests

// End-to-end contract tests through the real binary for the bash SDK's
// run_mcp_server behaviours (shared/CONTRACT.md items 2–18 and 29–31):
// declaration rules and their exact texts, the params and arguments gates,
// schemas that do not compile, top-level state, result shaping, the
// per-call directory, initialize/config/tools-list handling and ps
// visibility. The before-tool hook is in contract_hook_test.go, the shim's
// helpers in contract_shim_test.go. The assertions mirror the SDK's own
// bats suite where it applies to the daemon.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// ctResp is one decoded response line.
type ctResp struct {
	Raw string
	callResponse
}

func ctParse(t *testing.T, line string) ctResp {
	t.Helper()
	var r ctResp
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, line)
	}
	r.Raw = line
	return r
}

// text returns the single text item of a tools/call result.
func (r ctResp) text(t *testing.T) (string, bool) {
	t.Helper()
	if r.Result == nil || len(r.Result.Content) != 1 {
		t.Fatalf("not a one-item tools/call result: %s", r.Raw)
	}
	return r.Result.Content[0].Text, r.Result.IsError
}

// ctWantText fails unless r is a result with exactly text and isError.
func ctWantText(t *testing.T, r ctResp, isError bool, text string) {
	t.Helper()
	got, gotErr := r.text(t)
	if got != text || gotErr != isError {
		t.Errorf("result mismatch\n got isError=%v text %q\nwant isError=%v text %q\nline: %s", gotErr, got, isError, text, r.Raw)
	}
}

// ctWantError fails unless r is a JSON-RPC error with code and message.
func ctWantError(t *testing.T, r ctResp, code int, msg string) {
	t.Helper()
	if r.Error == nil || r.Result != nil || r.Error.Code != code || r.Error.Message != msg {
		t.Errorf("want error %d %q, got %s", code, msg, r.Raw)
	}
}

// ctCallLine builds a tools/call request; args "" leaves "arguments" out.
func ctCallLine(id int, name, args string) string {
	n, _ := json.Marshal(name)
	if args == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s}}`, id, n)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}`, id, n, args)
}

// ctOpt describes one throwaway server.
type ctOpt struct {
	script     string   // body of server.sh
	tools      string   // tools.json ("" with noTools: no file)
	noTools    bool     // do not write tools.json
	config     string   // config.json ("" : no file)
	flags      []string // daemon flags before the script
	scriptArgs []string // the script's own arguments
	env        []string
	relTMPDIR  bool   // TMPDIR is given relative to the daemon's working directory
	tmpdir     string // TMPDIR relative to the layout's base, instead of "tmp"
	// prepare runs after the layout is made and before the daemon starts;
	// it returns extra environment.
	prepare func(t *testing.T, base string, cred *syscall.Credential) []string
	// unprivileged runs the daemon as nobody when the tests run as root, so
	// that permission bits (mode 000 and 555 directories, an unwritable
	// TMPDIR) mean to the daemon what they mean to a normal user.
	unprivileged bool
}

// ctSrv is a running server with the paths the test looks at.
type ctSrv struct {
	*server
	base  string // the layout's root; the daemon's working directory
	dir   string // holds server.sh, tools.json, config.json
	tmp   string // TMPDIR (absolute)
	marks string // where tools write evidence ($MARKS)
	log   string // MCP_LOG_FILE
	tools string // MCP_TOOLS_LIST_FILE (absolute)
	conf  string // MCP_CONFIG_FILE (absolute)
	mark  string // MCPBASHD_TEST_MARK value
	cred  *syscall.Credential
}

// ctLayout makes the directory tree for a server: private to the test, or
// world-traversable and owned by nobody when the daemon drops privileges.
func ctLayout(t *testing.T, unprivileged bool) (string, *syscall.Credential) {
	t.Helper()
	if !unprivileged || os.Getuid() != 0 {
		return t.TempDir(), nil
	}
	base, err := os.MkdirTemp("", "ct-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctChmodTree(base)
		os.RemoveAll(base)
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return base, &syscall.Credential{Uid: 65534, Gid: 65534}
}

// ctChmodTree makes every directory under root removable again (a test
// that fails may leave mode 000 directories behind).
func ctChmodTree(root string) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// ctMkdir creates a directory owned by the daemon's user.
func ctMkdir(t *testing.T, p string, cred *syscall.Credential) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	ctChown(t, p, cred)
}

func ctChown(t *testing.T, p string, cred *syscall.Credential) {
	t.Helper()
	if cred == nil {
		return
	}
	if err := os.Lchown(p, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

func ctWrite(t *testing.T, p, body string, mode os.FileMode, cred *syscall.Credential) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	ctChown(t, p, cred)
}

// ctStart writes server.sh (+ tools.json, config.json) and starts the
// daemon in manifest mode.
func ctStart(t *testing.T, o ctOpt) *ctSrv {
	t.Helper()
	base, cred := ctLayout(t, o.unprivileged)
	s := &ctSrv{base: base, dir: filepath.Join(base, "srv"), tmp: filepath.Join(base, "tmp"), marks: filepath.Join(base, "marks"), cred: cred}
	for _, d := range []string{s.dir, s.tmp, s.marks} {
		ctMkdir(t, d, cred)
	}
	s.log = filepath.Join(s.marks, "server.log")
	s.tools = filepath.Join(s.dir, "tools.json")
	s.conf = filepath.Join(s.dir, "config.json")
	ctWrite(t, filepath.Join(s.dir, "server.sh"), o.script+"\n", 0o755, cred)
	if !o.noTools {
		ctWrite(t, s.tools, o.tools, 0o644, cred)
	}
	if o.config != "" {
		ctWrite(t, s.conf, o.config, 0o644, cred)
	}
	bin := binary
	if cred != nil {
		bin = filepath.Join(base, "bin", "mcp-bashd")
		ctMkdir(t, filepath.Dir(bin), nil)
		data, err := os.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		ctWrite(t, bin, string(data), 0o755, nil)
	}
	s.mark = fmt.Sprintf("ct-%s-%d", t.Name(), os.Getpid())
	tmpdir := s.tmp
	if o.tmpdir != "" {
		s.tmp = filepath.Join(base, o.tmpdir)
		tmpdir = s.tmp
	}
	if o.relTMPDIR {
		tmpdir, _ = filepath.Rel(base, s.tmp)
	}
	var extra []string
	if o.prepare != nil {
		extra = o.prepare(t, base, cred)
	}
	args := append(append(append([]string{}, o.flags...), filepath.Join(s.dir, "server.sh")), o.scriptArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = base
	cmd.Env = append(os.Environ(),
		"TMPDIR="+tmpdir,
		"MARKS="+s.marks,
		"MCP_LOG_FILE="+s.log,
		"MCP_TOOLS_LIST_FILE="+s.tools,
		"MCP_CONFIG_FILE="+s.conf,
		"MCPBASHD_TEST_MARK="+s.mark,
	)
	cmd.Env = append(append(cmd.Env, o.env...), extra...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	s.server = startPrepared(t, cmd)
	return s
}

// call sends a tools/call and returns the decoded response.
func (s *ctSrv) call(id int, name, args string) ctResp {
	s.t.Helper()
	return ctParse(s.t, s.roundTrip(ctCallLine(id, name, args)))
}

// exists reports whether a marker file was written.
func (s *ctSrv) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(s.marks, name))
	return err == nil
}

func (s *ctSrv) read(name string) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.marks, name))
	if err != nil {
		s.t.Fatalf("marker %s: %v", name, err)
	}
	return string(b)
}

// callRoots lists the mcp-call.* directories left under TMPDIR.
func (s *ctSrv) callRoots() []string {
	m, _ := filepath.Glob(filepath.Join(s.tmp, "mcp-call.*"))
	return m
}

// warnings returns the log records at level warn or above.
func (s *ctSrv) warnings() []string {
	b, _ := os.ReadFile(s.log)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct {
			Level string `json:"level"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && (rec.Level == "warn" || rec.Level == "error" || rec.Level == "dpanic" || rec.Level == "panic" || rec.Level == "fatal") {
			out = append(out, line)
		}
	}
	return out
}

// ---------------------------------------------------------------- 12

// The tools list, not the shell, decides what a tools/call reaches.
func TestCtDeclarationRules(t *testing.T) {
	const fns = `
tool_x() { : > "$MARKS/x.ran"; printf 'x done\n'; }
tool_undeclared() { : > "$MARKS/undeclared.ran"; echo ran; }
tool_foo() { echo foo; }
tool_foo_cancel() { : > "$MARKS/foo_cancel.ran"; }
`
	obj := `{"type":"object"}`
	cases := []struct {
		name   string
		tools  string
		noFile bool
		tool   string
		args   string
		check  func(t *testing.T, s *ctSrv, r ctResp)
	}{
		{name: "declared and implemented runs", tools: `{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{}}}]}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				if r.Raw != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x done"}],"isError":false}}` {
					t.Errorf("got %s", r.Raw)
				}
				if !s.exists("x.ran") {
					t.Error("tool_x did not run")
				}
			}},
		{name: "invalid name", tools: `{"tools":[]}`, tool: "a-b",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				if r.Raw != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid tool name: a-b"}}` {
					t.Errorf("got %s", r.Raw)
				}
			}},
		{name: "invalid name checked before an unreadable list", noFile: true, tool: "1x",
			check: func(t *testing.T, s *ctSrv, r ctResp) { ctWantError(t, r, -32602, "Invalid tool name: 1x") }},
		{name: "name with a newline", tools: `{"tools":[]}`, tool: "x\ny",
			check: func(t *testing.T, s *ctSrv, r ctResp) { ctWantError(t, r, -32602, "Invalid tool name: x\ny") }},
		{name: "undeclared with a function", tools: `{"tools":[{"name":"other","inputSchema":` + obj + `}]}`, tool: "undeclared",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				if r.Raw != `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Tool not found: undeclared"}}` {
					t.Errorf("got %s", r.Raw)
				}
				if s.exists("undeclared.ran") {
					t.Error("an undeclared tool ran")
				}
			}},
		{name: "cancel hook is not a tool", tools: `{"tools":[{"name":"foo","inputSchema":` + obj + `}]}`, tool: "foo_cancel",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantError(t, r, -32601, "Tool not found: foo_cancel")
				if s.exists("foo_cancel.ran") {
					t.Error("the cancel hook ran as a tool")
				}
			}},
		{name: "declared without a function", tools: `{"tools":[{"name":"nofn","inputSchema":` + obj + `}]}`, tool: "nofn",
			check: func(t *testing.T, s *ctSrv, r ctResp) { ctWantError(t, r, -32601, "Tool not found: nofn") }},
		{name: "no inputSchema", tools: `{"tools":[{"name":"x","description":"no schema"}]}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for x: its entry in "+s.tools+" declares no inputSchema.")
				if s.exists("x.ran") {
					t.Error("tool ran without a schema")
				}
			}},
		{name: "null inputSchema", tools: `{"tools":[{"name":"x","inputSchema":null}]}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for x: its entry in "+s.tools+" declares no inputSchema.")
				if s.exists("x.ran") {
					t.Error("tool ran with a null schema")
				}
			}},
		{name: "declared twice", tools: `{"tools":[{"name":"x","inputSchema":{"type":"object"}},{"name":"x","inputSchema":{"type":"object","required":["n"]}}]}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for x: the tool list at "+s.tools+" declares it more than once.")
				if s.exists("x.ran") {
					t.Error("a duplicate ran")
				}
			}},
		{name: "non-object element", tools: `{"tools":[1]}`, tool: "nofn",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for nofn: the tool list at "+s.tools+" does not hold a usable tools list.")
			}},
		{name: "non-object element beside a good entry", tools: `{"tools":[{"name":"x","inputSchema":{"type":"object"}},"junk"]}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for x: the tool list at "+s.tools+" does not hold a usable tools list.")
				if s.exists("x.ran") {
					t.Error("tool ran with an unusable list")
				}
			}},
		{name: "missing list", noFile: true, tool: "nofn",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for nofn: the tool list at "+s.tools+" is missing or does not hold one JSON object.")
			}},
		{name: "unparseable list", tools: `{"tools": [ broken`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for x: the tool list at "+s.tools+" is missing or does not hold one JSON object.")
				if s.exists("x.ran") {
					t.Error("tool ran with an unreadable list")
				}
			}},
		{name: "two-document list", tools: `{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}` + "\n" + `{"tools":[]}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Cannot validate arguments for x: the tool list at "+s.tools+" is missing or does not hold one JSON object.")
			}},
		{name: "object-valued tools map enforces its schema", tools: `{"tools":{"k":{"name":"x","inputSchema":{"type":"object","required":["n"]}}}}`, tool: "x",
			check: func(t *testing.T, s *ctSrv, r ctResp) {
				ctWantText(t, r, true, "Missing required parameter(s): n.")
				if s.exists("x.ran") {
					t.Error("tool ran despite a missing required parameter")
				}
			}},
		{name: "object-valued tools map dispatches", tools: `{"tools":{"k":{"name":"x","inputSchema":{"type":"object","required":["n"]}}}}`, tool: "x", args: `{"n":1}`,
			check: func(t *testing.T, s *ctSrv, r ctResp) { ctWantText(t, r, false, "x done") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ctStart(t, ctOpt{script: fns, tools: c.tools, noTools: c.noFile})
			s.roundTrip(initLine)
			c.check(t, s, s.call(1, c.tool, c.args))
			if got := s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("server did not survive: %s", got)
			}
		})
	}
}

// Only shell functions are tools: an executable tool_x on PATH never runs,
// declared or not, and a declared tool without a function is -32601.
func TestCtExecutableOnPathIsNeverATool(t *testing.T) {
	bin := t.TempDir()
	marker := filepath.Join(bin, "path-tool.ran")
	for _, n := range []string{"tool_x", "tool_y"} {
		if err := os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n: > "+marker+"\necho from-path\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := ctStart(t, ctOpt{
		script: `tool_z() { echo z; }`,
		tools:  `{"tools":[{"name":"x","inputSchema":{"type":"object"}},{"name":"z","inputSchema":{"type":"object"}}]}`,
		env:    []string{"PATH=" + bin + ":" + os.Getenv("PATH")},
	})
	s.roundTrip(initLine)
	ctWantError(t, s.call(1, "x", `{}`), -32601, "Tool not found: x")
	ctWantError(t, s.call(2, "y", `{}`), -32601, "Tool not found: y")
	ctWantText(t, s.call(3, "z", `{}`), false, "z")
	if _, err := os.Stat(marker); err == nil {
		t.Error("an executable on PATH was run as a tool")
	}
}

// ---------------------------------------------------------------- 11, 13

// params that are not an object are -32602; null/false count as {} and
// then fail the name check. The server keeps serving.
func TestCtParamsGate(t *testing.T) {
	s := ctStart(t, ctOpt{script: `tool_x() { : > "$MARKS/x.ran"; echo x; }`, tools: toolsJSON("x")})
	s.roundTrip(initLine)
	for i, p := range []string{`5`, `"x"`, `[1,2]`, `true`, `{"name":"x"}]`} {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, p)
		r := ctParse(t, s.roundTrip(line))
		if i == 4 {
			// Not a params case: a malformed line is a parse error.
			ctWantError(t, r, -32700, "Parse error: Invalid JSON")
			continue
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"Invalid params: expected an object"}}`, i+1)
		if r.Raw != want {
			t.Errorf("params %s:\n got %s\nwant %s", p, r.Raw, want)
		}
	}
	for i, p := range []string{`null`, `false`} {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 10+i, p)
		ctWantError(t, ctParse(t, s.roundTrip(line)), -32602, "Invalid tool name: ")
	}
	ctWantError(t, ctParse(t, s.roundTrip(`{"jsonrpc":"2.0","id":12,"method":"tools/call"}`)), -32602, "Invalid tool name: ")
	if s.exists("x.ran") {
		t.Error("a tool ran for a malformed params")
	}
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":20,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":20,"result":{}}` {
		t.Errorf("ping after the params cases: %s", got)
	}
	if strings.Contains(s.stderr.String(), "Cannot index") {
		t.Errorf("jq-style noise on stderr: %s", s.stderr.String())
	}
}

// "arguments" present but not an object is rejected, never coerced; absent
// means {}.
func TestCtArgumentsGate(t *testing.T) {
	s := ctStart(t, ctOpt{script: `tool_x() { : > "$MARKS/x.ran"; printf '%s\n' "$1"; }`, tools: toolsJSON("x")})
	s.roundTrip(initLine)
	for i, c := range []struct{ args, kind string }{
		{`null`, "null"}, {`false`, "boolean"}, {`true`, "boolean"}, {`0`, "number"},
		{`"oops"`, "string"}, {`[1,2]`, "array"}, {`[]`, "array"},
	} {
		ctWantText(t, s.call(i+1, "x", c.args), true, "Invalid arguments: expected a JSON object, got "+c.kind+".")
	}
	if s.exists("x.ran") {
		t.Fatal("the tool ran for non-object arguments")
	}
	ctWantText(t, s.call(20, "x", ""), false, "{}")
	ctWantText(t, s.call(21, "x", `{ "a" : [1, 2] }`), false, `{"a":[1,2]}`)
}

// A schema that does not compile answers that tool's calls with an isError
// naming the problem; the other tools keep working and tools/list still
// lists every entry.
func TestCtSchemaThatDoesNotCompile(t *testing.T) {
	s := ctStart(t, ctOpt{
		script: `tool_good() { echo good; }
tool_bad() { : > "$MARKS/bad.ran"; }
tool_late() { : > "$MARKS/late.ran"; }`,
		tools: `{"tools":[
 {"name":"good","inputSchema":{"type":"object"}},
 {"name":"bad","inputSchema":{"type":"object","properties":{"a":{"type":5}}}},
 {"inputSchema":{"type":"object","properties":{"a":{"minimum":"zero"}}},"name":"late"}
]}`,
	})
	s.roundTrip(initLine)
	// Read raw: the harness would (rightly) flag the unusable schemas this
	// list carries on purpose; the list itself must still be served.
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var list string
	select {
	case l := <-s.lines:
		list = string(l)
	case <-time.After(time.Until(deadline(t))):
		t.Fatal("no tools/list response")
	}
	for _, n := range []string{`"good"`, `"bad"`, `"late"`} {
		if !strings.Contains(list, n) {
			t.Errorf("tools/list lost %s: %s", n, list)
		}
	}
	for i, name := range []string{"bad", "late"} {
		txt, isErr := s.call(10+i, name, `{}`).text(t)
		prefix := "Cannot validate arguments for " + name + ": its inputSchema does not compile: "
		if !isErr || !strings.HasPrefix(txt, prefix) {
			t.Errorf("%s: want isError text starting %q, got isError=%v %q", name, prefix, isErr, txt)
		}
		if n := strings.Count(txt, "Cannot validate arguments for"); n != 1 {
			t.Errorf("%s: the message repeats its prefix %d times: %q", name, n, txt)
		}
		if n := strings.Count(txt, "does not compile"); n != 1 {
			t.Errorf("%s: \"does not compile\" appears %d times: %q", name, n, txt)
		}
		if rest := strings.TrimPrefix(txt, prefix); strings.TrimSpace(strings.TrimSuffix(rest, ".")) == "" {
			t.Errorf("%s: the message does not name the schema error: %q", name, txt)
		}
		if s.exists(name + ".ran") {
			t.Errorf("%s ran with a schema that does not compile", name)
		}
	}
	ctWantText(t, s.call(20, "good", `{}`), false, "good")
}

// ---------------------------------------------------------------- 15, 16

// The script's top level runs once; every call sees its functions,
// variables with their attributes, shell options and EXIT-free state;
// errexit is off; stdin is /dev/null; $0 is the script.
func TestCtTopLevelState(t *testing.T) {
	script := `set -euo pipefail
shopt -s extglob nullglob
declare -a ARR=(one "two words" three)
declare -A MAP=([k1]=v1 ["k 2"]="v 2")
declare -r RO=readonly-value
declare -i NUM=40
NUM+=2
export EXP=exported
PLAIN="plain $((6*7))"
TOP0=$0
TOP_ARGS=("$@")
LOADS=$(( $(cat "$MARKS/loads" 2>/dev/null || echo 0) + 1 ))
echo "$LOADS" > "$MARKS/loads"
top_fn() { printf 'top fn %s\n' "$1"; }
tool_state() {
  printf 'arr=%s|%s\n' "${ARR[1]}" "${#ARR[@]}"
  printf 'map=%s|%s|%s\n' "${MAP[k1]}" "${MAP[k 2]}" "${#MAP[@]}"
  printf 'ro=%s\n' "$RO"
  ( RO=changed ) 2>/dev/null && echo ro-writable || echo ro-readonly
  printf 'num=%s\n' "$NUM"
  NUM="1+1"; printf 'num-int=%s\n' "$NUM"
  printf 'plain=%s\n' "$PLAIN"
  printf 'child=%s\n' "$(bash -c 'printf %s "${EXP-unset}"')"
  top_fn arg
  [[ -o errexit ]] && echo errexit-on || echo errexit-off
  [[ -o nounset ]] && echo nounset-on || echo nounset-off
  [[ -o pipefail ]] && echo pipefail-on || echo pipefail-off
  shopt -p extglob nullglob
  false
  echo survived-false
  printf 'stdin=%s\n' "$(readlink /proc/self/fd/0)"
  read -r line; printf 'read=%s\n' "$?"
  printf 'zero=%s\n' "$0"
  printf 'top0=%s\n' "$TOP0"
  printf 'args='; printf '%s|' "${TOP_ARGS[@]}"; echo
}`
	s := ctStart(t, ctOpt{script: script, tools: toolsJSON("state"), scriptArgs: []string{"a b", "", "--ct-marker"}})
	s.roundTrip(initLine)
	scriptPath := filepath.Join(s.dir, "server.sh")
	want := strings.Join([]string{
		"arr=two words|3",
		"map=v1|v 2|2",
		"ro=readonly-value",
		"ro-readonly",
		"num=42",
		"num-int=2",
		"plain=plain 42",
		"child=exported",
		"top fn arg",
		"errexit-off",
		"nounset-on",
		"pipefail-on",
		"shopt -s extglob",
		"shopt -s nullglob",
		"survived-false",
		"stdin=/dev/null",
		"read=1",
		"zero=" + scriptPath,
		"top0=" + scriptPath,
		"args=a b||--ct-marker|",
	}, "\n")
	for i := 1; i <= 2; i++ {
		got, isErr := s.call(i, "state", `{}`).text(t)
		if isErr || got != want {
			t.Errorf("call %d:\n got (isError=%v)\n%s\nwant\n%s", i, isErr, got, want)
		}
	}
	if got := strings.TrimSpace(s.read("loads")); got != "1" {
		t.Errorf("the top level ran %s times, want once", got)
	}
}

// A script in POSIX mode still serves, and its tools run in POSIX mode.
func TestCtPosixModeScript(t *testing.T) {
	s := ctStart(t, ctOpt{script: `set -o posix
tool_x() { [ -o posix ] && echo posix-on || echo posix-off; false; echo after-false; }`, tools: toolsJSON("x")})
	s.roundTrip(initLine)
	ctWantText(t, s.call(1, "x", `{}`), false, "posix-on\nafter-false")
}

// Result shaping: stdout+stderr in one text, every trailing newline
// stripped, a non-zero status or a signal is "Error executing <name>: ",
// the tool's EXIT trap output joins the text.
func TestCtResultShaping(t *testing.T) {
	s := ctStart(t, ctOpt{
		script: `tool_merge() { echo out; echo err >&2; echo out2; printf '\n\n\n'; }
tool_inner_blank() { printf 'a\n\n\nb\n\n'; }
tool_fail() { echo "bad thing" >&2; printf '\n'; return 3; }
tool_fail_silent() { return 1; }
tool_killed() { kill -9 "$BASHPID"; }
tool_termed() { kill -TERM "$BASHPID"; }
tool_trap() { trap 'printf "trap output\n"' EXIT; printf 'body output\n'; }
tool_exit_trap_fail() { trap 'echo cleanup' EXIT; echo body; exit 5; }
tool_empty() { :; }
tool_cr() { printf 'x\r\n'; }`,
		tools: toolsJSON("merge", "inner_blank", "fail", "fail_silent", "killed", "termed", "trap", "exit_trap_fail", "empty", "cr"),
	})
	s.roundTrip(initLine)
	if got := s.roundTrip(ctCallLine(1, "merge", `{}`)); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"out\nerr\nout2"}],"isError":false}}` {
		t.Errorf("merge: %s", got)
	}
	ctWantText(t, s.call(2, "inner_blank", `{}`), false, "a\n\n\nb")
	ctWantText(t, s.call(3, "fail", `{}`), true, "Error executing fail: bad thing")
	ctWantText(t, s.call(4, "fail_silent", `{}`), true, "Error executing fail_silent: ")
	ctWantText(t, s.call(5, "killed", `{}`), true, "Error executing killed: ")
	ctWantText(t, s.call(6, "termed", `{}`), true, "Error executing termed: ")
	ctWantText(t, s.call(7, "trap", `{}`), false, "body output\ntrap output")
	ctWantText(t, s.call(8, "exit_trap_fail", `{}`), true, "Error executing exit_trap_fail: body\ncleanup")
	ctWantText(t, s.call(9, "empty", `{}`), false, "")
	ctWantText(t, s.call(10, "cr", `{}`), false, "x\r")
}

// Output past --output-cap is cut and the cut is marked.
func TestCtOutputCap(t *testing.T) {
	s := ctStart(t, ctOpt{
		flags: []string{"--output-cap", "100"},
		script: `tool_big() { local i; for ((i = 0; i < 1000; i++)); do printf a; done; echo; } 
tool_big_fail() { local i; for ((i = 0; i < 1000; i++)); do printf b; done; return 2; }
tool_small() { printf '%0100d\n' 0; }`,
		tools: toolsJSON("big", "big_fail", "small"),
	})
	s.roundTrip(initLine)
	for i, c := range []struct {
		tool, ch, prefix string
		isErr            bool
	}{{"big", "a", "", false}, {"big_fail", "b", "Error executing big_fail: ", true}} {
		txt, isErr := s.call(i+1, c.tool, `{}`).text(t)
		if isErr != c.isErr {
			t.Errorf("%s: isError=%v", c.tool, isErr)
		}
		body := strings.TrimPrefix(txt, c.prefix)
		if !strings.HasPrefix(body, strings.Repeat(c.ch, 100)) || strings.HasPrefix(body, strings.Repeat(c.ch, 101)) {
			t.Errorf("%s: want exactly the first 100 bytes kept, got %q", c.tool, txt)
		}
		marker := body[100:]
		if !strings.Contains(marker, "truncated") || !strings.Contains(marker, "more bytes") {
			t.Errorf("%s: no truncation marker after the kept output: %q", c.tool, marker)
		}
	}
	// Exactly at the cap (100 digits + a newline = 101 bytes: one over).
	txt, _ := s.call(3, "small", `{}`).text(t)
	if !strings.HasPrefix(txt, strings.Repeat("0", 100)) {
		t.Errorf("small: %q", txt)
	}
}

// ---------------------------------------------------------------- 18

// MCP_CALL_TMPDIR: <TMPDIR>/mcp-call.XXXXXX/tmp, both mode 0700, empty,
// distinct per call, the same for hook, tool and children, removed after.
func TestCtCallTmpdirShape(t *testing.T) {
	s := ctStart(t, ctOpt{
		script: `mcp_before_tool_call() { printf '%s' "$MCP_CALL_TMPDIR" > "$MARKS/hook.$2"; }
tool_probe() {
  printf '%s\n' "$MCP_CALL_TMPDIR"
  stat -c '%a' "$MCP_CALL_TMPDIR" "${MCP_CALL_TMPDIR%/*}"
  [ -z "$(ls -A "$MCP_CALL_TMPDIR")" ] && echo empty || echo not-empty
  : > "$MCP_CALL_TMPDIR/probe" && echo writable
  bash -c 'printf "child %s\n" "$MCP_CALL_TMPDIR"'
  printf '%s\n' "$MCP_CALL_TMPDIR" > "$MARKS/tool.$1"
}`,
		tools: toolsJSON("probe"),
	})
	s.roundTrip(initLine)
	var dirs []string
	for i := 1; i <= 2; i++ {
		txt, isErr := s.call(i, "probe", fmt.Sprintf(`{"n":%d}`, i)).text(t)
		lines := strings.Split(txt, "\n")
		if isErr || len(lines) != 6 {
			t.Fatalf("call %d: isError=%v\n%s", i, isErr, txt)
		}
		dir := lines[0]
		dirs = append(dirs, dir)
		if filepath.Base(dir) != "tmp" || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "mcp-call.") || filepath.Dir(filepath.Dir(dir)) != s.tmp {
			t.Errorf("call %d: MCP_CALL_TMPDIR %q is not %s/mcp-call.*/tmp", i, dir, s.tmp)
		}
		if lines[1] != "700" || lines[2] != "700" {
			t.Errorf("call %d: modes tmp=%s root=%s, want 700 and 700", i, lines[1], lines[2])
		}
		if lines[3] != "empty" || lines[4] != "writable" {
			t.Errorf("call %d: %q %q", i, lines[3], lines[4])
		}
		if lines[5] != "child "+dir {
			t.Errorf("call %d: a child saw %q, the tool %q", i, lines[5], dir)
		}
		if hook := s.read(fmt.Sprintf(`hook.{"n":%d}`, i)); hook != dir {
			t.Errorf("call %d: the hook saw %q, the tool %q", i, hook, dir)
		}
		if _, err := os.Lstat(filepath.Dir(dir)); err == nil {
			t.Errorf("call %d: call root %s still exists after the response", i, filepath.Dir(dir))
		}
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two calls shared %s", dirs[0])
	}
	if left := s.callRoots(); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
}

// A relative TMPDIR still gives an absolute MCP_CALL_TMPDIR, also when
// the hook changes directory, and the root is removed.
func TestCtCallTmpdirRelativeTMPDIR(t *testing.T) {
	s := ctStart(t, ctOpt{
		relTMPDIR: true,
		script: `mcp_before_tool_call() { cd / || return 1; }
tool_x() {
  if [[ $MCP_CALL_TMPDIR == /* && -d $MCP_CALL_TMPDIR ]]; then printf 'absolute and present %s\n' "$MCP_CALL_TMPDIR"; else printf 'not usable: %s\n' "$MCP_CALL_TMPDIR"; fi
}`,
		tools: toolsJSON("x"),
	})
	s.roundTrip(initLine)
	txt, isErr := s.call(1, "x", `{}`).text(t)
	dir := strings.TrimPrefix(txt, "absolute and present ")
	if isErr || dir == txt {
		t.Fatalf("isError=%v %q", isErr, txt)
	}
	if filepath.Dir(filepath.Dir(dir)) != s.tmp {
		t.Errorf("MCP_CALL_TMPDIR %q is not under %s", dir, s.tmp)
	}
	if left := s.callRoots(); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
}

// The call root is removed however the tool left it — a mode 000 nested
// directory, a read-only directory with a file, MCP_CALL_TMPDIR itself at
// mode 000 — without following a symlink out of it and without a warning.
// As root the daemon runs as nobody, so the modes bind as for a user.
func TestCtCallTmpdirRemoval(t *testing.T) {
	var outside string
	s := ctStart(t, ctOpt{
		unprivileged: true,
		prepare: func(t *testing.T, base string, cred *syscall.Credential) []string {
			outside = filepath.Join(base, "outside")
			ctMkdir(t, outside, cred)
			ctWrite(t, filepath.Join(outside, "keep"), "keep me\n", 0o644, cred)
			if err := os.Chmod(outside, 0o555); err != nil {
				t.Fatal(err)
			}
			return []string{"OUTSIDE=" + outside}
		},
		script: `tool_nested() {
  mkdir -p "$MCP_CALL_TMPDIR/nested" && printf 'scratch\n' > "$MCP_CALL_TMPDIR/nested/file"
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_fail() { printf 'scratch\n' > "$MCP_CALL_TMPDIR/file"; printf '%s\n' "$MCP_CALL_TMPDIR"; return 4; }
tool_ro() {
  mkdir "$MCP_CALL_TMPDIR/ro" && printf 'scratch\n' > "$MCP_CALL_TMPDIR/ro/file" && chmod 555 "$MCP_CALL_TMPDIR/ro" || return 9
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_locked() {
  mkdir -p "$MCP_CALL_TMPDIR/locked/inner" && printf 'scratch\n' > "$MCP_CALL_TMPDIR/locked/inner/file" || return 9
  chmod 000 "$MCP_CALL_TMPDIR/locked/inner" && chmod 000 "$MCP_CALL_TMPDIR/locked" || return 9
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_self_locked() { printf 'scratch\n' > "$MCP_CALL_TMPDIR/file" && chmod 000 "$MCP_CALL_TMPDIR" || return 9; printf '%s\n' "$MCP_CALL_TMPDIR"; }
tool_links() {
  ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR/link" && ln -s "$OUTSIDE/keep" "$MCP_CALL_TMPDIR/filelink" || return 9
  mkdir "$MCP_CALL_TMPDIR/ro" && ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR/ro/link" && chmod 555 "$MCP_CALL_TMPDIR/ro" || return 9
  mkdir "$MCP_CALL_TMPDIR/zero" && ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR/zero/link" && chmod 000 "$MCP_CALL_TMPDIR/zero" || return 9
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_swap() { rm -rf "$MCP_CALL_TMPDIR" && ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR" || return 9; printf '%s\n' "$MCP_CALL_TMPDIR"; }
tool_uid() { id -u; }`,
		tools: toolsJSON("nested", "fail", "ro", "locked", "self_locked", "links", "swap", "uid"),
	})
	s.roundTrip(initLine)
	if uid, _ := s.call(100, "uid", `{}`).text(t); uid == "0" {
		t.Fatal("tools run as root: the modes would not bind")
	}
	for i, tool := range []string{"nested", "fail", "ro", "locked", "self_locked", "links", "swap"} {
		txt, isErr := s.call(i+1, tool, `{}`).text(t)
		dir := txt
		if tool == "fail" {
			dir = strings.TrimPrefix(txt, "Error executing fail: ")
			if !isErr || dir == txt {
				t.Errorf("fail: want isError with the directory, got isError=%v %q", isErr, txt)
			}
		} else if isErr {
			t.Errorf("%s: isError %q", tool, txt)
			continue
		}
		if filepath.Dir(filepath.Dir(dir)) != s.tmp {
			t.Errorf("%s: %q is not a call directory under %s", tool, dir, s.tmp)
			continue
		}
		if _, err := os.Lstat(filepath.Dir(dir)); err == nil {
			t.Errorf("%s: call root %s left behind", tool, filepath.Dir(dir))
		}
		fi, err := os.Stat(outside)
		if err != nil || fi.Mode().Perm() != 0o555 {
			t.Fatalf("%s: the directory outside the call was changed: %v %v", tool, fi.Mode(), err)
		}
		if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "keep me\n" {
			t.Fatalf("%s: the file outside the call was changed: %q %v", tool, b, err)
		}
	}
	if left := s.callRoots(); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
	if w := s.warnings(); len(w) != 0 {
		t.Errorf("removal logged warnings:\n%s", strings.Join(w, "\n"))
	}
}

// A call whose directory cannot be created answers isError with the SDK's
// text, runs nothing, leaves nothing, and the server keeps serving: TMPDIR
// replaced by a regular file, and TMPDIR made unwritable, mid-run.
func TestCtCallTmpdirCreationFailure(t *testing.T) {
	const script = `mcp_before_tool_call() { : > "$MARKS/hook.ran"; }
tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }`
	t.Run("TMPDIR is a regular file", func(t *testing.T) {
		s := ctStart(t, ctOpt{script: script, tools: toolsJSON("x")})
		s.roundTrip(initLine)
		ctWantText(t, s.call(1, "x", `{}`), false, "tool output")
		os.Remove(filepath.Join(s.marks, "hook.ran"))
		os.Remove(filepath.Join(s.marks, "tool.ran"))
		if err := os.Rename(s.tmp, s.tmp+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.tmp, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		before := ctListDir(t, s.base)
		if got := s.roundTrip(ctCallLine(2, "x", `{}`)); got != `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Cannot run x: its call directory could not be created."}],"isError":true}}` {
			t.Errorf("got %s", got)
		}
		if s.exists("hook.ran") || s.exists("tool.ran") {
			t.Error("the hook or the tool ran without a call directory")
		}
		if after := ctListDir(t, s.base); after != before {
			t.Errorf("files appeared beside TMPDIR:\nbefore %s\nafter  %s", before, after)
		}
		if m, _ := filepath.Glob(filepath.Join(s.tmp+".moved", "mcp-call.*")); len(m) != 0 {
			t.Errorf("call roots left: %v", m)
		}
		if got := s.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
			t.Errorf("ping: %s", got)
		}
	})
	t.Run("TMPDIR not writable", func(t *testing.T) {
		s := ctStart(t, ctOpt{script: script, tools: toolsJSON("x"), unprivileged: true})
		s.roundTrip(initLine)
		if os.Getuid() == 0 && s.cred == nil {
			t.Fatal("running as root without dropping privileges")
		}
		if err := os.Chmod(s.tmp, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(s.tmp, 0o755)
		ctWantText(t, s.call(1, "x", `{}`), true, "Cannot run x: its call directory could not be created.")
		if s.exists("hook.ran") || s.exists("tool.ran") {
			t.Error("the hook or the tool ran without a call directory")
		}
		os.Chmod(s.tmp, 0o755)
		ctWantText(t, s.call(2, "x", `{}`), false, "tool output")
	})
}

// TMPDIR that does not exist when the daemon starts: the SDK's server
// starts and answers each call with the creation-failure result; the
// server itself must not refuse to serve.
func TestCtCallTmpdirMissingAtStart(t *testing.T) {
	s := ctStart(t, ctOpt{
		tmpdir: "no-such-dir",
		script: `tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }`,
		tools:  toolsJSON("x"),
	})
	s.send(initLine)
	select {
	case line, ok := <-s.lines:
		if !ok {
			<-s.done
			t.Fatalf("the daemon exited (%v) instead of serving with TMPDIR missing; stderr:\n%s", s.waitErr, s.stderr.String())
		}
		s.check(line)
	case <-time.After(time.Until(deadline(t))):
		t.Fatal("no initialize response")
	}
	ctWantText(t, s.call(1, "x", `{}`), true, "Cannot run x: its call directory could not be created.")
	if s.exists("tool.ran") {
		t.Error("the tool ran")
	}
}

func ctListDir(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// ---------------------------------------------------------------- 8, 9

func TestCtInitializeDefaults(t *testing.T) {
	s := ctStart(t, ctOpt{script: `:`, tools: `{"tools":[]}`})
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); got != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}` {
		t.Errorf("no params version, no config: %s", got)
	}
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"initialize"}`); got != `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2024-11-05","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}` {
		t.Errorf("no params at all: %s", got)
	}
	for i, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`, 10+i, v)
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":%q,"serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}`, 10+i, v)
		if got := s.roundTrip(line); got != want {
			t.Errorf("version %s:\n got %s\nwant %s", v, got, want)
		}
	}
	line := `{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`
	if got := s.roundTrip(line); got != `{"jsonrpc":"2.0","id":20,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}` {
		t.Errorf("unknown version: %s", got)
	}
}

func TestCtInitializeWithConfig(t *testing.T) {
	s := ctStart(t, ctOpt{script: `:`, tools: `{"tools":[]}`,
		config: "{\n  \"protocolVersion\": \"2025-06-18\",\n  \"serverInfo\": {\"name\": \"probe\", \"version\": \"9.9.9\"},\n  \"instructions\": \"Be kind.\"\n}\n"})
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); got != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"probe","version":"9.9.9"},"capabilities":{"tools":{}},"instructions":"Be kind."}}` {
		t.Errorf("absent version: %s", got)
	}
	line := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`
	if got := ctParse(t, s.roundTrip(line)); !strings.Contains(got.Raw, `"protocolVersion":"2025-03-26"`) {
		t.Errorf("a supported client version is echoed: %s", got.Raw)
	}
	line = `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"ct","version":"0"}}}`
	if got := ctParse(t, s.roundTrip(line)); !strings.Contains(got.Raw, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("an unknown client version gets the configured one: %s", got.Raw)
	}
}

// A config that is not one JSON object is -32603 naming the path; the
// server keeps serving everything else.
func TestCtInitializeInvalidConfig(t *testing.T) {
	for _, c := range []struct{ name, body string }{
		{"malformed", `{ not json`}, {"empty", "\n"}, {"two documents", `{"protocolVersion":"1.0"}` + "\n" + `{"protocolVersion":"2.0"}`},
		{"array", `[1]`}, {"null", `null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ctStart(t, ctOpt{script: `tool_x() { echo x; }`, tools: toolsJSON("x"), config: c.body})
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Cannot read server configuration: ` + s.conf + `"}}`
			if got := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			if got := s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("ping: %s", got)
			}
			ctWantText(t, s.call(3, "x", `{}`), false, "x")
		})
	}
}

// A tools list that is not one JSON object is -32603 on tools/list.
func TestCtToolsListInvalid(t *testing.T) {
	for _, c := range []struct {
		name, body string
		missing    bool
	}{{"missing", "", true}, {"malformed", `{"tools": [ broken`, false}, {"empty", "", false},
		{"two documents", `{"tools":[]}` + "\n" + `{"tools":[]}`, false}, {"array", `[]`, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := ctStart(t, ctOpt{script: `:`, tools: c.body, noTools: c.missing})
			s.roundTrip(initLine)
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Cannot read tools list: ` + s.tools + `"}}`
			if got := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			if got := s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("ping: %s", got)
			}
		})
	}
}

// tools/list is .tools verbatim (compact, key order kept) or [] without it.
func TestCtToolsListVerbatim(t *testing.T) {
	s := ctStart(t, ctOpt{script: `:`, tools: "{\n \"tools\": [ {\"name\": \"greet\", \"description\": \"Say <hello> & bye.\", \"inputSchema\": {\"type\": \"object\", \"properties\": {\"z\": {\"type\": \"string\"}, \"a\": {\"type\": \"integer\"}}}} ]\n}\n"})
	s.roundTrip(initLine)
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"greet","description":"Say <hello> & bye.","inputSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}}}}]}}` {
		t.Errorf("got %s", got)
	}
	s2 := ctStart(t, ctOpt{script: `:`, tools: `{"other":1}`})
	s2.roundTrip(initLine)
	if got := s2.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` {
		t.Errorf("no tools key: %s", got)
	}
}

// An edited tools.json is seen by the next tools/list and tools/call,
// without a restart.
func TestCtToolsListEditedWithoutRestart(t *testing.T) {
	start := func(t *testing.T) (*ctSrv, func(id int) string) {
		s := ctStart(t, ctOpt{script: `tool_aa() { echo aa; }
tool_bb() { echo bb; }
tool_cc() { echo cc; }`, tools: toolsJSON("aa")})
		s.roundTrip(initLine)
		list := func(id int) string {
			return s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		}
		if got := list(1); !strings.Contains(got, `"name":"aa"`) {
			t.Fatalf("first list: %s", got)
		}
		return s, list
	}
	t.Run("in place, new size", func(t *testing.T) {
		s, list := start(t)
		if err := os.WriteFile(s.tools, []byte(toolsJSON("aa", "bb")), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := list(2); !strings.Contains(got, `"name":"bb"`) {
			t.Errorf("edit not seen by tools/list: %s", got)
		}
		ctWantText(t, s.call(3, "bb", `{}`), false, "bb")
	})
	t.Run("replaced by rename", func(t *testing.T) {
		s, list := start(t)
		tmp := s.tools + ".new"
		if err := os.WriteFile(tmp, []byte(toolsJSON("cc")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, s.tools); err != nil {
			t.Fatal(err)
		}
		if got := list(2); !strings.Contains(got, `"name":"cc"`) || strings.Contains(got, `"name":"aa"`) {
			t.Errorf("edit not seen by tools/list: %s", got)
		}
		ctWantError(t, s.call(3, "aa", `{}`), -32601, "Tool not found: aa")
	})
	// Same size, same inode, and the same mtime as the version the daemon
	// read: what an in-place save within one timestamp tick leaves on a
	// filesystem or kernel with coarse timestamps (jiffy-granular ext4 on
	// kernels without multigrain timestamps, 1-2 s on others). The mtime is
	// set back explicitly so the case does not depend on this machine's
	// clock granularity.
	t.Run("in place, same size, same mtime", func(t *testing.T) {
		s, list := start(t)
		fi, err := os.Stat(s.tools)
		if err != nil {
			t.Fatal(err)
		}
		next := toolsJSON("cc")
		if len(next) != int(fi.Size()) {
			t.Fatalf("test bug: sizes differ")
		}
		if err := os.WriteFile(s.tools, []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(s.tools, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if got := list(2); !strings.Contains(got, `"name":"cc"`) || strings.Contains(got, `"name":"aa"`) {
			t.Errorf("same-size in-place edit not seen by tools/list: %s", got)
		}
		if r := s.call(3, "cc", `{}`); r.Result == nil {
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
func TestCtOtherMethods(t *testing.T) {
	s := ctStart(t, ctOpt{script: `tool_wait() { : > "$MARKS/started"; while [ ! -e "$MARKS/gate" ]; do sleep 0.01; done; echo released; }`, tools: toolsJSON("wait")})
	s.roundTrip(initLine)
	s.send(ctCallLine(1, "wait", `{}`))
	proctest.WaitUntil(t, deadline(t), "the tool started", func() (bool, string) { return s.exists("started"), "" })
	if r := ctParse(t, s.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}`)); r.Error == nil || r.Error.Code != -32602 || string(r.ID) != "2" {
		t.Errorf("server/discover without _meta: %s", r.Raw)
	}
	for i, c := range []struct{ method, result string }{
		{"resources/list", `{"resources":[]}`},
		{"resources/templates/list", `{"resourceTemplates":[]}`},
		{"prompts/list", `{"prompts":[]}`},
	} {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, 10+i, c.result)
		if got := s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, 10+i, c.method)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.method, got, want)
		}
	}
	os.WriteFile(filepath.Join(s.marks, "gate"), nil, 0o644)
	ctWantText(t, ctParse(t, string(s.recv())), false, "released")
}

// ---------------------------------------------------------------- 31

// While a call runs, its bash processes show the server script, the
// script's own arguments (a marker) and the tool name in their command
// line, as the SDK's subshells did. Manifest and drop-in forms.
func TestCtProcessesShowScriptAndArguments(t *testing.T) {
	const tool = `tool_ps_probe_tool() {
  printf '%s\n' "$BASHPID" > "$MARKS/tool.pid.tmp"
  ( while [ ! -e "$MARKS/gate" ]; do sleep 0.01; done ) &
  local sub=$!
  printf '%s\n' "$sub" > "$MARKS/sub.pid"
  mv "$MARKS/tool.pid.tmp" "$MARKS/tool.pid"
  wait "$sub"
  echo released
}`
	instance := fmt.Sprintf("--ct-instance=%d-%d", os.Getpid(), time.Now().UnixNano())
	check := func(t *testing.T, s *server, marks, script string) {
		s.roundTrip(initLine)
		s.send(ctCallLine(1, "ps_probe_tool", `{}`))
		pidFile := filepath.Join(marks, "tool.pid")
		proctest.WaitUntil(t, deadline(t), "the tool started", func() (bool, string) {
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
		if !checked[toolPID] || !checked[subPID] || len(checked) < 3 {
			t.Errorf("expected the tool shell %d, its subshell %d and the sentinel among the call's bash processes, checked %v", toolPID, subPID, checked)
		}
		os.WriteFile(filepath.Join(marks, "gate"), nil, 0o644)
		ctWantText(t, ctParse(t, string(s.recv())), false, "released")
	}
	t.Run("manifest", func(t *testing.T) {
		s := ctStart(t, ctOpt{script: tool, tools: toolsJSON("ps_probe_tool"), scriptArgs: []string{instance}})
		check(t, s.server, s.marks, filepath.Join(s.dir, "server.sh"))
	})
	t.Run("drop-in", func(t *testing.T) {
		dir := t.TempDir()
		script := filepath.Join(dir, "server.sh")
		ctWrite(t, filepath.Join(dir, "tools.json"), toolsJSON("ps_probe_tool"), 0o644, nil)
		ctWrite(t, script, "#!/usr/bin/env bash\nexport MCP_TOOLS_LIST_FILE=\""+filepath.Join(dir, "tools.json")+"\"\nsource \"$SHIM\"\n"+tool+"\nrun_mcp_server\n", 0o755, nil)
		s := startExec(t, script, []string{instance}, []string{"MCP_BASHD=" + binary, "SHIM=" + repoPath("scripts/mcpserver_core.sh"), "MARKS=" + dir, "TMPDIR=" + t.TempDir()})
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
func TestCtToolWaitSeesOnlyItsOwnJobs(t *testing.T) {
	s := ctStart(t, ctOpt{
		script: `tool_jobs() { printf 'jobs=%s\n' "$(jobs -p | wc -l)"; }
tool_par() { local i; for i in 1 2 3; do (sleep 0.05; echo "job $i" > "$MARKS/job.$i") & done; wait; echo waited; }`,
		tools: `{"tools":[{"name":"jobs","inputSchema":{"type":"object"}},{"name":"par","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"5s"}}]}`,
	})
	s.roundTrip(initLine)
	ctWantText(t, s.call(1, "jobs", `{}`), false, "jobs=0")
	ctWantText(t, s.call(2, "par", `{}`), false, "waited")
	for i := 1; i <= 3; i++ {
		if !s.exists("job." + strconv.Itoa(i)) {
			t.Errorf("job %d did not finish before wait returned", i)
		}
	}
}

// ---------------------------------------------------------------- 2–7

// The request gates through the binary, in the SDK's order and with its
// texts; every rejected line leaves the server serving, and nothing is
// ever answered for a notification.
func TestCtRequestGates(t *testing.T) {
	s := ctStart(t, ctOpt{script: `tool_x() { : > "$MARKS/x.ran"; echo x; }`, tools: toolsJSON("x")})
	s.roundTrip(initLine)
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
		if got := s.roundTrip(c.line); got != c.want {
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
		s.send(n)
	}
	if got := s.roundTrip(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
		t.Errorf("a notification or empty line was answered: %s", got)
	}
	if s.exists("x.ran") {
		t.Error("a tools/call from a rejected line or a notification ran")
	}
}

// An entry whose "inputSchema" comes before its "name" is the same tool:
// key order inside a tools.json entry carries no meaning, so every text
// naming the tool names it.
func TestCtSchemaEntryKeyOrder(t *testing.T) {
	s := ctStart(t, ctOpt{
		script: `tool_late() { echo late; }`,
		tools:  `{"tools":[{"inputSchema":{"type":"object","required":["n"]},"description":"d","name":"late"}]}`,
	})
	s.roundTrip(initLine)
	ctWantText(t, s.call(1, "late", `{}`), true, "Missing required parameter(s): n.")
	ctWantText(t, s.call(2, "late", `{"n":1e999999}`), true, "Cannot validate arguments for late: they could not be evaluated against its schema.")
	ctWantText(t, s.call(3, "late", `{"n":1}`), false, "late")
}
