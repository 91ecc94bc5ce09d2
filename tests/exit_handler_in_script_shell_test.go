package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
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
	dir := writeServer(t, map[string]string{
		"tools.json": toolsJSON("noop"),
		"server.sh": `#!/usr/bin/env bash
source "$SHIM"
: >"$TMPDIR/x.$$"
trap 'echo "handler $$ $-" >>"$MARKS/handler"; rm -f "$TMPDIR/x.$$"; kill -TERM $$; echo "handler went on" >>"$MARKS/handler"' EXIT
tool_noop() { :; }
run_mcp_server
echo "after run_mcp_server" >>"$MARKS/after"
`,
	})
	s := startServerCmd(t, filepath.Join(dir, "server.sh"), []string{"MCP_BASHD=" + binary, "SHIM=" + repoPath("scripts/mcpserver_core.sh"),
		"MARKS=" + marks, "TMPDIR=" + tmp, "MCP_LOG_FILE=" + filepath.Join(marks, "log")})
	s.roundTrip(initLine)
	shell := strconv.Itoa(s.cmd.Process.Pid)
	ee := s.closeAndWait()
	if ee == nil || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("the server ended with %v, want death by SIGTERM; stderr:\n%s", ee, s.stderr.String())
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
