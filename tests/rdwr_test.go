package tests

// A read-write redirection of standard output in a tool (`1<>FILE`): bash
// before 5.3 prints it back as `<> FILE` (standard input) in the snapshot
// every call sources, so the tool's output went into its result instead of
// the file, where the bash SDK (which ran the tool in the script's shell)
// sent it. Failed on the main this fix started from.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

func TestDropInRdwrStdoutGoesToTheFile(t *testing.T) {
	d := d2sWrite(t, `#!/usr/bin/env bash
source "$(dirname "$0")/mcpserver_core.sh"
tool_w() { echo hello 1<>"$MCP_CALL_TMPDIR/f"; cat "$MCP_CALL_TMPDIR/f"; cp "$MCP_CALL_TMPDIR/f" "$MARKS/f"; }
tool_strings() { echo "a <> b" 'c <> d'; cat <<EOF
 <> here
EOF
}
tool_stdin() { printf 'from the file\n' >"$MCP_CALL_TMPDIR/r"; read -r l 0<>"$MCP_CALL_TMPDIR/r"; echo "read: $l"; }
run_mcp_server
`, harness.ToolsJSON("w", "strings", "stdin"), "")
	for _, form := range []string{"dropin", "manifest"} {
		t.Run(form, func(t *testing.T) {
			marks := t.TempDir()
			s := d2sStart(t, d, form, "MARKS="+marks)
			if text, isErr := d2sCall(t, s, 1, "w", `{}`); isErr || text != "hello" {
				t.Errorf("w answered isError=%v %q, want hello once (from cat)", isErr, text)
			}
			if got, err := os.ReadFile(filepath.Join(marks, "f")); err != nil || string(got) != "hello\n" {
				t.Errorf("the file the tool wrote through 1<> holds %q (%v), want \"hello\\n\"", got, err)
			}
			if text, _ := d2sCall(t, s, 2, "strings", `{}`); text != "a <> b c <> d\n <> here" {
				t.Errorf("strings and a here-document with <> changed: %q", text)
			}
			if text, _ := d2sCall(t, s, 3, "stdin", `{}`); text != "read: from the file" {
				t.Errorf("0<> is no longer standard input: %q", text)
			}
			if ee := s.CloseAndWait(); ee != nil {
				t.Fatalf("exit: %v\nstderr:\n%s", ee, s.Stderr)
			}
		})
	}
}
