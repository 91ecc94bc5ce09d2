package tests

// Issue 23, security 2: a descriptor the daemon inherited from its parent
// (here fd 7, a file a wrapper opened outside the call's directory; and
// whatever the test itself inherited) never reaches a tool: a tool sees
// stdio only, and a tool whose writes are limited to $MCP_CALL_TMPDIR
// cannot write outside it through that descriptor.

import (
	"fmt"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInheritedDescriptorsNeverReachTools(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": rfLib + `
probe() {
    # The shell's own descriptors, read while it runs nothing but ls: a
    # pipeline would show its pipes, which the shell holds as it forks.
    ls /proc/$$/fd >"$MCP_CALL_TMPDIR/fds"
    sort -n "$MCP_CALL_TMPDIR/fds" | tr '\n' ' '; echo
    if (echo leaked >&7) 2>/dev/null; then echo "fd 7: written"; else echo "fd 7: not open"; fi
}
tool_boxed() { probe; }
tool_plain() { probe; }
`, "tools.json": sbToolsJSON(sbTool{"boxed", `{"filesystem":{"write":["$MCP_CALL_TMPDIR"]}}`}, sbTool{"plain", ""})})
	tmp := t.TempDir()
	sbShare(t, dir, tmp)
	outside := filepath.Join(t.TempDir(), "outside")
	f, err := os.OpenFile(outside, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mark := fmt.Sprintf("%s-%d", t.Name(), os.Getpid())
	cmd := exec.Command(harness.Binary, filepath.Join(dir, "server.sh"))
	cmd.Env = append(os.Environ(), harness.MarkKey+"="+mark, "RF_DIR="+dir, "TMPDIR="+tmp)
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, f} // fd 7
	s := harness.StartCmd(t, cmd)
	s.RoundTrip(harness.InitLine)
	d := s
	for i, tool := range []string{"boxed", "plain"} {
		text, isErr := sbCall(t, d, i+1, tool, `{}`)
		if want := "0 1 2 \nfd 7: not open"; isErr || text != want {
			t.Errorf("%s: isError %v, the tool saw %q, want %q", tool, isErr, text, want)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || len(b) != 0 {
		t.Fatalf("the file outside the call's directory: %q %v", b, err)
	}
	if strings.Contains(s.Stderr.String(), "panic") {
		t.Fatal(s.Stderr.String())
	}
}
