// Issue 6, operations: the metrics endpoint scraped after known calls, and
// the host manifests run as a host would.

package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// ---------------------------------------------------------------------------
// Metrics.

// shFreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago (all held open together, so they differ).
func shFreePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// shStartListening starts the daemon with flags(ports) and waits until
// /healthz on ports[0] answers and the other ports accept; a port taken in between (the daemon exits 1 with
// "address already in use") is retried with another one.
func shStartListening(t *testing.T, env []string, nports int, flags func(ports []int) []string) (*harness.Daemon, []int) {
	t.Helper()
	for attempt := 0; attempt < 5; attempt++ {
		ports := shFreePorts(t, nports)
		s := harness.Start(t, harness.Options{Args: flags(ports), Env: env})
		healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[0])
		var up bool
		proctest.WaitUntil(t, harness.Deadline(t), "/healthz or the daemon's exit", func() (bool, string) {
			select {
			case <-s.Done:
				return true, ""
			default:
			}
			// Every port accepts connections (a bare dial: no request, so
			// no access-log line), and /healthz answers.
			for _, p := range ports[1:] {
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p))
				if err != nil {
					return false, err.Error()
				}
				c.Close()
			}
			resp, err := http.Get(healthz)
			if err != nil {
				return false, err.Error()
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "ok\n" {
				t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
			}
			up = true
			return true, ""
		})
		if up {
			return s, ports
		}
		// The daemon exited: s.done is closed, so its stderr is complete.
		if !strings.Contains(s.Stderr.String(), "address already in use") {
			t.Fatalf("daemon exited before serving: %v\n%s", s.WaitErr, s.Stderr.String())
		}
	}
	t.Fatal("no free port after 5 attempts")
	return nil, nil
}

// Known calls, then /metrics compared exactly: 3 ok, 2 isError (plus one
// isError result a tool wrote with mcp_result), 2 rejected by validation, 1
// cancelled, 1 timed out (x-mcp-bashd timeout) by a tool that ignores
// SIGTERM and is killed after the grace; an unknown tool adds no series.
func TestMetricsCounts(t *testing.T) {
	const script = `
tool_ok() { echo fine; }
tool_bad() { echo nope >&2; return 1; }
tool_verdict() { mcp_result '{"isError":true,"content":[{"type":"text","text":"refused"}]}'; }
tool_nap() { echo "$$" >"$SH_DIR/nap.ready"; sleep 1000; }
tool_stubborn() { trap '' TERM; sleep 1000; }
`
	const toolsList = `{"tools":[
 {"name":"ok","inputSchema":{"type":"object","properties":{},"additionalProperties":false}},
 {"name":"bad","inputSchema":{"type":"object"}},
 {"name":"verdict","inputSchema":{"type":"object"}},
 {"name":"nap","inputSchema":{"type":"object"}},
 {"name":"stubborn","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"300ms"}}
]}`
	dir := harness.WriteFiles(t, map[string]string{"tools.sh": script, "tools.json": toolsList})
	mark := shMark(t)
	env := []string{"TMPDIR=" + t.TempDir(), "SH_DIR=" + dir, harness.MarkKey + "=" + mark, "MCP_LOG_FILE=" + filepath.Join(dir, "daemon.log")}
	s, ports := shStartListening(t, env, 1, func(p []int) []string {
		return []string{"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", p[0]), "--grace", "300ms", filepath.Join(dir, "tools.sh")}
	})
	port := ports[0]
	s.RoundTrip(harness.InitLine)

	// Before any call: the gauges and counters exist at zero, no call series.
	samples, _, raw := shScrape(t, port)
	for _, k := range []string{"mcp_bashd_tool_calls_in_flight", "mcp_bashd_cancellations_total", "mcp_bashd_timeouts_total", "mcp_bashd_group_kills_total"} {
		if v, ok := samples[k]; !ok || v != 0 {
			t.Errorf("before any call %s = %v (present %v), want 0\n%s", k, v, ok, raw)
		}
	}

	id := 100
	call := func(tool, args string, wantErr bool) string {
		id++
		return shCallText(t, s, id, tool, args, wantErr)
	}
	for range 3 {
		if got := call("ok", `{}`, false); got != "fine" {
			t.Fatalf("ok: %q", got)
		}
	}
	for range 2 {
		call("bad", `{}`, true)
	}
	if got := call("verdict", `{}`, true); got != "refused" {
		t.Fatalf("verdict: %q", got)
	}
	for range 2 {
		if got := call("ok", `{"unexpected":1}`, true); !strings.Contains(got, "Unknown parameter(s): unexpected") {
			t.Fatalf("rejected: %q", got)
		}
	}
	if got := s.RoundTrip(`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}`); !strings.Contains(got, `"code":-32601`) {
		t.Fatalf("unknown tool: %s", got)
	}
	if got := call("stubborn", `{}`, true); !strings.Contains(strings.ToLower(got), "timed out") && !strings.Contains(strings.ToLower(got), "timeout") {
		t.Fatalf("stubborn: %q", got)
	}

	// One call in flight (the gauge says 1), then cancelled.
	s.Send(`{"jsonrpc":"2.0","id":300,"method":"tools/call","params":{"name":"nap","arguments":{}}}`)
	proctest.WaitUntil(t, harness.Deadline(t), "the nap tool to start", func() (bool, string) {
		_, err := os.Stat(filepath.Join(dir, "nap.ready"))
		return err == nil, fmt.Sprint(err)
	})
	if samples, _, raw := shScrape(t, port); samples["mcp_bashd_tool_calls_in_flight"] != 1 {
		t.Errorf("in flight while nap runs = %v, want 1\n%s", samples["mcp_bashd_tool_calls_in_flight"], raw)
	}
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":300}}`)
	proctest.WaitUntil(t, harness.Deadline(t), "the cancelled call to settle (in flight 0)", func() (bool, string) {
		samples, _, raw := shScrape(t, port)
		return samples["mcp_bashd_tool_calls_in_flight"] == 0, raw
	})

	samples, types, raw := shScrape(t, port)
	defer func() {
		if t.Failed() {
			t.Logf("/metrics:\n%s", raw)
		}
	}()
	wantTypes := map[string]string{
		"mcp_bashd_tool_calls_total":           "counter",
		"mcp_bashd_tool_call_duration_seconds": "histogram",
		"mcp_bashd_tool_calls_in_flight":       "gauge",
		"mcp_bashd_cancellations_total":        "counter",
		"mcp_bashd_timeouts_total":             "counter",
		"mcp_bashd_group_kills_total":          "counter",
		"mcp_bashd_orphans_reaped_total":       "counter",
	}
	for name, typ := range wantTypes {
		if types[name] != typ {
			t.Errorf("# TYPE %s is %q, want %q", name, types[name], typ)
		}
	}
	wantCalls := map[string]float64{
		`mcp_bashd_tool_calls_total{outcome="ok",tool="ok"}`:            3,
		`mcp_bashd_tool_calls_total{outcome="rejected",tool="ok"}`:      2,
		`mcp_bashd_tool_calls_total{outcome="error",tool="bad"}`:        2,
		`mcp_bashd_tool_calls_total{outcome="error",tool="verdict"}`:    1,
		`mcp_bashd_tool_calls_total{outcome="cancelled",tool="nap"}`:    1,
		`mcp_bashd_tool_calls_total{outcome="timeout",tool="stubborn"}`: 1,
	}
	var gotCalls []string
	for k := range samples {
		if strings.HasPrefix(k, "mcp_bashd_tool_calls_total{") {
			gotCalls = append(gotCalls, k)
		}
	}
	sort.Strings(gotCalls)
	for _, k := range gotCalls {
		if _, ok := wantCalls[k]; !ok {
			t.Errorf("unexpected series %s %v", k, samples[k])
		}
	}
	for k, v := range wantCalls {
		if got, ok := samples[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// The histogram: every call that ran, by tool; buckets cumulative and
	// ending at the count; the timed-out call lasted at least its timeout.
	runs := map[string]float64{"ok": 3, "bad": 2, "verdict": 1, "nap": 1, "stubborn": 1}
	le := regexp.MustCompile(`^mcp_bashd_tool_call_duration_seconds_bucket\{tool="([^"]+)",le="([^"]+)"\}$`)
	buckets := map[string][][2]float64{}
	for k, v := range samples {
		m := le.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		bound := 1e308
		if m[2] != "+Inf" {
			bound, _ = strconv.ParseFloat(m[2], 64)
		}
		buckets[m[1]] = append(buckets[m[1]], [2]float64{bound, v})
	}
	for tool, n := range runs {
		if got := samples[`mcp_bashd_tool_call_duration_seconds_count{tool="`+tool+`"}`]; got != n {
			t.Errorf("duration count for %s = %v, want %v", tool, got, n)
		}
		bs := buckets[tool]
		sort.Slice(bs, func(i, j int) bool { return bs[i][0] < bs[j][0] })
		if len(bs) == 0 || bs[len(bs)-1][0] != 1e308 || bs[len(bs)-1][1] != n {
			t.Errorf("duration buckets for %s: %v, want +Inf = %v", tool, bs, n)
		}
		for i := 1; i < len(bs); i++ {
			if bs[i][1] < bs[i-1][1] {
				t.Errorf("duration buckets for %s not cumulative: %v", tool, bs)
			}
		}
	}
	for k := range buckets {
		if _, ok := runs[k]; !ok {
			t.Errorf("duration histogram for %s, which never ran", k)
		}
	}
	if sum := samples[`mcp_bashd_tool_call_duration_seconds_sum{tool="stubborn"}`]; sum < 0.3 {
		t.Errorf("stubborn ran %vs, less than its 300ms timeout", sum)
	}
	for k, v := range map[string]float64{
		"mcp_bashd_tool_calls_in_flight": 0,
		"mcp_bashd_cancellations_total":  1,
		"mcp_bashd_timeouts_total":       1,
		"mcp_bashd_group_kills_total":    1, // stubborn ignored SIGTERM
	} {
		if got, ok := samples[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := samples["mcp_bashd_orphans_reaped_total"]; !ok {
		t.Error("mcp_bashd_orphans_reaped_total missing")
	}
	shMetricsDocumented(t, raw)
	// The library's process and Go runtime collectors sit beside ours.
	for _, k := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "go_goroutines", "go_threads"} {
		if _, ok := samples[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}

	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
	}
	shDrained(t, s) // in particular nothing for the cancelled id 300
	harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
	// The metrics listener ends with the daemon.
	if _, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port)); err == nil {
		t.Error("/healthz still answers after the daemon exited")
	}
}

// In HTTP mode (where the issue puts it): calls over Streamable HTTP are
// counted on the separate metrics address, and every HTTP request gets one
// structured access-log line.
func TestMetricsHTTPMode(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"tools.sh": "tool_ok() { echo fine; }\n", "tools.json": harness.ToolsJSON("ok")})
	logFile := filepath.Join(dir, "daemon.log")
	mark := shMark(t)
	env := []string{"TMPDIR=" + t.TempDir(), harness.MarkKey + "=" + mark, "MCP_LOG_FILE=" + logFile}
	s, ports := shStartListening(t, env, 2, func(p []int) []string {
		return []string{"--http", "--http-port", strconv.Itoa(p[1]), "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", p[0]), filepath.Join(dir, "tools.sh")}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[1])
	post := func(body, session string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || session == "" {
		t.Fatalf("initialize over HTTP: %d session %q: %s", resp.StatusCode, session, body)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	for i := 0; i < 2; i++ {
		resp, body = post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok","arguments":{}}}`, 10+i), session)
		if resp.StatusCode != 200 || !strings.Contains(body, `"text":"fine"`) {
			t.Fatalf("tools/call over HTTP: %d %s", resp.StatusCode, body)
		}
	}
	samples, _, raw := shScrape(t, ports[0])
	if got := samples[`mcp_bashd_tool_calls_total{outcome="ok",tool="ok"}`]; got != 2 {
		t.Errorf("ok calls over HTTP = %v, want 2\n%s", got, raw)
	}

	if err := s.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-s.Done
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var access int
	for _, line := range strings.Split(string(b), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "request" {
			continue
		}
		access++
		if rec["path"] != "/mcp" || rec["method"] != "POST" || rec["status"] == nil || rec["duration"] == nil {
			t.Errorf("access log line lacks fields: %s", line)
		}
	}
	if access != 4 {
		t.Errorf("%d access log lines for 4 HTTP requests:\n%s", access, b)
	}
	harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
}

// ---------------------------------------------------------------------------
// Host manifests.

// shManifestServer is one server entry of a host manifest.
type shManifestServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// shManifestServers returns a manifest's servers by name: the generic form
// ({"command":...}) is one server named "".
func shManifestServers(t *testing.T, data []byte) map[string]shManifestServer {
	t.Helper()
	var doc struct {
		shManifestServer
		MCPServers map[string]shManifestServer `json:"mcpServers"`
		Servers    map[string]shManifestServer `json:"servers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("manifest does not parse: %v", err)
	}
	out := map[string]shManifestServer{}
	for k, v := range doc.MCPServers {
		out[k] = v
	}
	for k, v := range doc.Servers {
		out[k] = v
	}
	if doc.Command != "" {
		out[""] = doc.shManifestServer
	}
	if len(out) == 0 {
		t.Fatal("manifest names no server")
	}
	return out
}

// shLookPath finds an executable the way a host's spawn does: a name with a
// slash as is, otherwise the first match in PATH.
func shLookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(name + " not found in PATH")
}

// Every examples/manifests/*.json: substituted as its host does, started as
// its host does (the TypeScript SDK's environment: HOME, LOGNAME, PATH,
// SHELL, TERM, USER, plus the entry's env), then initialize, tools/list and
// one tools/call over its stdio, and a clean exit at EOF.
func TestDeploymentManifests(t *testing.T) {
	root := shRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "examples/manifests/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	realBash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	binDir := filepath.Dir(harness.Binary)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(file)
		for name, srv := range shManifestServers(t, data) {
			t.Run(base+"/"+name, func(t *testing.T) {
				if srv.Type != "" && srv.Type != "stdio" {
					t.Fatalf("type %q, want stdio", srv.Type)
				}
				subst := func(s string) string {
					s = strings.ReplaceAll(s, "/ABS/PATH", root)
					s = strings.ReplaceAll(s, "${CLAUDE_PLUGIN_ROOT}", root)
					s = strings.ReplaceAll(s, "${workspaceFolder}", root)
					if strings.HasPrefix(base, "macos-") {
						// Homebrew's directory: its mcp-bashd is the one
						// under test, its bash this machine's.
						s = strings.ReplaceAll(s, "/opt/homebrew/bin/mcp-bashd", harness.Binary)
						s = strings.ReplaceAll(s, "/opt/homebrew/bin", filepath.Dir(realBash))
					}
					return s
				}
				command := subst(srv.Command)
				var args []string
				for _, a := range srv.Args {
					args = append(args, subst(a))
				}
				for _, s := range append([]string{command}, args...) {
					if strings.Contains(s, "${") || strings.Contains(s, "/ABS/PATH") || strings.Contains(s, "/opt/homebrew") {
						t.Fatalf("placeholder left after substitution: %q", s)
					}
				}
				home, tmp, mark := t.TempDir(), t.TempDir(), shMark(t)
				path := binDir + string(os.PathListSeparator) + os.Getenv("PATH")
				env := []string{
					"HOME=" + home, "LOGNAME=" + os.Getenv("LOGNAME"), "PATH=" + path,
					"SHELL=/bin/bash", "TERM=dumb", "USER=" + os.Getenv("USER"),
					// Not from a host: where the test looks for leftovers.
					"TMPDIR=" + tmp, harness.MarkKey + "=" + mark,
				}
				for k, v := range srv.Env {
					env = append(env, k+"="+subst(v))
				}
				exe, err := shLookPath(command, path)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(exe, args...)
				cmd.Args[0] = command
				cmd.Env = env
				cmd.Dir = home
				s := harness.StartCmd(t, cmd)

				got := s.RoundTrip(harness.InitLine)
				if r := harness.Parse(t, got); r.Result == nil {
					t.Fatalf("initialize: %s", got)
				}
				// Whatever the command was (bash -c '... exec mcp-bashd'), the
				// process answering is the binary under test.
				if exeLink, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", s.Cmd.Process.Pid)); err != nil || exeLink != harness.Binary {
					t.Errorf("the server process runs %q (%v), want %s", exeLink, err, harness.Binary)
				}
				s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				list := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				switch {
				case strings.Contains(list, `"name":"greet"`):
					if got := shCallText(t, s, 2, "greet", `{"name":"Ada"}`, false); got != "Hello, Ada" {
						t.Fatalf("greet: %q", got)
					}
				case strings.Contains(list, `"name":"echo"`):
					if got := shCallText(t, s, 2, "echo", `{"from":"manifest"}`, false); got != `{"from":"manifest"}` {
						t.Fatalf("echo: %q", got)
					}
				default:
					t.Fatalf("tools/list names neither greet nor echo: %s", list)
				}
				if ee := s.CloseAndWait(); ee != nil {
					t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
				}
				if e := s.Stderr.String(); e != "" {
					t.Errorf("stderr: %s", e)
				}
				shDrained(t, s)
				harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
				shEmptyDir(t, tmp)
			})
		}
	}
}

// docs/hosts.md shows the manifests that TestDeploymentManifests runs: every JSON
// block in it is one of examples/manifests/*.json, and every file is shown.
func TestHostsDocShowsTestedManifests(t *testing.T) {
	root := shRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs/hosts.md"))
	if err != nil {
		t.Fatal(err)
	}
	canon := func(b []byte) string {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return "invalid JSON: " + err.Error()
		}
		c, _ := json.Marshal(v)
		return string(c)
	}
	files, _ := filepath.Glob(filepath.Join(root, "examples/manifests/*.json"))
	shown := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		shown[canon(b)] = filepath.Base(f)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	seen := map[string]bool{}
	for _, m := range blocks {
		c := canon(m[1])
		f, ok := shown[c]
		if !ok {
			t.Errorf("docs/hosts.md shows a manifest that is not in examples/manifests:\n%s", m[1])
			continue
		}
		seen[f] = true
	}
	for _, f := range shown {
		if !seen[f] {
			t.Errorf("examples/manifests/%s is not shown in docs/hosts.md", f)
		}
	}
}
