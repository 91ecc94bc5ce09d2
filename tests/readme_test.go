// Issue 12, items 9 and 12: the README's first command is run as written
// (only the binary's path changed): its build is static, and the five
// responses are what the line under it says.

package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

func TestReadmeFirstCommand(t *testing.T) {
	readme, err := os.ReadFile(harness.RepoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const build = "CGO_ENABLED=0 go build -o mcp-bashd ./cmd/mcp-bashd && "
	var command, after string
	lines := strings.Split(string(readme), "\n")
	for i, line := range lines {
		if c, ok := strings.CutPrefix(line, "    "+build); ok {
			command = c
			after = strings.Join(lines[i+1:min(i+6, len(lines))], " ")
			break
		}
	}
	if command == "" {
		t.Fatalf("README has no command line starting %q", build)
	}
	if !strings.Contains(after, "`Hello, Ada`") || !strings.Contains(after, "any order") {
		t.Errorf("the lines under the README's first command do not say what comes back: %s", after)
	}

	// The build half, into a temporary directory: a static binary.
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcp-bashd")
	cmd := exec.Command("bash", "-c", strings.Replace(strings.TrimSuffix(build, " && "), "-o mcp-bashd", "-o "+bin, 1))
	cmd.Dir = shRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's build: %v\n%s", err, b)
	}
	if why, err := shDynamic(bin); err != nil || len(why) > 0 {
		t.Errorf("the README's build is not static: %v %v", why, err)
	}

	// The run half, with that binary.
	if !strings.Contains(command, "| ./mcp-bashd examples/greeter/server.sh") {
		t.Fatalf("the README's command does not run ./mcp-bashd examples/greeter/server.sh: %s", command)
	}
	cmd = exec.Command("bash", "-c", strings.Replace(command, "./mcp-bashd", bin, 1))
	cmd.Dir = shRoot(t)
	// Not in the README: the greeter would log to examples/greeter/server.log.
	cmd.Env = append(os.Environ(), "MCP_LOG_FILE=/dev/null", "TMPDIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's command: %v\n%s", err, out)
	}
	type response struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct{ Name string }
			Tools           []struct{ Name string }
			Content         []struct{ Text string }
			IsError         bool `json:"isError"`
		}
	}
	got := map[int]response{}
	rlines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for _, line := range rlines {
		var r response
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		got[r.ID] = r
	}
	if len(rlines) != 5 || len(got) != 5 {
		t.Fatalf("%d lines for ids %v, want one for each of 1..5:\n%s", len(rlines), got, out)
	}
	if r := got[1].Result; r.ProtocolVersion != "2025-11-25" || r.ServerInfo.Name != "greeter" {
		t.Errorf("initialize: %+v", r)
	}
	var tools []string
	for _, tool := range got[2].Result.Tools {
		tools = append(tools, tool.Name)
	}
	if !slices.Equal(tools, []string{"greet", "count", "fail"}) {
		t.Errorf("tools/list: %v", tools)
	}
	text := func(id int) string {
		r := got[id].Result
		if r.IsError || len(r.Content) != 1 {
			t.Errorf("id %d: %+v", id, r)
			return ""
		}
		return r.Content[0].Text
	}
	if s := text(3); s != "Hello, Ada" {
		t.Errorf("greet: %q", s)
	}
	counts := []string{text(4), text(5)}
	slices.Sort(counts)
	if !slices.Equal(counts, []string{"1", "2"}) {
		t.Errorf("the two counts: %v, want 1 and 2", counts)
	}
}
