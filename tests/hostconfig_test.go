package tests

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// Every stdio snippet `config --client` prints starts the server exactly
// as printed — command, args and env from the JSON, or the words of the
// command line as a shell reads them — from another directory with only
// that env, and a real client (the Go SDK's) lists its tool.
func TestHostConfigStartsAsPrinted(t *testing.T) {
	mark := harness.Mark(t, "hostconfig")
	t.Cleanup(func() { harness.KillMarked(mark) })
	work, elsewhere := t.TempDir(), t.TempDir()
	clean := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	ncRun(t, work, clean, 0, harness.Binary, "new", "srv")
	dir := filepath.Join(work, "srv")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	list := ncRun(t, work, clean, 0, harness.Binary, "config", "--list")
	for _, client := range []string{"claude-desktop", "vscode", "cursor", "claude-code", "inspector"} {
		if !strings.Contains(list, client+" ") {
			t.Errorf("config --list lacks %s: %q", client, list)
		}
		t.Run(client, func(t *testing.T) {
			out := ncRun(t, work, clean, 0, harness.Binary, "config", "--client", client, "--bash", bash, dir)
			command, args, env := hcParse(t, client, out)
			if command != harness.Binary || !slices.Equal(args, []string{"--bash", bash, filepath.Join(dir, "server.sh")}) {
				t.Errorf("%s: command %q args %q, want the binary, --bash and the absolute script", client, command, args)
			}
			cmd := exec.Command(command, args...)
			cmd.Dir, cmd.Env = elsewhere, append(env, harness.MarkKey+"="+mark)
			ctx, cancel := context.WithDeadline(context.Background(), harness.Deadline(t))
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "hostconfig", Version: "0"}, nil)
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("%s: starting %s %q with env %q: %v", client, command, args, env, err)
			}
			defer cs.Close()
			res, err := cs.ListTools(ctx, nil)
			if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "hello" {
				t.Errorf("%s: tools/list: %v %+v", client, err, res)
			}
		})
	}
}

// hcParse reads back what a host would run from client's snippet.
func hcParse(t *testing.T, client, out string) (string, []string, []string) {
	t.Helper()
	switch client {
	case "claude-desktop", "cursor", "vscode":
		var doc map[string]map[string]struct {
			Type    string
			Command string
			Args    []string
			Env     map[string]string
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s printed %q: %v", client, out, err)
		}
		key := "mcpServers"
		if client == "vscode" {
			key = "servers"
		}
		e, ok := doc[key]["srv"]
		if !ok || len(doc) != 1 || (client == "vscode") != (e.Type == "stdio") {
			t.Fatalf("%s printed %s, want %s.srv (type stdio for vscode only)", client, out, key)
		}
		var env []string
		for k, v := range e.Env {
			env = append(env, k+"="+v)
		}
		return e.Command, e.Args, env
	}
	// A command line: split as bash does, then take what the CLI passes on.
	b, err := exec.Command("bash", "-c", `eval "set -- $1"; printf '%s\0' "$@"`, "_", strings.TrimSuffix(out, "\n")).Output()
	if err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("%s printed %q: %v", client, out, err)
	}
	words := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	var env []string
	var prefix []string
	switch client {
	case "claude-code":
		prefix = []string{"claude", "mcp", "add", "--transport", "stdio"}
	case "inspector":
		prefix = []string{"npx", "@modelcontextprotocol/inspector"}
	}
	if !slices.Equal(words[:len(prefix)], prefix) {
		t.Fatalf("%s printed %q, want it to start %q", client, out, prefix)
	}
	words = words[len(prefix):]
	for len(words) > 1 && (words[0] == "--env" || words[0] == "-e") {
		env, words = append(env, words[1]), words[2:]
	}
	if client == "claude-code" {
		if len(words) < 1 || words[0] != "srv" {
			t.Fatalf("claude-code printed %q, want NAME after the env", out)
		}
		words = words[1:]
	}
	// Both CLIs take "--" before the server's command, whose flags
	// (--bash) are not theirs.
	if len(words) < 2 || words[0] != "--" {
		t.Fatalf("%s printed %q, want -- COMMAND after the env", client, out)
	}
	words = words[1:]
	return words[0], words[1:], env
}

// --http URL puts the token in a header, for every host that takes one.
func TestHostConfigHTTPCarriesTheToken(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	ncRun(t, dir, nil, 0, "/bin/sh", "-c", "printf 's3cret\\n' > token")
	const url = "https://example.test:8443/mcp"
	for client, want := range map[string]string{
		"vscode":      `"type": "http"`,
		"cursor":      `"url": "` + url + `"`,
		"claude-code": "claude mcp add --transport http mcp-bashd " + url + " --header 'Authorization: Bearer s3cret'",
		"inspector":   "--server-url " + url + " --header 'Authorization: Bearer s3cret'",
	} {
		out := ncRun(t, dir, nil, 0, harness.Binary, "config", "--client", client, "--http", url, "--token-file", token)
		if !strings.Contains(out, want) || !strings.Contains(out, "Bearer s3cret") {
			t.Errorf("%s --http printed %q, want %q and the token", client, out, want)
		}
	}
	// Claude Desktop's file holds stdio servers only: said, exit 1.
	ncRun(t, dir, nil, 1, harness.Binary, "config", "--client", "claude-desktop", "--http", url)
	ncRun(t, dir, nil, 2, harness.Binary, "config", "--client", "nosuch", "--http", url)
}

// new --client prints that host's snippet after creating the server.
func TestNewPrintsTheClientsConfig(t *testing.T) {
	work := t.TempDir()
	out := ncRun(t, work, []string{"PATH=/usr/bin:/bin"}, 0, harness.Binary, "new", "--client", "vscode", "srv")
	if !strings.Contains(out, "for vscode:\n{\n  \"servers\"") || !strings.Contains(out, filepath.Join(work, "srv", "server.sh")) {
		t.Errorf("new --client vscode printed %q", out)
	}
	ncRun(t, work, nil, 2, harness.Binary, "new", "--client", "nosuch", "other")
}
