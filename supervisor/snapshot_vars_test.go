package supervisor

import (
	"os/exec"
	"strings"
	"testing"
)

// unquoteWord reads back what bash itself printed: `declare -p` values and
// printf %q words, for values a path may hold.
func TestUnquoteWordReadsWhatBashPrints(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	values := []string{"/plain/path.json", "rel/tools.json", "/tmp/a b", `/tmp/q"uo'te`, "/tmp/$HOME`x`", "/tmp/é ü",
		"/tmp/new\nline", "/tmp/tab\there", "/tmp/\x01ctl", "/tmp/back\\slash", "", "~user/x", "*glob?"}
	for _, v := range values {
		// The value travels through the environment, never the script text.
		cmd := exec.Command(bash, "-c", `MCP_V=$V; declare -p MCP_V; printf '%q\n' "$V"`)
		cmd.Env = []string{"V=" + v}
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		// A value holding a newline makes `declare -p` span lines before
		// bash 5.2; the pass skips those rather than decode them.
		decl, quoted := lines[0], lines[len(lines)-1]
		if !strings.Contains(v, "\n") || strings.HasPrefix(decl, "declare -- MCP_V=$'") {
			_, val, _ := strings.Cut(decl, "=")
			if got, ok := unquoteWord(val); !ok || got != v {
				t.Errorf("declare %q: got %q, %v; want %q", decl, got, ok, v)
			}
		}
		if got, ok := unquoteWord(quoted); !ok || got != v {
			t.Errorf("%%q %q: got %q, %v; want %q", quoted, got, ok, v)
		}
	}
	for _, bad := range []string{`"$(id)"`, "`id`", `$x`, `"open`, `'open`, `$'open`, `a b`, `a;b`} {
		if got, ok := unquoteWord(bad); ok {
			t.Errorf("unquoteWord(%s) = %q, want refused", bad, got)
		}
	}
}

// The pass keeps one-line MCP_* scalars (inherited ones too, which it
// trims from the file) and the cd line's directory.
func TestSnapshotPassReadsVarsAndDir(t *testing.T) {
	dump := snapHeader + "\n{\n" +
		"declare -x MCP_TOOLS_LIST_FILE=\"/srv/x/tools.json\"\n" +
		"declare -- MCP_CONFIG_FILE=\"conf/c.json\"\n" +
		"declare -x MCP_LOG_FILE=$'/tmp/log\\001'\n" +
		"declare -a MCP_ARR=([0]=\"a\")\n" +
		"declare -- OTHER=\"x\"\n" +
		"declare -- MCP_MULTI=\"a\nb\"\n" +
		"} 2>/dev/null\n" +
		"__mcpbashd_options() {\n:\n}\n__mcpbashd_exit_trap() {\n:\n}\n" +
		"builtin cd -- /srv/x\\ y 2>/dev/null\n"
	p, err := passSnapshot([]byte(dump), []string{"MCP_TOOLS_LIST_FILE=/srv/x/tools.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"MCP_TOOLS_LIST_FILE": "/srv/x/tools.json", "MCP_CONFIG_FILE": "conf/c.json", "MCP_LOG_FILE": "/tmp/log\x01"}
	if len(p.vars) != len(want) {
		t.Errorf("vars %q, want %q", p.vars, want)
	}
	for k, v := range want {
		if p.vars[k] != v {
			t.Errorf("%s = %q, want %q", k, p.vars[k], v)
		}
	}
	if p.dir != "/srv/x y" {
		t.Errorf("dir %q", p.dir)
	}
	if strings.Contains(p.w.String(), "MCP_TOOLS_LIST_FILE") {
		t.Errorf("the inherited variable is still in the file:\n%s", p.w.String())
	}
}
