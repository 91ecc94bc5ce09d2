package tests

// The before-tool hook mcp_before_tool_call (shared/CONTRACT.md item 17),
// mirroring the bash SDK's tests/before_tool_hook.bats through the real
// daemon: it runs in the tool's own shell; returning 0 discards its output
// and hands its state to the tool while its set/shopt options are undone;
// non-zero refuses the call; `exit` and death by a signal end the call with
// their own texts; it does not run for calls that are not dispatched.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

const ctHookTools = `{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}}]}`

// A hook that returns 0: its output is discarded; what it sets — a
// variable, an exported variable, the working directory, a function, an
// EXIT trap, PATH — reaches the tool.
func TestHookStateCarriesOver(t *testing.T) {
	hookDir := t.TempDir()
	hookDir, _ = filepath.EvalSymlinks(hookDir)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ct_hook_bin"), []byte("#!/bin/sh\necho hookbin ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() {
  : > "$MARKS/hook.ran"
  printf 'AUDIT\n'; printf 'AUDIT-ERR\n' >&2
  HOOK_VAR=from-hook
  export HOOK_EXPORTED=exported-by-hook
  cd "$HOOK_DIR" || return 1
  hook_fn() { echo "hook fn"; }
  trap 'printf "hook trap\n" >> "$MARKS/trap.log"' EXIT
  PATH="$HOOK_BIN:$PATH"
  return 0
}
tool_x() {
  printf 'var=%s\n' "${HOOK_VAR-unset}"
  printf 'child=%s\n' "$(bash -c 'printf %s "${HOOK_EXPORTED-unset}"')"
  printf 'pwd=%s\n' "$PWD"
  hook_fn
  ct_hook_bin
  printf 'tool ran\n' >> "$MARKS/trap.log"
}`,
		tools: ctHookTools,
		env:   []string{"HOOK_DIR=" + hookDir, "HOOK_BIN=" + bin},
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "x", `{}`), false, "var=from-hook\nchild=exported-by-hook\npwd="+hookDir+"\nhook fn\nhookbin ran")
	if !ctExists(s, "hook.ran") {
		t.Error("the hook did not run")
	}
	if got := ctRead(s, "trap.log"); got != "tool ran\nhook trap\n" {
		t.Errorf("the hook's EXIT trap should run once, after the tool: %q", got)
	}
}

// The hook and the tool share one EXIT trap: the tool's replaces the
// hook's.
func TestHookToolTrapReplacesHookTrap(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() { trap 'printf "hook trap\n" >> "$MARKS/trap.log"' EXIT; }
tool_x() { trap 'printf "tool trap\n" >> "$MARKS/trap.log"' EXIT; printf 'tool output\n'; }`,
		tools: ctHookTools,
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "x", `{}`), false, "tool output")
	if got := ctRead(s, "trap.log"); got != "tool trap\n" {
		t.Errorf("trap log %q, want only the tool's trap", got)
	}
}

// The hook gets the tool name and the arguments JSON the tool gets, with
// errexit off and stdin at /dev/null.
func TestHookArgumentsAndEnvironment(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() {
  printf '%s\n%s\n' "$1" "$2" > "$MARKS/hook.args"
  local st=0
  IFS= read -r -t 2 _ || st=$?
  false
  printf 'read status %s, ran past false\n' "$st" > "$MARKS/hook.env"
}
tool_x() { printf '%s\n' "$1" > "$MARKS/tool.args"; }`,
		tools: ctHookTools,
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "x", `{ "n" : 7 }`), false, "")
	if got := ctRead(s, "tool.args"); got != "{\"n\":7}\n" {
		t.Errorf("tool args %q", got)
	}
	if got := ctRead(s, "hook.args"); got != "x\n{\"n\":7}\n" {
		t.Errorf("hook args %q", got)
	}
	if got := ctRead(s, "hook.env"); got != "read status 1, ran past false\n" {
		t.Errorf("hook environment: %q", got)
	}
}

// set and shopt options the hook turns on are undone before the tool.
func TestHookOptionsRestored(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() { set -euo pipefail; shopt -s nullglob; return 0; }
tool_x() {
  case $- in *e*) echo errexit-on;; *) echo errexit-off;; esac
  case $- in *u*) echo nounset-on;; *) echo nounset-off;; esac
  [[ -o pipefail ]] && echo pipefail-on || echo pipefail-off
  shopt -p nullglob
  local m=( "$MARKS"/no-such-* ); echo "matches=${#m[@]}"
  false
  echo "$UNSET_VARIABLE_CT" done
}`,
		tools: ctHookTools,
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "x", `{}`), false, "errexit-off\nnounset-off\npipefail-off\nshopt -u nullglob\nmatches=1\n done")
}

// The daemon's steps after the hook returns must not be diverted by
// functions the hook defines (rm, shopt, set, printf) nor by a PATH that
// names nothing: the options are still restored, the call still answers as
// a success or a refusal, and its directory is still removed.
func TestHookCannotDivertDaemonSteps(t *testing.T) {
	t.Run("functions", func(t *testing.T) {
		s := harness.Start(t, ctServer(t, ctOpt{
			script: `mcp_before_tool_call() {
  builtin shopt -s nullglob
  builtin set -u
  rm() { :; }
  shopt() { :; }
  set() { :; }
  printf() { :; }
  return 0
}
tool_x() {
  : > "$MARKS/tool.ran"
  builtin shopt -p nullglob
  [[ -o nounset ]] && echo nounset-on || echo nounset-off
}`,
			tools: ctHookTools,
		}))
		s.RoundTrip(harness.InitLine)
		ctWantText(t, s.Call(1, "x", `{}`), false, "shopt -u nullglob\nnounset-off")
		if !ctExists(s, "tool.ran") {
			t.Error("the tool did not run")
		}
		if left := ctCallRoots(s); len(left) != 0 {
			t.Errorf("call roots left: %v", left)
		}
	})
	t.Run("PATH names nothing", func(t *testing.T) {
		s := harness.Start(t, ctServer(t, ctOpt{
			script: `mcp_before_tool_call() { PATH=/nonexistent; [ "$2" = '{"n":3}' ] && { echo 'denied by policy'; return 3; }; return 0; }
tool_x() { : > "$MARKS/tool.ran"; echo done; }`,
			tools: ctHookTools,
		}))
		s.RoundTrip(harness.InitLine)
		ctWantText(t, s.Call(1, "x", `{}`), false, "done")
		os.Remove(filepath.Join(ctMarks(s), "tool.ran"))
		ctWantText(t, s.Call(2, "x", `{"n":3}`), true, "Error executing x: denied by policy")
		if ctExists(s, "tool.ran") {
			t.Error("the tool ran after a refusal")
		}
		if left := ctCallRoots(s); len(left) != 0 {
			t.Errorf("call roots left: %v", left)
		}
	})
}

// A hook that returns non-zero refuses the call with its output; the tool
// does not run; the log records a refusal (with the status), not a tool
// failure.
func TestHookRefusal(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() { printf 'denied by policy\n'; echo 'and why' >&2; printf '\n\n'; return 3; }
tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }`,
		tools: ctHookTools,
	}))
	s.RoundTrip(harness.InitLine)
	if got := s.RoundTrip(harness.CallLine(1, "x", `{}`)); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing x: denied by policy\nand why"}],"isError":true}}` {
		t.Errorf("got %s", got)
	}
	if ctExists(s, "tool.ran") {
		t.Error("the tool ran after a refusal")
	}
	s.CloseAndWait()
	if !ctLogHas(s.Log, func(rec map[string]any) bool {
		msg, _ := rec["msg"].(string)
		return strings.Contains(strings.ToLower(msg), "refus") && rec["tool"] == "x" && ctAnyValue(rec, 3)
	}) {
		b, _ := os.ReadFile(s.Log)
		t.Errorf("no log record of the refusal of tool x with status 3:\n%s", b)
	}
}

// A hook that ends the shell with exit (any status, 0 included) stops the
// call; its output, when it printed, follows the message.
func TestHookExit(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() {
  case $2 in
  *'"n":0'*) exit 0 ;;
  *'"n":4'*) printf 'X\n\n'; exit 4 ;;
  *'"n":5'*) echo 'to stderr' >&2; exit 5 ;;
  esac
}
tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }`,
		tools: ctHookTools,
	}))
	s.RoundTrip(harness.InitLine)
	const msg = "mcp_before_tool_call ended the call instead of returning; tool x did not run."
	ctWantText(t, s.Call(1, "x", `{"n":0}`), true, msg)
	ctWantText(t, s.Call(2, "x", `{"n":4}`), true, msg+"\nX")
	ctWantText(t, s.Call(3, "x", `{"n":5}`), true, msg+"\nto stderr")
	if ctExists(s, "tool.ran") {
		t.Error("the tool ran after the hook exited")
	}
	ctWantText(t, s.Call(4, "x", `{"n":1}`), false, "tool output")
	if left := ctCallRoots(s); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
}

// A hook killed by a signal stops the call naming the signal; with no hook
// defined (or a hook that returned), a tool that kills its own shell is
// the tool's failure, never the hook's.
func TestHookKilledBySignal(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() {
  case $1 in
  x) printf 'about to be killed\n'; kill -9 "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" ;;
  y) kill -TERM "${BASHPID:-$(exec sh -c 'echo "$PPID"')}" ;;
  esac
  return 0
}
tool_x() { : > "$MARKS/tool.ran"; }
tool_y() { : > "$MARKS/tool.ran"; }
tool_z() { kill -9 "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }`,
		tools: harness.ToolsJSON("x", "y", "z"),
	}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "x", `{}`), true, "mcp_before_tool_call was killed by signal 9; tool x did not run.")
	ctWantText(t, s.Call(2, "y", `{}`), true, "mcp_before_tool_call was killed by signal 15; tool y did not run.")
	if ctExists(s, "tool.ran") {
		t.Error("the tool ran after the hook was killed")
	}
	ctWantText(t, s.Call(3, "z", `{}`), true, "Error executing z: ")

	s2 := harness.Start(t, ctServer(t, ctOpt{script: `tool_z() { kill -9 "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }`, tools: harness.ToolsJSON("z")}))
	s2.RoundTrip(harness.InitLine)
	ctWantText(t, s2.Call(1, "z", `{}`), true, "Error executing z: ")
}

// Calls that are not dispatched — undeclared, invalid arguments, invalid
// name, no function — do not run the hook; an mcp_before_tool_call
// executable on PATH is never run as the hook.
func TestHookNotRunForUndispatchedCalls(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() { printf '%s\n' "$1" >> "$MARKS/hook.log"; }
tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }
tool_undeclared() { : > "$MARKS/undeclared.ran"; }`,
		tools: `{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}},{"name":"nofn","inputSchema":{"type":"object"}}]}`,
	}))
	s.RoundTrip(harness.InitLine)
	ctWantError(t, s.Call(1, "undeclared", `{}`), -32601, "Tool not found: undeclared")
	ctWantText(t, s.Call(2, "x", `{"n":"seven"}`), true, `Invalid type(s): n expected integer, got string ("seven").`)
	ctWantText(t, s.Call(3, "x", `null`), true, "Invalid arguments: expected a JSON object, got null.")
	ctWantError(t, s.Call(4, "a-b", `{}`), -32602, "Invalid tool name: a-b")
	ctWantError(t, s.Call(5, "nofn", `{}`), -32601, "Tool not found: nofn")
	if ctExists(s, "hook.log") || ctExists(s, "tool.ran") || ctExists(s, "undeclared.ran") {
		t.Error("the hook or a tool ran for a call that was not dispatched")
	}
	ctWantText(t, s.Call(6, "x", `{"n":1}`), false, "tool output")
	if got := ctRead(s, "hook.log"); got != "x\n" {
		t.Errorf("hook log %q", got)
	}

	bin := t.TempDir()
	marker := filepath.Join(bin, "path-hook.ran")
	if err := os.WriteFile(filepath.Join(bin, "mcp_before_tool_call"), []byte("#!/bin/sh\n: > "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s2 := harness.Start(t, ctServer(t, ctOpt{script: `tool_x() { printf 'tool output\n'; }`, tools: ctHookTools, env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}}))
	s2.RoundTrip(harness.InitLine)
	ctWantText(t, s2.Call(1, "x", `{}`), false, "tool output")
	if _, err := os.Stat(marker); err == nil {
		t.Error("an mcp_before_tool_call executable on PATH ran as the hook")
	}
}

// ctLogHas reports whether a JSON log record satisfies fn.
func ctLogHas(path string, fn func(map[string]any) bool) bool {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && fn(rec) {
			return true
		}
	}
	return false
}

// ctAnyValue reports whether some field of rec (other than the
// timestamp) is the number n, or a string saying "status n".
func ctAnyValue(rec map[string]any, n int) bool {
	for k, v := range rec {
		switch v := v.(type) {
		case float64:
			if k != "ts" && v == float64(n) {
				return true
			}
		case string:
			if strings.Contains(v, "status "+strconv.Itoa(n)) {
				return true
			}
		}
	}
	return false
}
