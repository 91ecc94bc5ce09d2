// Contract items 15, 16 and 18 of the bash SDK: what a call sees (top-level
// state, result shaping, output cap) and its per-call directory.

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// ---------------------------------------------------------------- 15, 16

// The script's top level runs once; every call sees its functions,
// variables with their attributes, shell options and EXIT-free state;
// errexit is off; stdin is /dev/null; $0 is the script.
func TestTopLevelStateReachesEveryCall(t *testing.T) {
	script := `set -euo pipefail
shopt -s extglob nullglob
declare -a ARR=(one "two words" three)
declare -A MAP=([k1]=v1 ["k 2"]="v 2")
declare -r RO=readonly-value
declare -i NUM=40
NUM+=2
export EXP=exported
PLAIN="plain $((6*7))"
TOP0=$0
TOP_ARGS=("$@")
LOADS=$(( $(cat "$MARKS/loads" 2>/dev/null || echo 0) + 1 ))
echo "$LOADS" > "$MARKS/loads"
top_fn() { printf 'top fn %s\n' "$1"; }
tool_state() {
  printf 'arr=%s|%s\n' "${ARR[1]}" "${#ARR[@]}"
  printf 'map=%s|%s|%s\n' "${MAP[k1]}" "${MAP[k 2]}" "${#MAP[@]}"
  printf 'ro=%s\n' "$RO"
  ( RO=changed ) 2>/dev/null && echo ro-writable || echo ro-readonly
  printf 'num=%s\n' "$NUM"
  NUM="1+1"; printf 'num-int=%s\n' "$NUM"
  printf 'plain=%s\n' "$PLAIN"
  printf 'child=%s\n' "$(bash -c 'printf %s "${EXP-unset}"')"
  top_fn arg
  [[ -o errexit ]] && echo errexit-on || echo errexit-off
  [[ -o nounset ]] && echo nounset-on || echo nounset-off
  [[ -o pipefail ]] && echo pipefail-on || echo pipefail-off
  shopt -p extglob nullglob
  false
  echo survived-false
  printf 'stdin=%s\n' "$(readlink /proc/self/fd/0)"
  read -r line; printf 'read=%s\n' "$?"
  printf 'zero=%s\n' "$0"
  printf 'top0=%s\n' "$TOP0"
  printf 'args='; printf '%s|' "${TOP_ARGS[@]}"; echo
}`
	s := harness.Start(t, ctServer(t, ctOpt{script: script, tools: harness.ToolsJSON("state"), scriptArgs: []string{"a b", "", "--ct-marker"}}))
	s.RoundTrip(harness.InitLine)
	scriptPath := filepath.Join(s.Dir, "server.sh")
	want := strings.Join([]string{
		"arr=two words|3",
		"map=v1|v 2|2",
		"ro=readonly-value",
		"ro-readonly",
		"num=42",
		"num-int=2",
		"plain=plain 42",
		"child=exported",
		"top fn arg",
		"errexit-off",
		"nounset-on",
		"pipefail-on",
		"shopt -s extglob",
		"shopt -s nullglob",
		"survived-false",
		"stdin=/dev/null",
		"read=1",
		"zero=" + scriptPath,
		"top0=" + scriptPath,
		"args=a b||--ct-marker|",
	}, "\n")
	for i := 1; i <= 2; i++ {
		got, isErr := s.Call(i, "state", `{}`).Text(t)
		if isErr || got != want {
			t.Errorf("call %d:\n got (isError=%v)\n%s\nwant\n%s", i, isErr, got, want)
		}
	}
	if got := strings.TrimSpace(ctRead(s, "loads")); got != "1" {
		t.Errorf("the top level ran %s times, want once", got)
	}
}

// A script in POSIX mode still serves, and its tools run in POSIX mode.
func TestPosixModeScriptServes(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{script: `set -o posix
tool_x() { [ -o posix ] && echo posix-on || echo posix-off; false; echo after-false; }`, tools: harness.ToolsJSON("x")}))
	s.RoundTrip(harness.InitLine)
	ctWantText(t, s.Call(1, "x", `{}`), false, "posix-on\nafter-false")
}

// Result shaping: stdout+stderr in one text, every trailing newline
// stripped, a non-zero status or a signal is "Error executing <name>: ",
// the tool's EXIT trap output joins the text.
func TestResultShaping(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `tool_merge() { echo out; echo err >&2; echo out2; printf '\n\n\n'; }
tool_inner_blank() { printf 'a\n\n\nb\n\n'; }
tool_fail() { echo "bad thing" >&2; printf '\n'; return 3; }
tool_fail_silent() { return 1; }
tool_killed() { kill -9 "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }
tool_termed() { kill -TERM "${BASHPID:-$(exec sh -c 'echo "$PPID"')}"; }
tool_trap() { trap 'printf "trap output\n"' EXIT; printf 'body output\n'; }
tool_exit_trap_fail() { trap 'echo cleanup' EXIT; echo body; exit 5; }
tool_empty() { :; }
tool_cr() { printf 'x\r\n'; }`,
		tools: harness.ToolsJSON("merge", "inner_blank", "fail", "fail_silent", "killed", "termed", "trap", "exit_trap_fail", "empty", "cr"),
	}))
	s.RoundTrip(harness.InitLine)
	if got := s.RoundTrip(harness.CallLine(1, "merge", `{}`)); got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"out\nerr\nout2"}],"isError":false}}` {
		t.Errorf("merge: %s", got)
	}
	ctWantText(t, s.Call(2, "inner_blank", `{}`), false, "a\n\n\nb")
	ctWantText(t, s.Call(3, "fail", `{}`), true, "Error executing fail: bad thing")
	ctWantText(t, s.Call(4, "fail_silent", `{}`), true, "Error executing fail_silent: ")
	ctWantText(t, s.Call(5, "killed", `{}`), true, "Error executing killed: ")
	ctWantText(t, s.Call(6, "termed", `{}`), true, "Error executing termed: ")
	ctWantText(t, s.Call(7, "trap", `{}`), false, "body output\ntrap output")
	ctWantText(t, s.Call(8, "exit_trap_fail", `{}`), true, "Error executing exit_trap_fail: body\ncleanup")
	ctWantText(t, s.Call(9, "empty", `{}`), false, "")
	ctWantText(t, s.Call(10, "cr", `{}`), false, "x\r")
}

// Output past --output-cap is cut and the cut is marked.
func TestOutputCap(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		flags: []string{"--output-cap", "100"},
		script: `tool_big() { local i; for ((i = 0; i < 1000; i++)); do printf a; done; echo; } 
tool_big_fail() { local i; for ((i = 0; i < 1000; i++)); do printf b; done; return 2; }
tool_small() { printf '%0100d\n' 0; }`,
		tools: harness.ToolsJSON("big", "big_fail", "small"),
	}))
	s.RoundTrip(harness.InitLine)
	for i, c := range []struct {
		tool, ch, prefix string
		isErr            bool
	}{{"big", "a", "", false}, {"big_fail", "b", "Error executing big_fail: ", true}} {
		txt, isErr := s.Call(i+1, c.tool, `{}`).Text(t)
		if isErr != c.isErr {
			t.Errorf("%s: isError=%v", c.tool, isErr)
		}
		body := strings.TrimPrefix(txt, c.prefix)
		if !strings.HasPrefix(body, strings.Repeat(c.ch, 100)) || strings.HasPrefix(body, strings.Repeat(c.ch, 101)) {
			t.Errorf("%s: want exactly the first 100 bytes kept, got %q", c.tool, txt)
		}
		marker := body[100:]
		if !strings.Contains(marker, "truncated") || !strings.Contains(marker, "more bytes") {
			t.Errorf("%s: no truncation marker after the kept output: %q", c.tool, marker)
		}
	}
	// Exactly at the cap (100 digits + a newline = 101 bytes: one over).
	txt, _ := s.Call(3, "small", `{}`).Text(t)
	if !strings.HasPrefix(txt, strings.Repeat("0", 100)) {
		t.Errorf("small: %q", txt)
	}
}

// ---------------------------------------------------------------- 18

// MCP_CALL_TMPDIR: <TMPDIR>/mcp-call.XXXXXX/tmp, both mode 0700, empty,
// distinct per call, the same for hook, tool and children, removed after.
func TestCallTmpdirShape(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		script: `mcp_before_tool_call() { printf '%s' "$MCP_CALL_TMPDIR" > "$MARKS/hook.$2"; }
tool_probe() {
  printf '%s\n' "$MCP_CALL_TMPDIR"
  stat -c '%a' "$MCP_CALL_TMPDIR" "${MCP_CALL_TMPDIR%/*}"
  [ -z "$(ls -A "$MCP_CALL_TMPDIR")" ] && echo empty || echo not-empty
  : > "$MCP_CALL_TMPDIR/probe" && echo writable
  bash -c 'printf "child %s\n" "$MCP_CALL_TMPDIR"'
  printf '%s\n' "$MCP_CALL_TMPDIR" > "$MARKS/tool.$1"
}`,
		tools: harness.ToolsJSON("probe"),
	}))
	s.RoundTrip(harness.InitLine)
	var dirs []string
	for i := 1; i <= 2; i++ {
		txt, isErr := s.Call(i, "probe", fmt.Sprintf(`{"n":%d}`, i)).Text(t)
		lines := strings.Split(txt, "\n")
		if isErr || len(lines) != 6 {
			t.Fatalf("call %d: isError=%v\n%s", i, isErr, txt)
		}
		dir := lines[0]
		dirs = append(dirs, dir)
		if filepath.Base(dir) != "tmp" || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "mcp-call.") || filepath.Dir(filepath.Dir(dir)) != s.Tmp {
			t.Errorf("call %d: MCP_CALL_TMPDIR %q is not %s/mcp-call.*/tmp", i, dir, s.Tmp)
		}
		if lines[1] != "700" || lines[2] != "700" {
			t.Errorf("call %d: modes tmp=%s root=%s, want 700 and 700", i, lines[1], lines[2])
		}
		if lines[3] != "empty" || lines[4] != "writable" {
			t.Errorf("call %d: %q %q", i, lines[3], lines[4])
		}
		if lines[5] != "child "+dir {
			t.Errorf("call %d: a child saw %q, the tool %q", i, lines[5], dir)
		}
		if hook := ctRead(s, fmt.Sprintf(`hook.{"n":%d}`, i)); hook != dir {
			t.Errorf("call %d: the hook saw %q, the tool %q", i, hook, dir)
		}
		if _, err := os.Lstat(filepath.Dir(dir)); err == nil {
			t.Errorf("call %d: call root %s still exists after the response", i, filepath.Dir(dir))
		}
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two calls shared %s", dirs[0])
	}
	if left := ctCallRoots(s); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
}

// A relative TMPDIR still gives an absolute MCP_CALL_TMPDIR, also when
// the hook changes directory, and the root is removed.
func TestCallTmpdirRelativeTMPDIR(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		relTMPDIR: true,
		script: `mcp_before_tool_call() { cd / || return 1; }
tool_x() {
  if [[ $MCP_CALL_TMPDIR == /* && -d $MCP_CALL_TMPDIR ]]; then printf 'absolute and present %s\n' "$MCP_CALL_TMPDIR"; else printf 'not usable: %s\n' "$MCP_CALL_TMPDIR"; fi
}`,
		tools: harness.ToolsJSON("x"),
	}))
	s.RoundTrip(harness.InitLine)
	txt, isErr := s.Call(1, "x", `{}`).Text(t)
	dir := strings.TrimPrefix(txt, "absolute and present ")
	if isErr || dir == txt {
		t.Fatalf("isError=%v %q", isErr, txt)
	}
	if filepath.Dir(filepath.Dir(dir)) != s.Tmp {
		t.Errorf("MCP_CALL_TMPDIR %q is not under %s", dir, s.Tmp)
	}
	if left := ctCallRoots(s); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
}

// The call root is removed however the tool left it — a mode 000 nested
// directory, a read-only directory with a file, MCP_CALL_TMPDIR itself at
// mode 000 — without following a symlink out of it and without a warning.
// As root the daemon runs as nobody, so the modes bind as for a user.
func TestCallTmpdirRemoval(t *testing.T) {
	var outside string
	s := harness.Start(t, ctServer(t, ctOpt{
		unprivileged: true,
		prepare: func(t *testing.T, base string, cred *syscall.Credential) []string {
			outside = filepath.Join(base, "outside")
			ctMkdir(t, outside, cred)
			ctWrite(t, filepath.Join(outside, "keep"), "keep me\n", 0o644, cred)
			if err := os.Chmod(outside, 0o555); err != nil {
				t.Fatal(err)
			}
			return []string{"OUTSIDE=" + outside}
		},
		script: `tool_nested() {
  mkdir -p "$MCP_CALL_TMPDIR/nested" && printf 'scratch\n' > "$MCP_CALL_TMPDIR/nested/file"
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_fail() { printf 'scratch\n' > "$MCP_CALL_TMPDIR/file"; printf '%s\n' "$MCP_CALL_TMPDIR"; return 4; }
tool_ro() {
  mkdir "$MCP_CALL_TMPDIR/ro" && printf 'scratch\n' > "$MCP_CALL_TMPDIR/ro/file" && chmod 555 "$MCP_CALL_TMPDIR/ro" || return 9
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_locked() {
  mkdir -p "$MCP_CALL_TMPDIR/locked/inner" && printf 'scratch\n' > "$MCP_CALL_TMPDIR/locked/inner/file" || return 9
  chmod 000 "$MCP_CALL_TMPDIR/locked/inner" && chmod 000 "$MCP_CALL_TMPDIR/locked" || return 9
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_self_locked() { printf 'scratch\n' > "$MCP_CALL_TMPDIR/file" && chmod 000 "$MCP_CALL_TMPDIR" || return 9; printf '%s\n' "$MCP_CALL_TMPDIR"; }
tool_links() {
  ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR/link" && ln -s "$OUTSIDE/keep" "$MCP_CALL_TMPDIR/filelink" || return 9
  mkdir "$MCP_CALL_TMPDIR/ro" && ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR/ro/link" && chmod 555 "$MCP_CALL_TMPDIR/ro" || return 9
  mkdir "$MCP_CALL_TMPDIR/zero" && ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR/zero/link" && chmod 000 "$MCP_CALL_TMPDIR/zero" || return 9
  printf '%s\n' "$MCP_CALL_TMPDIR"
}
tool_swap() { rm -rf "$MCP_CALL_TMPDIR" && ln -s "$OUTSIDE" "$MCP_CALL_TMPDIR" || return 9; printf '%s\n' "$MCP_CALL_TMPDIR"; }
tool_uid() { id -u; }`,
		tools: harness.ToolsJSON("nested", "fail", "ro", "locked", "self_locked", "links", "swap", "uid"),
	}))
	s.RoundTrip(harness.InitLine)
	if uid, _ := s.Call(100, "uid", `{}`).Text(t); uid == "0" {
		t.Fatal("tools run as root: the modes would not bind")
	}
	for i, tool := range []string{"nested", "fail", "ro", "locked", "self_locked", "links", "swap"} {
		txt, isErr := s.Call(i+1, tool, `{}`).Text(t)
		dir := txt
		if tool == "fail" {
			dir = strings.TrimPrefix(txt, "Error executing fail: ")
			if !isErr || dir == txt {
				t.Errorf("fail: want isError with the directory, got isError=%v %q", isErr, txt)
			}
		} else if isErr {
			t.Errorf("%s: isError %q", tool, txt)
			continue
		}
		if filepath.Dir(filepath.Dir(dir)) != s.Tmp {
			t.Errorf("%s: %q is not a call directory under %s", tool, dir, s.Tmp)
			continue
		}
		if _, err := os.Lstat(filepath.Dir(dir)); err == nil {
			t.Errorf("%s: call root %s left behind", tool, filepath.Dir(dir))
		}
		fi, err := os.Stat(outside)
		if err != nil || fi.Mode().Perm() != 0o555 {
			t.Fatalf("%s: the directory outside the call was changed: %v %v", tool, fi.Mode(), err)
		}
		if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "keep me\n" {
			t.Fatalf("%s: the file outside the call was changed: %q %v", tool, b, err)
		}
	}
	if left := ctCallRoots(s); len(left) != 0 {
		t.Errorf("call roots left: %v", left)
	}
	if w := ctWarnings(s); len(w) != 0 {
		t.Errorf("removal logged warnings:\n%s", strings.Join(w, "\n"))
	}
}

// A call whose directory cannot be created answers isError with the SDK's
// text, runs nothing, leaves nothing, and the server keeps serving: TMPDIR
// replaced by a regular file, and TMPDIR made unwritable, mid-run.
func TestCallTmpdirCreationFailure(t *testing.T) {
	const script = `mcp_before_tool_call() { : > "$MARKS/hook.ran"; }
tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }`
	t.Run("TMPDIR is a regular file", func(t *testing.T) {
		s := harness.Start(t, ctServer(t, ctOpt{script: script, tools: harness.ToolsJSON("x")}))
		s.RoundTrip(harness.InitLine)
		ctWantText(t, s.Call(1, "x", `{}`), false, "tool output")
		os.Remove(filepath.Join(ctMarks(s), "hook.ran"))
		os.Remove(filepath.Join(ctMarks(s), "tool.ran"))
		if err := os.Rename(s.Tmp, s.Tmp+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Tmp, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		before := ctListDir(t, s.Cmd.Dir)
		if got := s.RoundTrip(harness.CallLine(2, "x", `{}`)); got != `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Cannot run x: its call directory could not be created."}],"isError":true}}` {
			t.Errorf("got %s", got)
		}
		if ctExists(s, "hook.ran") || ctExists(s, "tool.ran") {
			t.Error("the hook or the tool ran without a call directory")
		}
		if after := ctListDir(t, s.Cmd.Dir); after != before {
			t.Errorf("files appeared beside TMPDIR:\nbefore %s\nafter  %s", before, after)
		}
		if m, _ := filepath.Glob(filepath.Join(s.Tmp+".moved", "mcp-call.*")); len(m) != 0 {
			t.Errorf("call roots left: %v", m)
		}
		if got := s.RoundTrip(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
			t.Errorf("ping: %s", got)
		}
	})
	t.Run("TMPDIR not writable", func(t *testing.T) {
		s := harness.Start(t, ctServer(t, ctOpt{script: script, tools: harness.ToolsJSON("x"), unprivileged: true}))
		s.RoundTrip(harness.InitLine)
		if os.Getuid() == 0 && ctCred(s) == nil {
			t.Fatal("running as root without dropping privileges")
		}
		if err := os.Chmod(s.Tmp, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(s.Tmp, 0o755)
		ctWantText(t, s.Call(1, "x", `{}`), true, "Cannot run x: its call directory could not be created.")
		if ctExists(s, "hook.ran") || ctExists(s, "tool.ran") {
			t.Error("the hook or the tool ran without a call directory")
		}
		os.Chmod(s.Tmp, 0o755)
		ctWantText(t, s.Call(2, "x", `{}`), false, "tool output")
	})
}

// TMPDIR that does not exist when the daemon starts: the SDK's server
// starts and answers each call with the creation-failure result; the
// server itself must not refuse to serve.
func TestCallTmpdirMissingAtStart(t *testing.T) {
	s := harness.Start(t, ctServer(t, ctOpt{
		tmpdir: "no-such-dir",
		script: `tool_x() { : > "$MARKS/tool.ran"; printf 'tool output\n'; }`,
		tools:  harness.ToolsJSON("x"),
	}))
	s.Send(harness.InitLine)
	select {
	case line, ok := <-s.Lines:
		if !ok {
			<-s.Done
			t.Fatalf("the daemon exited (%v) instead of serving with TMPDIR missing; stderr:\n%s", s.WaitErr, s.Stderr.String())
		}
		s.Check(line)
	case <-time.After(time.Until(harness.Deadline(t))):
		t.Fatal("no initialize response")
	}
	ctWantText(t, s.Call(1, "x", `{}`), true, "Cannot run x: its call directory could not be created.")
	if ctExists(s, "tool.ran") {
		t.Error("the tool ran")
	}
}

func ctListDir(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
