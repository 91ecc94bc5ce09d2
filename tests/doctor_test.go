package tests

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

type drReport struct {
	Status string
	Checks []struct{ Check, Status, Detail, Fix string }
}

// drRun runs doctor --json from another directory and returns its report,
// checking the exit status is the worst line's (0 OK, 1 WARN, 2 FAIL).
func drRun(t *testing.T, env []string, code int, args ...string) drReport {
	t.Helper()
	return drRunIn(t, t.TempDir(), env, code, args...)
}

func drRunIn(t *testing.T, dir string, env []string, code int, args ...string) drReport {
	t.Helper()
	cmd := exec.Command(harness.Binary, append([]string{"doctor", "--json"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	b, err := cmd.Output()
	var ee *exec.ExitError
	if got := 0; errors.As(err, &ee) {
		got = ee.ExitCode()
		if got != code {
			t.Fatalf("doctor %q exited %d, want %d: %s%s", args, got, code, b, ee.Stderr)
		}
	} else if err != nil || code != 0 {
		t.Fatalf("doctor %q: %v, want exit %d: %s", args, err, code, b)
	}
	out := string(b)
	var r drReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("doctor --json printed %q: %v", out, err)
	}
	if want := [...]string{"OK", "WARN", "FAIL"}[code]; r.Status != want {
		t.Errorf("doctor's status %q, exit %d", r.Status, code)
	}
	return r
}

// line is the first check named name with status, or fails the test.
func (r drReport) line(t *testing.T, name, status, detail string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.Check == name && c.Status == status && strings.Contains(c.Detail, detail) {
			return
		}
	}
	t.Errorf("doctor has no %s %s line with %q: %+v", status, name, detail, r.Checks)
}

func drServer(t *testing.T, plain bool) string {
	t.Helper()
	work := t.TempDir()
	args := []string{"new", "srv"}
	if plain {
		args = []string{"new", "--plain", "srv"}
	}
	ncRun(t, work, []string{"PATH=/usr/bin:/bin"}, 0, harness.Binary, args...)
	return filepath.Join(work, "srv")
}

func TestDoctorHealthyServer(t *testing.T) {
	dir := drServer(t, false)
	r := drRun(t, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, 0, dir)
	r.line(t, "bash", "OK", "/bash ")
	r.line(t, "script", "OK", "server.sh loads, 1 tools")
	r.line(t, "cwd", "OK", "any working directory")
	r.line(t, "mcp-bashd", "OK", harness.Binary)
	r.line(t, "temp", "OK", "free")
	// A host config naming the server is found (Cursor's, in HOME).
	home := t.TempDir()
	cfg := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"mine": map[string]any{"command": harness.Binary, "args": []string{filepath.Join(dir, "server.sh")}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	drRun(t, []string{"PATH=/usr/bin:/bin", "HOME=" + home}, 0, dir).line(t, "hosts", "OK", cfg+": mine")
	// Text output: one line per check, the same verdicts.
	out := ncRun(t, t.TempDir(), []string{"PATH=/usr/bin:/bin", "HOME=" + home}, 0, harness.Binary, "doctor", dir)
	if !strings.Contains(out, "OK   script ") || strings.Contains(out, "FAIL") {
		t.Errorf("doctor printed %q", out)
	}
}

func TestDoctorSyntaxError(t *testing.T) {
	dir := drServer(t, true)
	f, err := os.OpenFile(filepath.Join(dir, "server.sh"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\nif then fi (\n")
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	r := drRun(t, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, 2, dir)
	r.line(t, "script", "FAIL", "server.sh")
	r.line(t, "bash", "OK", "bash")
}

func TestDoctorCwdDependent(t *testing.T) {
	dir := drServer(t, true)
	script := filepath.Join(dir, "server.sh")
	b, err := os.ReadFile(script)
	if err == nil {
		err = os.WriteFile(script, append([]byte("MCP_TOOLS_LIST_FILE=tools.json\n"), b...), 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	// From its own directory it loads, and doctor warns a host's would not do.
	r := drRunIn(t, dir, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, 1, script)
	r.line(t, "cwd", "WARN", "MCP_TOOLS_LIST_FILE")
	r.line(t, "script", "OK", "loads, 1 tools")
	// From elsewhere, as a host starts it, the tools list is missing.
	r = drRun(t, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, 2, script)
	r.line(t, "script", "FAIL", "tools.json")
	r.line(t, "cwd", "WARN", "MCP_TOOLS_LIST_FILE")
}

func TestDoctorMissingBash(t *testing.T) {
	dir := drServer(t, false)
	drRun(t, []string{"PATH=/usr/bin:/bin"}, 2, "--bash", "/nonexistent/bash", dir).line(t, "bash", "FAIL", "/nonexistent/bash")
	// PATH without bash: an empty directory only.
	drRun(t, []string{"PATH=" + t.TempDir()}, 2, dir).line(t, "bash", "FAIL", "no bash on PATH")
}
