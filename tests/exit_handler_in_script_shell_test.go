package tests

import (
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"

	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// In the drop-in form the EXIT handler runs in a subshell of the script's
// shell, as under the SDK: $$ there is the server's pid, so `rm
// "$TMPDIR/x.$$"` removes the server's file and `kill -TERM $$` ends the
// server by SIGTERM (143), the statements after run_mcp_server not run.
// (In the manifest form there is no script's shell left: the handler's $$
// is its own, docs/migration.md.)
func TestExitHandlerRunsInTheScriptsShell(t *testing.T) {
	marks := t.TempDir()
	tmp := t.TempDir()
	dir := harness.WriteFiles(t, map[string]string{
		"tools.json": harness.ToolsJSON("noop"),
		"server.sh": `#!/usr/bin/env bash
source "$SHIM"
: >"$TMPDIR/x.$$"
trap 'echo "handler $$ $-" >>"$MARKS/handler"; rm -f "$TMPDIR/x.$$"; kill -TERM $$; echo "handler went on" >>"$MARKS/handler"' EXIT
tool_noop() { :; }
run_mcp_server
echo "after run_mcp_server" >>"$MARKS/after"
`,
	})
	s := harness.Exec(t, filepath.Join(dir, "server.sh"), nil, []string{"MCP_BASHD=" + harness.Binary, "SHIM=" + harness.RepoPath("scripts/mcpserver_core.sh"),
		"MARKS=" + marks, "TMPDIR=" + tmp, "MCP_LOG_FILE=" + filepath.Join(marks, "log")})
	s.RoundTrip(harness.InitLine)
	shell := strconv.Itoa(s.Cmd.Process.Pid)
	ee := s.CloseAndWait()
	if ee == nil || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("the server ended with %v, want death by SIGTERM; stderr:\n%s", ee, s.Stderr.String())
	}
	h, _ := os.ReadFile(filepath.Join(marks, "handler"))
	if !strings.HasPrefix(string(h), "handler "+shell+" ") || !strings.HasSuffix(string(h), "handler went on\n") || strings.Count(string(h), "\n") != 2 || strings.Contains(string(h), "m") {
		t.Errorf("the handler wrote %q, want one run seeing $$ = %s, job control off", h, shell)
	}
	if _, err := os.Stat(filepath.Join(tmp, "x."+shell)); err == nil {
		t.Errorf("the server's file x.%s is still there", shell)
	}
	if b, err := os.ReadFile(filepath.Join(marks, "after")); err == nil {
		t.Errorf("statements after run_mcp_server ran: %q", b)
	}
	log, _ := os.ReadFile(filepath.Join(marks, "log"))
	if strings.Contains(string(log), "Chained caller EXIT trap failed") {
		t.Errorf("the handler failed:\n%s", log)
	}
}

// The handler run in the script's shell keeps the daemon's budget: one
// that does not finish is killed with everything in its process group
// after 2 s, logged with the SDK's sentence, and the server still returns
// from run_mcp_server with 0.
func TestExitHandlerInTheScriptsShellHasABudget(t *testing.T) {
	marks := t.TempDir()
	dir := harness.WriteFiles(t, map[string]string{
		"tools.json": harness.ToolsJSON("noop"),
		"server.sh": `#!/usr/bin/env bash
source "$SHIM"
trap 'sleep 1000 & echo $! >"$MARKS/child"; wait' EXIT
tool_noop() { :; }
run_mcp_server
echo "after run_mcp_server $?" >>"$MARKS/after"
`,
	})
	log := filepath.Join(marks, "log")
	s := harness.Exec(t, filepath.Join(dir, "server.sh"), nil, []string{"MCP_BASHD=" + harness.Binary, "SHIM=" + harness.RepoPath("scripts/mcpserver_core.sh"),
		"MARKS=" + marks, "MCP_LOG_FILE=" + log})
	s.RoundTrip(harness.InitLine)
	if ee := s.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, s.Stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(marks, "after")); string(b) != "after run_mcp_server 0\n" {
		t.Errorf("after run_mcp_server: %q", b)
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "[WARN] Chained caller EXIT trap did not finish within 2s; killed") {
		t.Errorf("no budget line in the log:\n%s", b)
	}
	if !strings.Contains(s.Stderr.String(), "mcp-bashd: WARN Chained caller EXIT trap did not finish within 2s; killed") {
		t.Errorf("no budget line on stderr:\n%s", s.Stderr.String())
	}
	c, _ := os.ReadFile(filepath.Join(marks, "child"))
	child, err := strconv.Atoi(strings.TrimSpace(string(c)))
	if err != nil {
		t.Fatalf("child pid %q", c)
	}
	proctest.WaitUntil(t, harness.Deadline(t), "the handler's child to be gone", func() (bool, string) {
		ps, err := proctest.Scan()
		if err != nil {
			return false, err.Error()
		}
		for _, p := range proctest.Alive(ps) {
			if p.PID == child {
				return false, p.String()
			}
		}
		return true, ""
	})
}
