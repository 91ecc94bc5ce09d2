package tests

// Bash 3.2 (macOS's /bin/bash) tested for real: built from the source kept
// beside the repository (scripts/bash32.sh), it runs the example servers,
// the shim's helpers, the scaffold `mcp-bashd new` writes and a server
// written for mcp-server-bash-sdk, both ways it meets mcp-bashd: as the
// bash that sources the shim (the drop-in form) and as --bash for the
// tools (the manifest form). Each run is compared, response by response,
// with the same run under the machine's modern bash. scripts/test.sh also
// runs the contract and drop-in tests with bash 3.2 first on PATH
// (MCP_BASHD_TEST_BASH, harness_test.go).

import (
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"

	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	bash32Once sync.Once
	bash32Bin  string
	bash32Why  string
)

// bash32 is the path of a bash 3.2: MCP_BASHD_TEST_BASH when it is one,
// else what scripts/bash32.sh builds (once, into a cache outside the
// repository). Without the source (a user's clone) the test skips, saying
// so; in CI it fails instead.
func bash32(t *testing.T) string {
	t.Helper()
	bash32Once.Do(func() {
		if b := os.Getenv("MCP_BASHD_TEST_BASH"); b != "" && bashVersion(b) == "3.2" {
			bash32Bin = b
			return
		}
		cmd := exec.Command("bash", harness.RepoPath("scripts/bash32.sh"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			bash32Why = fmt.Sprintf("no bash 3.2 (scripts/bash32.sh: %v: %s)", err, strings.TrimSpace(stderr.String()))
			return
		}
		bash32Bin = strings.TrimSpace(string(out))
	})
	if bash32Bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; CI must run the bash 3.2 tests", bash32Why)
		}
		t.Skipf("%s; the bash 3.2 tests need the bash 3.2 source beside the repository (../shared/tools/bash-3.2)", bash32Why)
	}
	return bash32Bin
}

// bashVersion is MAJOR.MINOR of the bash at path, or "".
func bashVersion(path string) string {
	out, err := exec.Command(path, "--noprofile", "--norc", "-c", `printf '%s.%s' "${BASH_VERSINFO[0]}" "${BASH_VERSINFO[1]}"`).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// modernBash is the first bash on PATH that is 4 or later: the reference
// each bash 3.2 run is compared with.
func modernBash(t *testing.T) string {
	t.Helper()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, "bash")
		if v := bashVersion(p); v != "" && v[0] >= '4' && v[0] <= '9' {
			return p
		}
	}
	t.Fatal("no bash 4 or later on PATH to compare bash 3.2 with")
	return ""
}

// bashFirst is an environment whose PATH starts with a directory holding
// only `bash`, a link to b: the bash that `#!/usr/bin/env bash`, the
// daemon's default --bash and the tools' own `bash` find.
func bashFirst(t *testing.T, b string) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(b, filepath.Join(dir, "bash")); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// copyTree copies src into dst, following symbolic links (the examples'
// mcpserver_core.sh is a link to the shim), so a run writes nothing into
// the repository.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, body, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// b32Form is one way to serve an example: the command line for bash b in
// the example's copy dir.
type b32Form struct {
	name string
	cmd  func(b, dir string) []string
}

// b32DropIn runs the script itself with bash b (the shim sourced by b).
func b32DropIn(script string) b32Form {
	return b32Form{"drop-in", func(b, dir string) []string { return []string{b, filepath.Join(dir, script)} }}
}

// b32Manifest runs mcp-bashd --bash b ARGS (DIR/ replaced).
func b32Manifest(args ...string) b32Form {
	return b32Form{"manifest", func(b, dir string) []string {
		out := []string{harness.Binary, "--bash", b}
		for _, a := range args {
			out = append(out, strings.ReplaceAll(a, "DIR/", dir+"/"))
		}
		return out
	}}
}

// b32Run is one served example: every line the client got, per request,
// normalised, and the daemon's stderr.
type b32Run struct {
	lines  []string
	raw    string
	stderr string
	exit   string
}

// serveExample serves a copy of examples/NAME under bash b in the given
// form and walks it as a client would: initialize, the lists, every tool
// called (arguments from its inputSchema, with a progress token), every
// resource read and every prompt got; requests the server sends are
// answered with fixed results.
func serveExample(t *testing.T, name string, f b32Form, b string, modern bool) b32Run {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "ex")
	copyTree(t, harness.RepoPath("examples/"+name), dir)
	args := f.cmd(b, dir)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	env := append(os.Environ(), "MCP_BASHD="+harness.Binary, "NOTES_DIR="+filepath.Join(root, "notes"), "TMPDIR="+root)
	if !modern {
		env = append(env, bashFirst(t, b)...)
	}
	cmd.Env = env
	s := harness.StartCmd(t, cmd)
	d := &b32Driver{s: s, t: t, root: root, bash: b}
	d.walk()
	ee := s.CloseAndWait()
	r := b32Run{lines: d.out, raw: d.raw.String(), stderr: s.Stderr.String(), exit: "0"}
	if ee != nil {
		r.exit = ee.String()
	}
	return r
}

// b32Driver is the client side of serveExample.
type b32Driver struct {
	s    *harness.Daemon
	t    *testing.T
	root string
	bash string
	next int
	out  []string
	raw  strings.Builder // every line as received
}

var b32BashVersion = regexp.MustCompile(`\b[345]\.[0-9]+\.[0-9]+\([0-9]+\)-[a-z]+\b`)

// norm makes a line comparable across runs: the run's directory and the
// bash version are replaced, the daemon's own request ids dropped.
func (d *b32Driver) norm(line string) string {
	line = strings.ReplaceAll(line, d.root, "ROOT")
	line = b32BashVersion.ReplaceAllString(line, "BASH_VERSION")
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) == nil {
		if _, isReq := m["method"]; isReq {
			delete(m, "id")
			b, _ := json.Marshal(m)
			line = string(b)
		}
	}
	return line
}

// request sends method with params and returns the result, recording
// every line up to the response.
func (d *b32Driver) request(method string, params any) json.RawMessage {
	d.t.Helper()
	return d.exchange(method, params, "")
}

// exchange is request that, with await set, also reads on until a
// notification of that method came (before or after the response). The
// lines of one exchange are recorded sorted: the order in which a call's
// notifications and its response cross the daemon is not bash's to set.
func (d *b32Driver) exchange(method string, params any, await string) json.RawMessage {
	d.t.Helper()
	d.next++
	id := d.next
	p, _ := json.Marshal(params)
	d.s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	var got []string
	var result json.RawMessage
	answered := false
	for !answered || await != "" {
		line := d.s.Recv()
		d.raw.Write(line)
		d.raw.WriteByte('\n')
		got = append(got, d.norm(string(line)))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal(line, &m)
		switch {
		case m.Method != "" && m.ID != nil:
			d.answer(m.ID, m.Method)
		case m.Method != "" && m.Method == await:
			await = ""
		case m.Method == "" && string(m.ID) == fmt.Sprint(id):
			result, answered = m.Result, true
		}
	}
	sort.Strings(got)
	d.out = append(d.out, "> "+method)
	d.out = append(d.out, got...)
	return result
}

// answer replies to a request the server sent.
func (d *b32Driver) answer(id json.RawMessage, method string) {
	result := `{}`
	switch method {
	case "elicitation/create":
		result = `{"action":"accept","content":{"name":"Ada","confirm":true}}`
	case "sampling/createMessage":
		result = `{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}`
	case "roots/list":
		result = `{"roots":[{"uri":"file:///r","name":"r"}]}`
	}
	d.s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result))
}

func (d *b32Driver) walk() {
	d.request("initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]string{"name": "b32", "version": "0"},
		"capabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}})
	d.s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	d.request("logging/setLevel", map[string]string{"level": "debug"})
	var tools struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	json.Unmarshal(d.request("tools/list", map[string]any{}), &tools)
	for _, tl := range tools.Tools {
		d.request("tools/call", map[string]any{"name": tl.Name, "arguments": b32Args(tl.InputSchema), "_meta": map[string]any{"progressToken": tl.Name}})
	}
	var res struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	}
	json.Unmarshal(d.request("resources/list", map[string]any{}), &res)
	for _, r := range res.Resources {
		d.request("resources/read", map[string]string{"uri": r.URI})
	}
	d.request("resources/templates/list", map[string]any{})
	var prompts struct {
		Prompts []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name string `json:"name"`
			} `json:"arguments"`
		} `json:"prompts"`
	}
	json.Unmarshal(d.request("prompts/list", map[string]any{}), &prompts)
	for _, p := range prompts.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "Ada"
			if strings.Contains(strings.ToLower(a.Name), "uri") {
				args[a.Name] = "file:///Ada"
			}
		}
		d.request("prompts/get", map[string]any{"name": p.Name, "arguments": args})
	}
}

// b32Args fills a schema's required properties: strings "Ada" (digits
// for the tutorial's num1/num2), numbers 2, booleans true.
func b32Args(schema map[string]any) map[string]any {
	args := map[string]any{}
	props, _ := schema["properties"].(map[string]any)
	req, _ := schema["required"].([]any)
	for _, r := range req {
		n, _ := r.(string)
		p, _ := props[n].(map[string]any)
		switch p["type"] {
		case "number", "integer":
			args[n] = 2
		case "boolean":
			args[n] = true
		case "object":
			args[n] = map[string]any{}
		default:
			args[n] = "Ada"
			if strings.HasPrefix(n, "num") {
				args[n] = "2"
			}
		}
	}
	return args
}

// b32Broken is what bash says when a construct it does not know is run.
var b32Broken = regexp.MustCompile(`syntax error|bad substitution|command not found|invalid option|not a valid identifier|unbound variable`)

// compareRuns fails where the bash 3.2 run differs from the modern one.
func compareRuns(t *testing.T, old, modern b32Run) {
	t.Helper()
	if m := b32Broken.FindString(old.stderr); m != "" {
		t.Errorf("bash 3.2 run: stderr says %q:\n%s", m, old.stderr)
	}
	if old.exit != modern.exit {
		t.Errorf("exit: bash 3.2 %s, modern bash %s", old.exit, modern.exit)
	}
	n := max(len(old.lines), len(modern.lines))
	for i := 0; i < n; i++ {
		var o, m string
		if i < len(old.lines) {
			o = old.lines[i]
		}
		if i < len(modern.lines) {
			m = modern.lines[i]
		}
		if o != m {
			t.Errorf("line %d differs:\n bash 3.2: %s\n   modern: %s", i, o, m)
		}
		if b32Broken.MatchString(o) {
			t.Errorf("line %d: bash 3.2 broke: %s", i, o)
		}
	}
}

// Every example server answers under bash 3.2 exactly as under a modern
// bash, in each form it is served in, and its tools really ran under 3.2.
func TestBash32ExamplesAnswerAsUnderModernBash(t *testing.T) {
	old := bash32(t)
	modern := modernBash(t)
	cases := []struct {
		example string
		forms   []b32Form
	}{
		{"greeter", []b32Form{b32DropIn("server.sh"), b32Manifest("DIR/server.sh")}},
		{"weather", []b32Form{b32DropIn("weatherserver.sh"), b32Manifest("DIR/weatherserver.sh")}},
		{"tutorial", []b32Form{b32Manifest("DIR/server.sh")}},
		{"notes", []b32Form{b32Manifest("DIR/server.sh")}},
		{"plain", []b32Form{b32Manifest("DIR/tools.sh")}},
		{"conformance", []b32Form{b32Manifest("DIR/server.sh")}},
		{"toolsdir", []b32Form{b32Manifest("--tools-dir", "DIR/tools")}},
	}
	for _, c := range cases {
		for _, f := range c.forms {
			t.Run(c.example+"/"+f.name, func(t *testing.T) {
				o := serveExample(t, c.example, f, old, false)
				m := serveExample(t, c.example, f, modern, true)
				compareRuns(t, o, m)
				if c.example == "plain" && !strings.Contains(o.raw, "bash 3.2.48") {
					t.Errorf("sysinfo did not report bash 3.2: %s", o.raw)
				}
			})
		}
	}
}

// The scaffold `mcp-bashd new` writes passes its own test.sh under bash
// 3.2 (check, then a call), and serves as a drop-in script under it.
func TestBash32ScaffoldWorks(t *testing.T) {
	old := bash32(t)
	dir := filepath.Join(t.TempDir(), "srv")
	if out, err := exec.Command(harness.Binary, "new", dir).CombinedOutput(); err != nil {
		t.Fatalf("mcp-bashd new: %v\n%s", err, out)
	}
	env := append(os.Environ(), bashFirst(t, old)...)
	env[len(env)-1] = env[len(env)-1] + string(os.PathListSeparator) + filepath.Dir(harness.Binary)
	// The scaffold's test.sh runs under bash 3.2 and finds mcp-bashd on PATH.
	cmd := exec.Command(old, filepath.Join(dir, "test.sh"))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "ok\n") {
		t.Fatalf("test.sh under bash 3.2: %v\n%s", err, out)
	}
	cmd = exec.Command(old, filepath.Join(dir, "server.sh"))
	cmd.Env = env
	s := harness.StartCmd(t, cmd)
	s.RoundTrip(harness.InitLine)
	got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Ada"}}}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada!"}],"isError":false}}`; got != want {
		t.Errorf("hello under bash 3.2:\n got %s\nwant %s", got, want)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Errorf("server exit: %v\n%s", ee, s.Stderr.String())
	}
}

// The 2026 SDK's HTTP entry point under bash 3.2: weatherserver.sh
// handle-connection, started by bash 3.2, answers one HTTP request on its
// stdin as under a modern bash.
func TestBash32WeatherOverHTTPConnection(t *testing.T) {
	old := bash32(t)
	dir := filepath.Join(t.TempDir(), "weather")
	copyTree(t, harness.RepoPath("examples/weather"), dir)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"},` + sdMeta + `}}`
	want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":` + string(sdJSONString(sdLondon)) + `}],"resultType":"complete",` + sdWeatherMeta + `}}`
	cmd := exec.Command(old, "./weatherserver.sh", "handle-connection")
	cmd.Dir = dir
	cmd.Env = append(sdEnv("MCP_BASHD="+harness.Binary, "TMPDIR="+t.TempDir(), sdMark(t)), bashFirst(t, old)...)
	var out strings.Builder
	cmd.Stdin, cmd.Stdout = strings.NewReader(dr2Post("127.0.0.1:3000", "tools/call", "get_weather", call)), &out
	dr2Run(t, cmd)()
	resp, got := dr2Response(t, []byte(out.String()))
	if resp.StatusCode != 200 {
		t.Errorf("status %d: %s", resp.StatusCode, got)
	}
	sdWantLine(t, "tools/call under bash 3.2", got, want)
}
