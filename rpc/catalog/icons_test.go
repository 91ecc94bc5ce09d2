package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LintIcons looks only where each file declares icons: an inputSchema
// property that happens to be called icons is the tool's own business.
func TestLintIconsOnlyWhereDeclared(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("config.json", "{\n\"serverInfo\":{\"name\":\"x\",\n\"icons\":[{\"src\":\"file:///i.png\"}]}}")
	tools := write("tools.json", `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"icons":{"type":"array"}}},"icons":[{"src":"data:,x","theme":"dim"}]}]}`)
	res := write("resources.json", `{"resources":[{"uri":"x://a","name":"a","icons":"nope"}],"resourceTemplates":[{"uriTemplate":"x://{a}","name":"t","icons":[{"src":"https://x/i.svg","sizes":"any"}]}]}`)
	prompts := write("prompts.json", `{"prompts":[{"name":"p","icons":[{"src":"https://x/i.svg","mimeType":"image/svg+xml","sizes":["any"]}]}]}`)
	var got []string
	for _, p := range LintIcons(cfg, tools, res, prompts) {
		got = append(got, p.String())
	}
	want := []string{
		cfg + `:3: icons[0].src "file:///i.png" must be an https: or data: URI`,
		tools + `:1: icons[0].theme must be "light" or "dark"`,
		res + `:1: icons must be an array of icon objects`,
		res + `:1: icons[0].sizes must be an array of strings ("48x48", "any")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("LintIcons:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps := LintIcons("", filepath.Join(dir, "missing.json"), "", ""); len(ps) != 0 {
		t.Errorf("missing files: %v", ps)
	}
}
