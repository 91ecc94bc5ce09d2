package tests

// Issue 24 item 6: what the server script's top level writes to stderr
// reaches the daemon's stderr, where hosts keep a server's log, as it
// does under the SDK (the script's stderr was the server's): byte for byte
// in the console format, whatever MCP_LOG_STDERR says; one JSON log line
// per line with --log-format json.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

const stderrScript = `echo "starting up: é \"quoted\"" >&2
echo "second line" >&2
tool_hi() { echo hi; }
`

func TestScriptTopLevelStderrPassedThrough(t *testing.T) {
	for _, env := range [][]string{nil, {"MCP_LOG_STDERR=0"}} {
		dir := harness.WriteFiles(t, map[string]string{"server.sh": stderrScript, "tools.json": harness.ToolsJSON("hi")})
		s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, CleanEnv: true, Env: env})
		s.RoundTrip(harness.InitLine)
		s.CloseAndWait()
		if e := s.Stderr.String(); !strings.HasPrefix(e, "starting up: é \"quoted\"\nsecond line\n") {
			t.Errorf("env %v: the script's stderr did not reach the daemon's:\n%q", env, e)
		}
	}
	dir := harness.WriteFiles(t, map[string]string{"server.sh": stderrScript, "tools.json": harness.ToolsJSON("hi")})
	s := harness.Start(t, harness.Options{Args: []string{"--log-format", "json", filepath.Join(dir, "server.sh")}, CleanEnv: true})
	s.RoundTrip(harness.InitLine)
	s.CloseAndWait()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s.Stderr.String()), "\n") {
		var rec struct{ Msg, Line string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("--log-format json: a stderr line that is not JSON: %q", l)
		}
		if rec.Msg == "server script stderr" {
			lines = append(lines, rec.Line)
		}
	}
	if strings.Join(lines, "|") != `starting up: é "quoted"|second line` {
		t.Errorf("--log-format json: the script's lines %q", lines)
	}
}
