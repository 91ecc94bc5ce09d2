package tests

// Drop-in supervisor behaviour (issue 11): the shell options a
// tool runs with after sourcing the shim (item 2), the cancellation grace
// given to every member of the call's group (item 4), and the SDK's log
// sentences as the messages of the daemon's log events (item 7). Each test
// failed on the main its fix started from.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// d2sWrite writes a server directory: server.sh (sourcing a copy of the
// shim when it is a drop-in server), tools.json, and config.json when
// given.
func d2sWrite(t *testing.T, script, tools, config string) string {
	t.Helper()
	files := map[string]string{"server.sh": script, "tools.json": tools}
	if config != "" {
		files["config.json"] = config
	}
	dir := harness.WriteFiles(t, files)
	shim, err := os.ReadFile(harness.RepoPath("scripts/mcpserver_core.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcpserver_core.sh"), shim, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// d2sStart runs the server in dir in one of the two forms a host uses: "dropin"
// (./server.sh, its shim finds the binary through MCP_BASHD) or
// "manifest" (mcp-bashd server.sh).
func d2sStart(t *testing.T, dir, form string, env ...string) *harness.Daemon {
	t.Helper()
	o := harness.Options{Exe: filepath.Join(dir, "server.sh"), Args: []string{}, WorkDir: dir, CleanEnv: true, Init: true,
		Env: append([]string{"MCP_BASHD=" + harness.Binary}, env...)}
	if form != "dropin" {
		o.Exe, o.Args = harness.Binary, []string{filepath.Join(dir, "server.sh")}
	}
	return harness.Start(t, o)
}

// d2sCall sends a tools/call and returns its result's text and isError.
func d2sCall(t *testing.T, s *harness.Daemon, id int, tool, args string) (string, bool) {
	t.Helper()
	line := s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	var r harness.Response
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

var d2sOptionToolsJSON = harness.ToolsJSON("unset", "pipe", "errexit", "opts")

// Item 2: sourcing the SDK left nounset and pipefail on in the server
// shell (errexit too, which calls turn off), so a tool reading an unset
// variable fails with bash's "unbound variable" and `false | true` fails.
// The same with the shim, in both forms a host starts a drop-in server.
func TestShellOptionsOfTheSDK(t *testing.T) {
	d := d2sWrite(t, `#!/usr/bin/env bash
source "$(dirname "$0")/mcpserver_core.sh"
`+d2sOptionTools+`
run_mcp_server "$@"
`, d2sOptionToolsJSON, "")
	for _, form := range []string{"dropin", "manifest"} {
		t.Run(form, func(t *testing.T) {
			s := d2sStart(t, d, form)
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
func TestShellOptionsTheScriptChose(t *testing.T) {
	t.Run("turned off after sourcing", func(t *testing.T) {
		d := d2sWrite(t, `#!/usr/bin/env bash
source "$(dirname "$0")/mcpserver_core.sh"
set +u +o pipefail
`+d2sOptionTools+`
run_mcp_server
`, d2sOptionToolsJSON, "")
		for _, form := range []string{"dropin", "manifest"} {
			t.Run(form, func(t *testing.T) {
				s := d2sStart(t, d, form)
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
		s := d2sStart(t, d, "manifest")
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
				s := d2sStart(t, d, form)
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
func TestShimHelpersUnderNounset(t *testing.T) {
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
	s := d2sStart(t, d, "dropin", "MARKS="+marks, "MCP_LOG_FILE="+log)
	line := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"helpers","arguments":{}}}`)
	for _, want := range []string{
		`read_json_file refused`, `{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}`,
		`{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32000,\"message\":\"no\"}}`,
		`valid\nnounset-on\nnullglob-off`, `"text":"text item"`, `"structuredContent":{"k":1}`, `"isError":false`,
	} {
		if !strings.Contains(line, want) {
			t.Errorf("helpers under nounset: %q missing from\n%s\nstderr:\n%s", want, line, s.Stderr)
		}
	}
	if strings.Contains(line, "unbound variable") {
		t.Errorf("a helper failed under nounset:\n%s", line)
	}
	s.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	rfLine(t, marks, "wait.ready")
	s.Send(rfCancel("2"))
	// $- of the cancel hook and of the EXIT trap: nounset on, errexit off.
	flags := func(line string) string { return line[strings.LastIndexByte(line, ' ')+1:] }
	if got := rfLine(t, marks, "cancel"); !strings.Contains(flags(got), "u") || strings.Contains(flags(got), "e") {
		t.Errorf("cancel hook ran with %q", got)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\nstderr:\n%s", ee, s.Stderr)
	}
	if got := rfLine(t, marks, "exit"); !strings.Contains(flags(got), "u") || strings.Contains(flags(got), "e") {
		t.Errorf("EXIT trap ran with %q", got)
	}
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "unbound variable") {
		t.Errorf("unbound variable in the log:\n%s", b)
	}
}

// d2sAlive reports whether pid is a live (not zombie) process.
func d2sAlive(pid int) bool {
	p, ok := rfProcOK(pid)
	return ok && p.State != 'Z' && p.State != 'X'
}

// rfProcOK is rfProc without failing when the process is gone.
func rfProcOK(pid int) (proctest.Proc, bool) {
	ps, err := proctest.Scan()
	if err != nil {
		return proctest.Proc{}, false
	}
	for _, p := range ps {
		if p.PID == pid {
			return p, true
		}
	}
	return proctest.Proc{}, false
}

// d2sGraceTool: the tool's shell dies on SIGTERM at once; its child traps
// SIGTERM, notes it, and cleans up until the test lets it finish (gate
// cleanup.go) — or, as the stubborn variant, ignores SIGTERM for good.
const d2sGraceTool = `
tool_tidy() {
  ( trap 'echo term >> "$RF_DIR/child.log"; rf_gate cleanup.go; echo cleaned >> "$RF_DIR/child.log"; exit 0' TERM
    echo "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" > "$RF_DIR/child.pid"
    while :; do sleep 0.05; done ) &
  rf_gate child.pid
  rf_note shell.pid
  wait
}
tool_stubborn() {
  ( trap '' TERM; echo "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" > "$RF_DIR/child.pid"; while :; do sleep 0.05; done ) &
  rf_gate child.pid
  rf_note shell.pid
  wait
}
`

// Item 4: after a cancellation's SIGTERM every member of the call's group
// gets the grace, not only the tool's shell: a child that cleans up on
// TERM outlives the shell and finishes its cleanup; once it has exited the
// group is reaped at once (the grace here is an hour: waiting it out would
// hang the test), with no escalation logged. The same for a sandboxed
// call (its own network namespace and cgroup), when the kernel allows one.
func TestGraceCoversTheWholeGroup(t *testing.T) {
	t.Run("plain", func(t *testing.T) { d2sGraceCleanup(t, "") })
	t.Run("sandboxed", func(t *testing.T) { d2sGraceCleanup(t, `{"network":false,"limits":{"processes":64}}`) })
}

func d2sGraceCleanup(t *testing.T, sandbox string) {
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	dir := harness.WriteFiles(t, map[string]string{"server.sh": rfLib + d2sGraceTool + "tool_probe() { echo ok; }\n",
		"tools.json": sbToolsJSON(sbTool{"tidy", sandbox}, sbTool{"probe", sandbox})})
	d := harness.Start(t, rfIn(dir, "", []string{"--grace", "1h"}, "MCP_LOG_FILE="+logFile))
	if text, isErr := sbCall(t, d, 9, "probe", `{}`); isErr || text != "ok" {
		t.Skipf("this daemon cannot run the call so: %s", text)
	}
	d.Send(rfCall("1", "tidy", `{}`))
	shell, child := rfInt(t, d.Dir, "shell.pid"), rfInt(t, d.Dir, "child.pid")
	d.Send(rfCancel("1"))
	// The shell dies on TERM (reaped on Linux; where there is no child
	// subreaper its zombie pins the group for the grace: reaper_posix.go);
	// its child lives on, cleaning up.
	proctest.WaitUntil(t, harness.Deadline(t), "the tool's shell to be dead", func() (bool, string) {
		p, ok := rfProcOK(shell)
		return !ok || p.State == 'Z', ""
	})
	if !d2sAlive(child) {
		t.Fatalf("the child was killed when the tool's shell exited; it should get the grace to clean up")
	}
	if got := rfLine(t, d.Dir, "child.log"); got != "term" {
		t.Fatalf("child.log %q, want the child's TERM handler running", got)
	}
	rfTouch(t, d.Dir, "cleanup.go")
	harness.WaitGroupGone(t, shell, harness.Deadline(t))
	if b, _ := os.ReadFile(filepath.Join(d.Dir, "child.log")); string(b) != "term\ncleaned\n" {
		t.Errorf("child.log %q, want its cleanup finished", b)
	}
	// Answered in order after the teardown; nothing for the cancelled id.
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("after the cancel: %s", got)
	}
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("lines after the cancel: %q", lines)
	}
	d.WaitExit(t)
	b, _ := os.ReadFile(logFile)
	if strings.Contains(string(b), "ignored SIGTERM") {
		t.Errorf("escalation logged for a group that exited on TERM:\n%s", b)
	}
	if !strings.Contains(string(b), `"msg":"Cancelled tools/call 1 (tidy)"`) {
		t.Errorf("no Cancelled line in the log:\n%s", b)
	}
}

// Item 4: a child that ignores SIGTERM keeps the group for the whole grace
// after the tool's shell is gone, then the group gets SIGKILL and the
// escalation is logged with the SDK's sentence.
func TestGraceSurvivorKilledAndLogged(t *testing.T) {
	const grace = 500 * time.Millisecond
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	d := harness.Start(t, rfServer(d2sGraceTool, []string{"stubborn"}, []string{"--grace", grace.String()}, "MCP_LOG_FILE="+logFile))
	d.Send(rfCall("1", "stubborn", `{}`))
	shell, child := rfInt(t, d.Dir, "shell.pid"), rfInt(t, d.Dir, "child.pid")
	cancelled := time.Now()
	d.Send(rfCancel("1"))
	proctest.WaitUntil(t, harness.Deadline(t), "the tool's shell to be dead", func() (bool, string) {
		p, ok := rfProcOK(shell)
		return !ok || p.State == 'Z', ""
	})
	if !d2sAlive(child) {
		t.Fatalf("the TERM-ignoring child was killed with the tool's shell, before the %v grace", grace)
	}
	gone := harness.WaitGroupGone(t, shell, cancelled.Add(grace+time.Second+rfScanSlack)).Sub(cancelled)
	if gone < grace-100*time.Millisecond {
		t.Fatalf("group gone %v after the cancel, before the %v grace", gone, grace)
	}
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("after the cancel: %s", got)
	}
	d.Stdin.Close()
	d.Drain(t)
	d.WaitExit(t)
	d2sWantLog(t, logFile, "Tool stubborn ignored SIGTERM; process group killed", map[string]any{"tool": "stubborn", "call_id": "1"})
}

// d2sLogLines reads the daemon's JSON log lines.
func d2sLogLines(t *testing.T, logFile string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// d2sWantLog fails unless a log line's message is msg and it carries the
// given fields (values compared as text).
func d2sWantLog(t *testing.T, logFile, msg string, fields map[string]any) {
	t.Helper()
	lines := d2sLogLines(t, logFile)
	for _, m := range lines {
		if m["msg"] != msg {
			continue
		}
		for k, v := range fields {
			if fmt.Sprint(m[k]) != fmt.Sprint(v) {
				t.Errorf("log line %q: field %s is %v, want %v\n%v", msg, k, m[k], v, m)
			}
		}
		return
	}
	var msgs []string
	for _, m := range lines {
		msgs = append(msgs, fmt.Sprint(m["msg"]))
	}
	t.Errorf("no log line %q; messages:\n  %s", msg, strings.Join(msgs, "\n  "))
}

// Item 7: the events the SDK logged are logged with its sentences (the
// variable parts filled in, and also given as fields), in the daemon's
// JSON lines: the before-tool hook's refusal, exit and death (CONTRACT
// 17), the cancellation's three lines (21), the cancel hook's failure and
// budget (20), a cancellation matching nothing (19), the in-flight tool
// stopped on shutdown (24), and the script's EXIT handler failing (25).
func TestLogSentences(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	body := d2sGraceTool + `
mcp_before_tool_call() {
  case $1 in
  refuse) echo "not today"; return 3 ;;
  hookexit) exit 4 ;;
  hookkill) kill -KILL "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" ;;
  esac
  return 0
}
tool_refuse() { :; }
tool_hookexit() { :; }
tool_hookkill() { :; }
tool_hooked() { rf_note hooked.ready; sleep 1000; }
tool_hooked_cancel() { return 5; }
tool_slowhook() { rf_note slowhook.pid; sleep 1000; }
tool_slowhook_cancel() { sleep 1000; }
tool_nap() { rf_note nap.pid; sleep 1000; }
trap 'exit 3' EXIT
`
	d := harness.Start(t, rfServer(body, []string{"stubborn", "refuse", "hookexit", "hookkill", "hooked", "slowhook", "nap"}, []string{"--grace", "300ms"}, "MCP_LOG_FILE="+logFile))
	d.Send(rfCall("1", "refuse", `{}`))
	d.Expect(t, "1", "Error executing refuse: not today", true)
	d.Send(rfCall("2", "hookexit", `{}`))
	d.Expect(t, "2", "mcp_before_tool_call ended the call instead of returning; tool hookexit did not run.", true)
	d.Send(rfCall("3", "hookkill", `{}`))
	d.Expect(t, "3", "mcp_before_tool_call was killed by signal 9; tool hookkill did not run.", true)

	d.Send(rfCall(`"s"`, "stubborn", `{}`))
	stubborn := rfInt(t, d.Dir, "shell.pid")
	d.Send(rfCancel(`"s"`))
	harness.WaitGroupGone(t, stubborn, harness.Deadline(t))
	d.Send(rfCall("5", "hooked", `{}`))
	rfLine(t, d.Dir, "hooked.ready")
	d.Send(rfCancel("5"))
	d.Send(rfCall("6", "slowhook", `{}`))
	slow := rfInt(t, d.Dir, "slowhook.pid")
	d.Send(rfCancel("6"))
	d.Send(rfCancel("999"))
	if got := d.RoundTrip(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("ping: %s", got)
	}
	// The slow cancel hook's 2 s budget passes before its call's group goes.
	harness.WaitGroupGone(t, slow, harness.Deadline(t))

	d.Send(rfCall("8", "nap", `{}`))
	nap := rfInt(t, d.Dir, "nap.pid")
	if err := d.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.Drain(t)
	d.WaitExit(t)

	for _, c := range []struct {
		msg    string
		fields map[string]any
	}{
		{"before-tool hook refused tool refuse (status 3)", map[string]any{"tool": "refuse", "status": 3, "level": "error"}},
		{"Before-tool hook mcp_before_tool_call for tool hookexit ended the call (status 4)", map[string]any{"tool": "hookexit", "status": 4}},
		{"Before-tool hook mcp_before_tool_call for tool hookkill was killed (status 137)", map[string]any{"tool": "hookkill", "status": 137, "signal": "SIGKILL"}},
		{`Cancelling in-flight tools/call "s" (stubborn)`, map[string]any{"call_id": `"s"`, "tool": "stubborn"}},
		{"Tool stubborn ignored SIGTERM; process group killed", map[string]any{"tool": "stubborn", "level": "warn"}},
		{`Cancelled tools/call "s" (stubborn)`, map[string]any{"call_id": `"s"`, "tool": "stubborn"}},
		{"Cancel hook tool_hooked_cancel for hooked exited with status 5", map[string]any{"tool": "hooked", "status": 5}},
		{"Cancel hook tool_slowhook_cancel for slowhook did not finish within 2s; killed", map[string]any{"tool": "slowhook"}},
		{"Cancellation received with nothing in flight; dropped", map[string]any{"request_id": "999"}},
		{fmt.Sprintf("Stopped in-flight tool nap (group %d) on shutdown", nap), map[string]any{"tool": "nap", "pgid": nap}},
		{"Chained caller EXIT trap failed with status 3", map[string]any{"status": 3}},
	} {
		d2sWantLog(t, logFile, c.msg, c.fields)
	}
}

// Item 7, CONTRACT 18: a call whose directory cannot be created is logged
// with the SDK's sentence, naming the tool and where it was to be made.
func TestLogSentenceCallDirectory(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	dir := harness.WriteFiles(t, map[string]string{"server.sh": rfLib + `tool_quick() { echo hi; }`, "tools.json": harness.ToolsJSON("quick")})
	tmp := filepath.Join(t.TempDir(), "no-such-dir")
	d := harness.Start(t, rfIn(dir, tmp, nil, "MCP_LOG_FILE="+logFile))
	d.Send(rfCall("1", "quick", `{}`))
	d.Expect(t, "1", "Cannot run quick: its call directory could not be created.", true)
	d.Stdin.Close()
	d.Drain(t)
	d.WaitExit(t)
	prefix := "Tool quick not run: cannot create its call directory in " + tmp + ": "
	for _, m := range d2sLogLines(t, logFile) {
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, prefix) {
			if m["tool"] != "quick" || m["path"] != tmp || m["level"] != "error" {
				t.Errorf("fields of %q: %v", msg, m)
			}
			return
		}
	}
	b, _ := os.ReadFile(logFile)
	t.Errorf("no log line starting %q:\n%s", prefix, b)
}

// Item 7, beyond CONTRACT's list: the other SDK lines operators grep are
// the messages of the same events here too — a tool's failure with its
// exit code (128+N for a signal), refused arguments, each request gate's
// refusal, an unusable declaration file, and input ending while a call
// runs (the call still finishes and is answered).
func TestLogSentencesOutsideContract(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	d := harness.Start(t, rfServer(`
tool_fail() { echo "bad input"; return 3; }
tool_silent() { return 4; }
tool_killed() { kill -KILL "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }
tool_slow() { rf_note slow.started; rf_gate slow.go; echo done; }
`, []string{"fail", "silent", "killed", "slow"}, nil, "MCP_LOG_FILE="+logFile))
	d.Send(rfCall("1", "fail", `{}`))
	d.Expect(t, "1", "Error executing fail: bad input", true)
	d.Send(rfCall("2", "silent", `{}`))
	d.Expect(t, "2", "Error executing silent: ", true)
	d.Send(rfCall("3", "killed", `{}`))
	d.Expect(t, "3", "Error executing killed: ", true)
	d.Send(rfCall("4", "fail", `5`))
	d.Expect(t, "4", "Invalid arguments: expected a JSON object, got number.", true)
	for _, line := range []string{`not json`, `{"a":1} {"b":2}`, `[1,2]`,
		`{"jsonrpc":"1.0","id":5,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`} {
		if got := d.RoundTrip(line); !strings.Contains(got, `"error"`) {
			t.Fatalf("%s: %s", line, got)
		}
	}
	d.Send(rfCall("6", "slow", `{}`))
	// The call is in flight once its tool has started; the gate file lets
	// it finish only after stdin is closed.
	rfLine(t, d.Dir, "slow.started")
	d.Stdin.Close()
	d2sWaitLog(t, logFile, func(m map[string]any) bool {
		return m["msg"] == "Client closed stdin during an in-flight call; shutting down"
	})
	rfTouch(t, d.Dir, "slow.go")
	d.Expect(t, "6", "done", false)
	d.WaitExit(t)

	for _, c := range []struct {
		msg    string
		fields map[string]any
	}{
		{"Tool fail failed with exit code 3", map[string]any{"tool": "fail", "exit": 3}},
		{"Tool silent failed with exit code 4", map[string]any{"tool": "silent", "level": "warn"}},
		{"Tool killed failed with exit code 137", map[string]any{"tool": "killed", "signal": "SIGKILL"}},
		{"Tool fail argument validation failed: Invalid arguments: expected a JSON object, got number.", map[string]any{"tool": "fail"}},
		{"Invalid JSON received", map[string]any{"code": -32700}},
		{"Received a line holding 2 JSON documents; expected exactly one", map[string]any{"code": -32700}},
		{"JSON-RPC request is not a JSON object", map[string]any{"code": -32600}},
		{"Invalid JSON-RPC version: 1.0", map[string]any{"code": -32600}},
		{"Request id must be a string or an integer", map[string]any{"code": -32600}},
		{"Client closed stdin during an in-flight call; shutting down", map[string]any{"in_flight": 1}},
	} {
		d2sWantLog(t, logFile, c.msg, c.fields)
	}
}

// An unusable declaration file is logged with the SDK's sentences.
func TestLogSentencesFiles(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "daemon.log")
	dir := harness.WriteFiles(t, map[string]string{"server.sh": rfLib, "tools.json": `{"tools":[]} {}`})
	cfg := filepath.Join(dir, "absent.json")
	o := rfIn(dir, "", []string{"--config", cfg}, "MCP_LOG_FILE="+logFile)
	o.Init = false
	d := harness.Start(t, o)
	d.RoundTrip(harness.InitLine) // answered with an error: the named config is absent
	d.CloseAndWait()
	d2sWantLog(t, logFile, "Not exactly one parseable JSON object: "+filepath.Join(dir, "tools.json"), map[string]any{"what": "tools list"})
	d2sWantLog(t, logFile, "File not found: "+cfg, map[string]any{"path": cfg, "what": "server configuration"})
}

// d2sWaitLog waits until a line of the log file satisfies ok.
func d2sWaitLog(t *testing.T, logFile string, ok func(map[string]any) bool) {
	t.Helper()
	proctest.WaitUntil(t, harness.Deadline(t), "a log line", func() (bool, string) {
		for _, m := range d2sLogLines(t, logFile) {
			if ok(m) {
				return true, ""
			}
		}
		return false, logFile
	})
}
