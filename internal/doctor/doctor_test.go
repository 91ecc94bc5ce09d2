package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeedsBash4(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]string{
		"tool_a() { local x=1; echo \"$x\"; }\n":            "",
		"# declare -A in a comment\necho ok\n":              "",
		"echo ok\ndeclare -A seen=()\n":                     ":2: declare -A seen=()",
		"f() { local -A m; }\n":                             ":1: f() { local -A m; }",
		"mapfile -t lines < f\n":                            ":1: mapfile -t lines < f",
		"echo \"${name,,}\"\n":                              ":1: echo \"${name,,}\"",
		"cmd |& tee log\n":                                  ":1: cmd |& tee log",
		"declare -a list=(1 2)\nexport -f f\necho \"$#\"\n": "",
	} {
		p := filepath.Join(dir, "s.sh")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		got := NeedsBash4(p)
		if (want == "") != (got == "") || (want != "" && got != p+want) {
			t.Errorf("NeedsBash4(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestNaming(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(good, []byte(`{"servers": {"x": {"command": "/bin/mcp-bashd", "args": ["--bash", "/bin/bash", "/srv/server.sh"]}, "y": {"command": "/other"}}}`), 0o644)
	os.WriteFile(bad, []byte(`{"mcpServers": `), 0o644)
	found, errs := Naming([]string{good, bad, filepath.Join(dir, "missing.json")}, "/srv/server.sh")
	if len(found) != 1 || found[0] != good+": x" {
		t.Errorf("found %q", found)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), bad) {
		t.Errorf("errs %v, want one naming %s", errs, bad)
	}
}
