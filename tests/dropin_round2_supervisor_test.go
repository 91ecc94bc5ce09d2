package tests

// Issue 11 (drop-in, round 2), the supervisor's items: the shell options a
// tool runs with after sourcing the shim (item 2), the cancellation grace
// given to every member of the call's group (item 4), and the SDK's log
// sentences as the messages of the daemon's log events (item 7). Each test
// failed on the main this round started from.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// d2sServer is a server directory: server.sh (sourcing a copy of the shim
// when it is a drop-in server), tools.json, and config.json when given.
type d2sServer struct {
	dir string
}

func d2sWrite(t *testing.T, script, tools, config string) d2sServer {
	t.Helper()
	files := map[string]string{"server.sh": script, "tools.json": tools}
	if config != "" {
		files["config.json"] = config
	}
	dir := writeServer(t, files)
	shim, err := os.ReadFile(repoPath("scripts/mcpserver_core.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcpserver_core.sh"), shim, 0o644); err != nil {
		t.Fatal(err)
	}
	return d2sServer{dir: dir}
}

// d2sEnv is the environment of a server under test: the test's own minus
// every MCP_* variable, plus extra.
func d2sEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCP_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// start runs the server in one of the two forms a host uses: "dropin"
// (./server.sh, its shim finds the binary through MCP_BASHD) or
// "manifest" (mcp-bashd server.sh).
func (d d2sServer) start(t *testing.T, form string, env ...string) *server {
	t.Helper()
	script := filepath.Join(d.dir, "server.sh")
	var cmd *exec.Cmd
	if form == "dropin" {
		cmd = exec.Command(script)
	} else {
		cmd = exec.Command(binary, script)
	}
	cmd.Dir = d.dir
	cmd.Env = d2sEnv(append([]string{"MCP_BASHD=" + binary}, env...)...)
	s := startPrepared(t, cmd)
	s.roundTrip(initLine)
	return s
}

// d2sCall sends a tools/call and returns its result's text and isError.
func d2sCall(t *testing.T, s *server, id int, tool, args string) (string, bool) {
	t.Helper()
	line := s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	var r callResponse
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Result == nil || len(r.Result.Content) == 0 {
		t.Fatalf("call %s: not a tool result: %s", tool, line)
	}
	return r.Result.Content[0].Text, r.Result.IsError
}

// Tools that show what the SDK's `set -euo pipefail` means to them.
const d2sOptionTools = `
tool_unset() { echo "val=$D2_NEVER_SET"; }
tool_pipe() { false | true; }
tool_errexit() { false; echo "past false"; }
tool_opts() {
  [[ -o errexit ]] && echo errexit-on || echo errexit-off
  [[ -o nounset ]] && echo nounset-on || echo nounset-off
  [[ -o pipefail ]] && echo pipefail-on || echo pipefail-off
}
`

var d2sOptionToolsJSON = toolsJSON("unset", "pipe", "errexit", "opts")

// Item 2: sourcing the SDK left nounset and pipefail on in the server
// shell (errexit too, which calls turn off), so a tool reading an unset
// variable fails with bash's "unbound variable" and `false | true` fails.
// The same with the shim, in both forms a host starts a drop-in server.
func TestD2SupShellOptionsOfTheSDK(t *testing.T) {
	d := d2sWrite(t, `#!/usr/bin/env bash
source "$(dirname "$0")/mcpserver_core.sh"
`+d2sOptionTools+`
run_mcp_server "$@"
`, d2sOptionToolsJSON, "")
	for _, form := range []string{"dropin", "manifest"} {
		t.Run(form, func(t *testing.T) {
			s := d.start(t, form)
			text, isErr := d2sCall(t, s, 1, "unset", `{}`)
			if !isErr || !strings.HasPrefix(text, "Error executing unset: ") || !strings.HasSuffix(text, "D2_NEVER_SET: unbound variable") {
				t.Errorf("unset variable: isError %v text %q, want the SDK's unbound-variable failure", isErr, text)
			}
			if text, isErr := d2sCall(t, s, 2, "pipe", `{}`); !isErr || text != "Error executing pipe: " {
				t.Errorf("false | true: isError %v text %q, want a failure (pipefail)", isErr, text)
			}
			if text, isErr := d2sCall(t, s, 3, "errexit", `{}`); isErr || text != "past false" {
				t.Errorf("errexit in a tool: isError %v text %q, want it off", isErr, text)
			}
			if text, _ := d2sCall(t, s, 4, "opts", `{}`); text != "errexit-off\nnounset-on\npipefail-on" {
				t.Errorf("options in a tool: %q", text)
			}
		})
	}
}

// Item 2: a script that turns an option off after sourcing keeps it off
// (it did under the SDK), and one that sources nothing (a manifest server
// of plain functions) or was written for the 2026 SDK, whose file sets no
// option, is left alone.
func TestD2SupShellOptionsTheScriptChose(t *testing.T) {
	t.Run("turned off after sourcing", func(t *testing.T) {
		d := d2sWrite(t, `#!/usr/bin/env bash
source "$(dirname "$0")/mcpserver_core.sh"
set +u +o pipefail
`+d2sOptionTools+`
run_mcp_server
`, d2sOptionToolsJSON, "")
		for _, form := range []string{"dropin", "manifest"} {
			t.Run(form, func(t *testing.T) {
				s := d.start(t, form)
				if text, isErr := d2sCall(t, s, 1, "unset", `{}`); isErr || text != "val=" {
					t.Errorf("unset variable with set +u: isError %v text %q", isErr, text)
				}
				if text, isErr := d2sCall(t, s, 2, "pipe", `{}`); isErr || text != "" {
					t.Errorf("false | true with set +o pipefail: isError %v text %q", isErr, text)
				}
				if text, _ := d2sCall(t, s, 3, "opts", `{}`); text != "errexit-off\nnounset-off\npipefail-off" {
					t.Errorf("options in a tool: %q", text)
				}
			})
		}
	})
	t.Run("no shim sourced", func(t *testing.T) {
		d := d2sWrite(t, d2sOptionTools, d2sOptionToolsJSON, "")
		s := d.start(t, "manifest")
		if text, _ := d2sCall(t, s, 1, "opts", `{}`); text != "errexit-off\nnounset-off\npipefail-off" {
			t.Errorf("options in a tool of a script that sources nothing: %q", text)
		}
	})
	t.Run("2026 SDK server", func(t *testing.T) {
		d := d2sWrite(t, `#!/bin/bash
MCP_CONFIG_FILE="$(dirname "${BASH_SOURCE[0]}")/config.json"
MCP_TOOLS_LIST_FILE="$(dirname "${BASH_SOURCE[0]}")/tools.json"
source "$(dirname "${BASH_SOURCE[0]}")/mcpserver_core.sh"
`+d2sOptionTools+`
run_mcp_server "$@"
`, d2sOptionToolsJSON, `{"supportedVersions":["2026-07-28","2025-11-25"],"serverInfo":{"name":"d2","version":"1"}}`)
		for _, form := range []string{"dropin", "manifest"} {
			t.Run(form, func(t *testing.T) {
				s := d.start(t, form)
				if text, isErr := d2sCall(t, s, 1, "unset", `{}`); isErr || text != "val=" {
					t.Errorf("unset variable under the 2026 SDK's rules: isError %v text %q", isErr, text)
				}
				if text, _ := d2sCall(t, s, 2, "opts", `{}`); text != "errexit-off\nnounset-off\npipefail-off" {
					t.Errorf("options in a tool: %q", text)
				}
			})
		}
	})
}

// Item 2, the consequence for the shim's own code: its helpers, loaded on
// first use inside a call, the before-tool hook's option restore, the
// cancel hook and the EXIT trap all work under nounset and pipefail.
func TestD2SupShimHelpersUnderNounset(t *testing.T) {
	marks := t.TempDir()
	d := d2sWrite(t, `#!/usr/bin/env bash
source "$(dirname "$0")/mcpserver_core.sh"
trap 'echo "exit trap $-" > "$MARKS/exit"' EXIT
mcp_before_tool_call() { set +u; shopt -s nullglob; return 0; }
tool_helpers() {
  log INFO "from a tool"
  _configure_extra_log_file ""
  mcp_progress 1 2 "half"
  mcp_log info "a message"
  mcp_text "text item"
  mcp_structured '{"k":1}'
  read_json_file "$MARKS/none.json" || echo "read_json_file refused"
  create_response 7 '{}'
  create_error_response 7 -32000 "no"
  validate_tool_arguments helpers '{}' && echo "valid"
  [[ -o nounset ]] && echo nounset-on
  shopt -q nullglob || echo nullglob-off
}
tool_wait() { echo ready > "$MARKS/wait.ready"; sleep 100; }
tool_wait_cancel() { echo "cancel hook $-" > "$MARKS/cancel"; }
run_mcp_server
`, `{"tools":[{"name":"helpers","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}},{"name":"wait","inputSchema":{"type":"object"}}]}`, "")
	log := filepath.Join(marks, "server.log")
	s := d.start(t, "dropin", "MARKS="+marks, "MCP_LOG_FILE="+log)
	line := s.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"helpers","arguments":{}}}`)
	for _, want := range []string{
		`read_json_file refused`, `{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}`,
		`{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32000,\"message\":\"no\"}}`,
		`valid\nnounset-on\nnullglob-off`, `"text":"text item"`, `"structuredContent":{"k":1}`, `"isError":false`,
	} {
		if !strings.Contains(line, want) {
			t.Errorf("helpers under nounset: %q missing from\n%s\nstderr:\n%s", want, line, s.stderr)
		}
	}
	if strings.Contains(line, "unbound variable") {
		t.Errorf("a helper failed under nounset:\n%s", line)
	}
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	rfLine(t, marks, "wait.ready")
	s.send(rfCancel("2"))
	// $- of the cancel hook and of the EXIT trap: nounset on, errexit off.
	flags := func(line string) string { return line[strings.LastIndexByte(line, ' ')+1:] }
	if got := rfLine(t, marks, "cancel"); !strings.Contains(flags(got), "u") || strings.Contains(flags(got), "e") {
		t.Errorf("cancel hook ran with %q", got)
	}
	if ee := s.closeAndWait(); ee != nil {
		t.Fatalf("exit: %v\nstderr:\n%s", ee, s.stderr)
	}
	if got := rfLine(t, marks, "exit"); !strings.Contains(flags(got), "u") || strings.Contains(flags(got), "e") {
		t.Errorf("EXIT trap ran with %q", got)
	}
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "unbound variable") {
		t.Errorf("unbound variable in the log:\n%s", b)
	}
}
