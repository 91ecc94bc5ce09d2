package tests

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// icons declared in config.json, tools.json, resources.json and
// prompts.json reach a client of 2025-11-25 or 2026-07-28 as written, and
// never a client of an older revision, whose schema has none.

const icIcon = `[{"src":"https://example.com/i.png","mimeType":"image/png","sizes":["48x48","any"],"theme":"dark"}]`

var icWant = []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"48x48", "any"}, Theme: "dark"}}

func icServer(t *testing.T, icon string) string {
	t.Helper()
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":      `tool_hi() { echo hi; }` + "\n" + `resource_r() { echo r; }` + "\n" + `resource_t() { echo t; }` + "\n" + `prompt_p() { echo p; }`,
		"config.json":    `{"serverInfo":{"name":"ic","version":"1.0.0","icons":` + icIcon + `}}`,
		"tools.json":     `{"tools":[{"name":"hi","description":"says hi","inputSchema":{"type":"object"},` + "\n" + `"icons":` + icon + `}]}`,
		"resources.json": `{"resources":[{"uri":"ic://r","name":"r","icons":` + icIcon + `}],"resourceTemplates":[{"uriTemplate":"ic://t/{x}","name":"t","icons":` + icIcon + `}]}`,
		"prompts.json":   `{"prompts":[{"name":"p","description":"a prompt","icons":` + icIcon + `}]}`,
	})
	return filepath.Join(dir, "server.sh")
}

// icLists lists everything once and returns the icons of serverInfo, the
// tool, the resource, the template and the prompt.
func icLists(t *testing.T, c *clGoConn) [][]mcp.Icon {
	t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	tl, err1 := c.cs.ListTools(ctx, nil)
	rl, err2 := c.cs.ListResources(ctx, nil)
	tp, err3 := c.cs.ListResourceTemplates(ctx, nil)
	pl, err4 := c.cs.ListPrompts(ctx, nil)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(tl.Tools) != 1 || len(rl.Resources) != 1 || len(tp.ResourceTemplates) != 1 || len(pl.Prompts) != 1 {
		t.Fatalf("lists: %v %v %v %v", err1, err2, err3, err4)
	}
	var info []mcp.Icon
	if si := c.cs.InitializeResult().ServerInfo; si != nil {
		info = si.Icons
	}
	return [][]mcp.Icon{info, tl.Tools[0].Icons, rl.Resources[0].Icons, tp.ResourceTemplates[0].Icons, pl.Prompts[0].Icons}
}

func TestIconsPassedThroughWhereTheRevisionHasThem(t *testing.T) {
	script := icServer(t, icIcon)
	for _, v := range []string{"", "2025-11-25"} {
		t.Run("v="+v, func(t *testing.T) {
			c := clGoConnect(t, v, harness.Mark(t, "ic"), nil, script)
			for i, got := range icLists(t, c) {
				if v == "" && i == 0 {
					continue // a 2026-07-28 session's serverInfo is in each result's _meta, checked on the wire below
				}
				if !reflect.DeepEqual(got, icWant) {
					t.Errorf("v=%q entry %d icons = %+v, want %+v", v, i, got, icWant)
				}
			}
			for _, m := range c.wire.all() {
				if m.In && bytes.Contains(m.Line, []byte(`"tools":[`)) && !bytes.Contains(m.Line, []byte(`"icons":`+icIcon)) {
					t.Errorf("tools/list answer without the icons as written: %s", m.Line)
				}
			}
		})
	}
}

func TestIconsLeftOutForOlderRevisions(t *testing.T) {
	script := icServer(t, icIcon)
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			c := clGoConnect(t, v, harness.Mark(t, "ic"), nil, script)
			for i, got := range icLists(t, c) {
				if got != nil {
					t.Errorf("%s entry %d has icons %+v; the revision has none", v, i, got)
				}
			}
			for _, m := range c.wire.all() {
				if m.In && bytes.Contains(m.Line, []byte(`"icons"`)) {
					t.Errorf("%s: icons on the wire: %s", v, m.Line)
				}
			}
		})
	}
}

// check refuses an icon whose src is neither https: nor data:, a sizes
// that is not strings and a mimeType that is not a string, naming the file
// and the icons line; good icons pass.
func TestIconsCheckedByCheck(t *testing.T) {
	if out, err := exec.Command(harness.Binary, "check", icServer(t, icIcon)).CombinedOutput(); err != nil || !strings.Contains(string(out), ": ok (1 tools") {
		t.Errorf("check with good icons: %v\n%s", err, out)
	}
	script := icServer(t, `[{"src":"http://example.com/i.png","sizes":[48],"mimeType":1},{"src":"data:image/png;base64,AA=="},{"sizes":["any"]}]`)
	out, err := exec.Command(harness.Binary, "check", script).CombinedOutput()
	tools := filepath.Join(filepath.Dir(script), "tools.json")
	for _, want := range []string{
		tools + `:2: icons[0].src "http://example.com/i.png" must be an https: or data: URI`,
		tools + `:2: icons[0].mimeType must be a string`,
		tools + `:2: icons[0].sizes must be an array of strings`,
		tools + `:2: icons[2].src must be a string`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check output lacks %q", want)
		}
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || strings.Contains(string(out), "icons[1]") {
		t.Errorf("check: %v, want exit 1 and nothing of the data: icon\n%s", err, out)
	}
}
