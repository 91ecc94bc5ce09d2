//go:build portable || darwin

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// Where there are no cgroups, Landlock or network namespaces (macOS, and
// the portable build that runs macOS's process logic on Linux), a tool
// gets what POSIX gives — rlimits, set before bash starts — and a tool
// that declares a limit with no mechanism here is refused, never run
// without it: the call's result, `mcp-bashd check` and `mcp-bashd call`
// all say which limit and why, naming this OS.
func TestLimitsThisOSCannotHoldAreRefused(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh": rfLib + `
tool_boxed() { echo ran > "$RF_DIR/boxed.ran"; }
tool_capped() { ulimit -n; ulimit -t; }
`,
		"tools.json": sbToolsJSON(
			sbTool{"boxed", `{"network":false,"filesystem":{"read":["/usr"]},"limits":{"cpu":"5s"}}`},
			sbTool{"capped", `{"limits":{"openFiles":32,"cpu":"7s"}}`}),
	})
	d := harness.Start(t, rfIn(dir, "", nil))
	text, isErr := sbCall(t, d, 1, "boxed", `{}`)
	for _, want := range []string{"refused", "network", "filesystem.read", "no network namespaces on " + runtime.GOOS} {
		if !isErr || !strings.Contains(text, want) {
			t.Errorf("boxed: isError %v, text %q; want an error naming %q", isErr, text, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "boxed.ran")); err == nil {
		t.Errorf("boxed ran without the limits it declares")
	}
	if text, isErr := sbCall(t, d, 2, "capped", `{}`); isErr || text != "32\n7" {
		t.Errorf("capped: isError %v, text %q; want its rlimits 32 and 7", isErr, text)
	}

	script := filepath.Join(dir, "server.sh")
	out, err := exec.Command(harness.Binary, "check", script).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(string(out), `tool "boxed": network false: no network namespaces on `+runtime.GOOS+`, so its calls are refused`) ||
		!strings.Contains(string(out), `tool "boxed": filesystem.read [/usr]: no Landlock on `+runtime.GOOS+`, so its calls are refused`) ||
		strings.Contains(string(out), `"capped"`) {
		t.Errorf("check: %v\n%s", err, out)
	}
	cmd := exec.Command(harness.Binary, "call", script, "boxed")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "RF_DIR="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ = cmd.Output()
	if !strings.HasPrefix(string(out), "Cannot run boxed: refused: ") ||
		!strings.Contains(stderr.String(), "limits of boxed:") || !strings.Contains(stderr.String(), "refused: no Landlock on "+runtime.GOOS) ||
		!strings.Contains(stderr.String(), "RLIMIT_CPU") {
		t.Errorf("call boxed: %q\n%s", out, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "boxed.ran")); err == nil {
		t.Errorf("mcp-bashd call ran boxed without the limits it declares")
	}
}
