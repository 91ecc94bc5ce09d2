package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// `mcp-bashd call` is a client that can be asked (issue 24, item 13): a
// tool's mcp_elicit gets --answer's content, locally and at --url, where
// the server's elicitation/create arrives on the call's stream and the
// answer goes back as a POST.
func TestCallAnswersTheToolsQuestion(t *testing.T) {
	mark := harness.Mark(t, "answers")
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh": `tool_ask() {
    local a
    if a=$(mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'); then
        echo "got: $a"
    else
        echo "not: $a"
    fi
}`,
		"tools.json": harness.ToolsJSON("ask"),
	})
	script := filepath.Join(dir, "server.sh")
	d := harness.StartHTTP(t, harness.Options{Script: script, Marked: mark, TempDir: true})
	for _, c := range []struct{ name, answer, want string }{
		{"content", `{"name":"Ada"}`, `got: {"action":"accept","content":{"name":"Ada"}}`},
		{"decline", `{"action":"decline"}`, `not: {"action":"decline"}`},
	} {
		for _, where := range [][]string{{script}, {"--url", d.URL}} {
			args := append(append([]string{"call", "--answer", c.answer}, where...), "ask")
			out, err := exec.Command(harness.Binary, args...).Output()
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Errorf("%s %v: %q, %v; want %q", c.name, where, out, err, c.want)
			}
		}
	}
	d.StopClean(t, mark)
}

// At a terminal, the question is put to the person: one line per field.
func TestCallAsksThePersonAtTheTerminal(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  `tool_ask() { mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string","description":"as on the badge"}},"required":["name"]}'; }`,
		"tools.json": harness.ToolsJSON("ask"),
	})
	master, slave := cliOpenPTY(t)
	defer master.Close()
	stdout := &harness.Output{}
	p, _ := harness.RunCmd(t, harness.Options{Args: []string{"call", filepath.Join(dir, "server.sh"), "ask"}, TempDir: true},
		func(cmd *exec.Cmd) { cmd.Stdin, cmd.Stdout = slave, stdout })
	stderr := p.Stderr
	slave.Close()
	proctest.WaitUntil(t, harness.Deadline(t), "the question on stderr", func() (bool, string) {
		return strings.Contains(stderr.String(), "Your name?\n(Ctrl-D to cancel)\nname (as on the badge): "), stderr.String()
	})
	if _, err := master.Write([]byte("Ada \"the Countess\"\n")); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t, "mcp-bashd call, answered at its terminal"); err != nil {
		t.Fatalf("call: %v\nstderr:\n%s", err, stderr.String())
	}
	if got, want := stdout.String(), `{"action":"accept","content":{"name":"Ada \"the Countess\""}}`+"\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}
