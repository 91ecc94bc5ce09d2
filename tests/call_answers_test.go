package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `mcp-bashd call` is a client that can be asked (issue 24, item 13): a
// tool's mcp_elicit gets --answer's content, locally and at --url, where
// the server's elicitation/create arrives on the call's stream and the
// answer goes back as a POST.
func TestCallAnswersTheToolsQuestion(t *testing.T) {
	mark := clMarker(t)
	dir := writeServer(t, map[string]string{
		"server.sh": `tool_ask() {
    local a
    if a=$(mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'); then
        echo "got: $a"
    else
        echo "not: $a"
    fi
}`,
		"tools.json": toolsJSON("ask"),
	})
	script := filepath.Join(dir, "server.sh")
	d := cmStartHTTP(t, mark, []string{"TMPDIR=" + t.TempDir()}, script)
	for _, c := range []struct{ name, answer, want string }{
		{"content", `{"name":"Ada"}`, `got: {"action":"accept","content":{"name":"Ada"}}`},
		{"decline", `{"action":"decline"}`, `not: {"action":"decline"}`},
	} {
		for _, where := range [][]string{{script}, {"--url", d.url}} {
			args := append(append([]string{"call", "--answer", c.answer}, where...), "ask")
			out, err := exec.Command(binary, args...).Output()
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Errorf("%s %v: %q, %v; want %q", c.name, where, out, err, c.want)
			}
		}
	}
	d.stopClean(t, mark)
}
