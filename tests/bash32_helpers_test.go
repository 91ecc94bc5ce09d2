package tests

import (
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// A server using every helper of the shim, the before-tool hook, a cancel
// hook, resources, prompts, the SDK's in-process API and a tool killed by
// a signal, written in the bash 3.2 language: no BASHPID (a child's
// $PPID is the tool's shell).
const b32HelpersScript = `#!/usr/bin/env bash
source "$SHIM"
tool_rich() {
    mcp_progress 1 2 "half way"
    mcp_log info "a log line"
    mcp_text 'first	item \ slash' 
    printf 'PNG' >"$MCP_CALL_TMPDIR/img"
    mcp_image "$MCP_CALL_TMPDIR/img" image/png
    mcp_audio "$MCP_CALL_TMPDIR/img" audio/wav
    mcp_resource "mem://embedded" text/plain "embedded text"
}
tool_structured() { mcp_structured '{"n":1}'; }
tool_whole() { mcp_result '{"content":[{"type":"text","text":"whole result"}],"isError":false}'; }
tool_asks() {
    local a
    a=$(mcp_elicit "Your name?" '{"type":"object","properties":{"name":{"type":"string"}}}') || return 1
    printf 'elicit=%s\n' "$a"
    a=$(mcp_sample '{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}') || return 1
    printf 'sample=%s\n' "$a"
    a=$(mcp_ask roots/list) || return 1
    printf 'ask=%s\n' "$a"
    a=$(mcp_roots) || return 1
    printf 'roots=%s\n' "$a"
    a=$(mcp_ask_all '{"one":{"method":"roots/list"},"two":{"method":"roots/list"}}') || return 1
    printf 'all=%s\n' "$a"
}
tool_touch() { mcp_resource_updated "mem://watched" && echo touched; }
tool_nested() { handle_tools_call 7 '{"name":"whole","arguments":{}}'; }
tool_killed() { sh -c 'kill -KILL $PPID'; }
tool_block() { : >"$MARKS/block.started"; while :; do sleep 1; done; }
tool_block_cancel() { : >"$MARKS/block.cancelled"; }
tool_refused() { echo "the refused tool ran"; }
tool_hookkill() { echo "the hookkill tool ran"; }
mcp_before_tool_call() {
    printf '%s\n' "$1" >>"$MARKS/hook"
    case $1 in
    refused) echo "not today"; return 3 ;;
    hookkill) sh -c 'kill -KILL $PPID' ;;
    esac
    return 0
}
resource_watched() { echo "watched text"; }
resource_blob() { printf 'BLOB' >"$MCP_CALL_TMPDIR/b"; mcp_blob "$MCP_CALL_TMPDIR/b" application/octet-stream; }
resource_gone() { mcp_resource_not_found; }
prompt_greet() { mcp_message assistant "hello from the assistant"; echo "user line"; }
trap 'echo "exit handler ran" >&2' EXIT
run_mcp_server
echo "after run_mcp_server" >&2
`

const b32HelpersTools = `{"tools":[
{"name":"rich","description":"d","inputSchema":{"type":"object"}},
{"name":"structured","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}},
{"name":"whole","description":"d","inputSchema":{"type":"object"}},
{"name":"asks","description":"d","inputSchema":{"type":"object"}},
{"name":"touch","description":"d","inputSchema":{"type":"object"}},
{"name":"nested","description":"d","inputSchema":{"type":"object"}},
{"name":"killed","description":"d","inputSchema":{"type":"object"}},
{"name":"block","description":"d","inputSchema":{"type":"object"}},
{"name":"refused","description":"d","inputSchema":{"type":"object"}},
{"name":"hookkill","description":"d","inputSchema":{"type":"object"}}]}`

const b32HelpersResources = `{"resources":[
{"uri":"mem://watched","name":"watched","mimeType":"text/plain"},
{"uri":"mem://blob","name":"blob","mimeType":"application/octet-stream"},
{"uri":"mem://gone","name":"gone","mimeType":"text/plain"}]}`

const b32HelpersPrompts = `{"prompts":[{"name":"greet","description":"d"}]}`

// b32Helpers serves the helpers script under bash b, in the drop-in form
// (b runs the script) or the manifest form (mcp-bashd --bash b), and
// walks it; the cancel hook is driven last, outside the compared lines.
func b32Helpers(t *testing.T, b string, dropIn, modern bool) (b32Run, string) {
	t.Helper()
	root := t.TempDir()
	dir := harness.WriteFiles(t, map[string]string{"server.sh": b32HelpersScript, "tools.json": b32HelpersTools,
		"resources.json": b32HelpersResources, "prompts.json": b32HelpersPrompts})
	marks := filepath.Join(root, "marks")
	os.MkdirAll(marks, 0o755)
	args := []string{harness.Binary, "--bash", b, filepath.Join(dir, "server.sh")}
	if dropIn {
		args = []string{b, filepath.Join(dir, "server.sh")}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_BASHD="+harness.Binary, "SHIM="+harness.RepoPath("scripts/mcpserver_core.sh"), "MARKS="+marks, "TMPDIR="+root)
	if !modern {
		cmd.Env = append(cmd.Env, bashFirst(t, b)...)
	}
	s := harness.StartCmd(t, cmd)
	d := &b32Driver{s: s, t: t, root: root, bash: b}
	d.request("initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]string{"name": "b32", "version": "0"},
		"capabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}})
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	d.request("logging/setLevel", map[string]string{"level": "debug"})
	d.request("resources/subscribe", map[string]string{"uri": "mem://watched"})
	for _, name := range []string{"rich", "structured", "whole", "asks", "nested", "killed", "refused", "hookkill"} {
		d.request("tools/call", map[string]any{"name": name, "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": name}})
	}
	d.exchange("tools/call", map[string]any{"name": "touch", "arguments": map[string]any{}}, "notifications/resources/updated")
	for _, uri := range []string{"mem://watched", "mem://blob", "mem://gone"} {
		d.request("resources/read", map[string]string{"uri": uri})
	}
	d.request("prompts/get", map[string]any{"name": "greet", "arguments": map[string]string{}})

	// The cancel hook: the call is cancelled once it runs, and its
	// tool_block_cancel runs.
	s.Send(`{"jsonrpc":"2.0","id":"blk","method":"tools/call","params":{"name":"block","arguments":{}}}`)
	waitFile(t, filepath.Join(marks, "block.started"))
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"blk","reason":"test"}}`)
	waitFile(t, filepath.Join(marks, "block.cancelled"))
	d.request("ping", map[string]any{})

	ee := s.CloseAndWait()
	r := b32Run{lines: d.out, raw: d.raw.String(), stderr: s.Stderr.String(), exit: "0"}
	if ee != nil {
		r.exit = ee.String()
	}
	hook, _ := os.ReadFile(filepath.Join(marks, "hook"))
	return r, string(hook)
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), "file "+filepath.Base(p), func() (bool, string) {
		_, err := os.Stat(p)
		return err == nil, ""
	})
}

// Every helper of the shim, the hooks and the SDK's in-process API work
// under bash 3.2 as under a modern bash, with bash 3.2 sourcing the shim
// (drop-in) and as --bash (manifest).
func TestBash32HelpersAnswerAsUnderModernBash(t *testing.T) {
	old := bash32(t)
	modern := modernBash(t)
	for _, dropIn := range []bool{true, false} {
		name := "manifest"
		if dropIn {
			name = "drop-in"
		}
		t.Run(name, func(t *testing.T) {
			o, hook := b32Helpers(t, old, dropIn, false)
			m, _ := b32Helpers(t, modern, dropIn, true)
			compareRuns(t, o, m)
			for _, want := range []string{
				`"params":{"progressToken":"rich","progress":1,"total":2,"message":"half way"}`,
				`"data":"a log line"`,
				`{"type":"text","text":"first\titem \\ slash"}`,
				`{"type":"image","data":"UE5H","mimeType":"image/png"}`,
				`{"type":"audio","data":"UE5H","mimeType":"audio/wav"}`,
				`"structuredContent":{"n":1}`,
				`whole result`,
				`elicit={\"action\":\"accept\"`,
				`sample={\"role\":\"assistant\"`,
				`ask={\"roots\":[`, `roots={\"roots\":[`, `all={\"one\":{\"roots\"`,
				`"method":"notifications/resources/updated","params":{"uri":"mem://watched"}`,
				`"text":"watched text\n"`, `"blob":"QkxPQg=="`,
				`hello from the assistant`,
				`mcp_before_tool_call was killed by signal 9; tool hookkill did not run.`,
				`not today`,
			} {
				if !strings.Contains(o.raw, want) {
					t.Errorf("bash 3.2 run lacks %s", want)
				}
			}
			for _, never := range []string{"the refused tool ran", "the hookkill tool ran"} {
				if strings.Contains(o.raw, never) {
					t.Errorf("bash 3.2 run: %s", never)
				}
			}
			if !strings.Contains(hook, "refused\n") || !strings.Contains(hook, "rich\n") {
				t.Errorf("the hook saw %q", hook)
			}
			if !strings.Contains(o.stderr, "exit handler ran") {
				t.Errorf("the EXIT handler did not run:\n%s", o.stderr)
			}
			if dropIn && !strings.Contains(o.stderr, "after run_mcp_server") {
				t.Errorf("the statements after run_mcp_server did not run:\n%s", o.stderr)
			}
		})
	}
}

// In the drop-in form the tools run under the bash that runs the script
// (as the SDK's subshells did), not whichever bash comes first on PATH: a
// script started by bash 3.2 has its calls in bash 3.2, and a bash 3.2 on
// PATH never restores the state a modern bash wrote.
func TestBash32DropInToolsRunUnderTheScriptsBash(t *testing.T) {
	old := bash32(t)
	modern := modernBash(t)
	// The modern script's state holds an associative array, which bash
	// 3.2 cannot restore.
	scripts := map[string]string{
		old:    "source \"$SHIM\"\ntool_which() { printf '%s\\n' \"${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}\"; }\nrun_mcp_server\n",
		modern: "source \"$SHIM\"\ndeclare -A MAP=([k]=v)\ntool_which() { printf '%s %s\\n' \"${BASH_VERSINFO[0]}\" \"${MAP[k]}\"; }\nrun_mcp_server\n",
	}
	for _, c := range []struct{ runner, onPath, flags, want string }{
		{old, modern, "", `"text":"3.2"}`}, {modern, old, "", `"text":"5 v"}`},
		// MCP_BASHD_FLAGS naming a bash still wins.
		{modern, modern, "--bash " + old, `"text":"3.2"}`},
	} {
		body := scripts[c.runner]
		if c.flags != "" {
			body = scripts[old]
		}
		dir := harness.WriteFiles(t, map[string]string{"server.sh": body, "tools.json": harness.ToolsJSON("which")})
		cmd := exec.Command(c.runner, filepath.Join(dir, "server.sh"))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "MCP_BASHD="+harness.Binary, "SHIM="+harness.RepoPath("scripts/mcpserver_core.sh"))
		cmd.Env = append(cmd.Env, bashFirst(t, c.onPath)...)
		if c.flags != "" {
			cmd.Env = append(cmd.Env, "MCP_BASHD_FLAGS="+c.flags)
		}
		s := harness.StartCmd(t, cmd)
		s.RoundTrip(harness.InitLine)
		got := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"which","arguments":{}}}`)
		if !strings.Contains(got, c.want) {
			t.Errorf("script run by %s, %s first on PATH: %s", bashVersion(c.runner), bashVersion(c.onPath), got)
		}
		s.CloseAndWait()
	}
}

// A shell that is not bash 3.2 or later (dash as sh here; zsh; an older
// bash) sourcing the shim is told so, by name, and the source fails with
// status 1 — not a syntax error at whatever construct it lacks.
func TestShimRefusesAShellOlderThanBash32(t *testing.T) {
	shim := harness.RepoPath("scripts/mcpserver_core.sh")
	run := func(sh string, pre string) (string, error) {
		cmd := exec.Command(sh, "-c", pre+`. "$SHIM"; echo "status $?"`)
		cmd.Env = append(os.Environ(), "SHIM="+shim, "MCP_BASHD="+harness.Binary)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if v := bashVersion("/bin/sh"); v == "" {
		out, _ := run("/bin/sh", "")
		if !strings.Contains(out, "mcpserver_core.sh: not running under bash (BASH_VERSION is unset)") || !strings.Contains(out, "status 1") || strings.Contains(strings.ToLower(out), "syntax error") {
			t.Errorf("/bin/sh sourcing the shim:\n%s", out)
		}
	}
	out, _ := run("bash", "BASH_VERSION=3.1.17; ")
	if !strings.Contains(out, "mcpserver_core.sh: this is bash 3.1.17; the mcp-bashd shim needs bash 3.2 or later") || !strings.Contains(out, "status 1") {
		t.Errorf("bash 3.1 sourcing the shim:\n%s", out)
	}
}
