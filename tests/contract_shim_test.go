package tests

// The drop-in shim scripts/mcpserver_core.sh as servers and their own tests
// use it (shared/CONTRACT.md items 1, 10, 29–31): sourcing it is silent,
// the SDK's helpers log, create_response, create_error_response,
// read_json_file and _configure_extra_log_file keep their contract, a
// missing binary is refused with a clear message, and a drop-in server
// started as ./server.sh sees its own $0 and arguments. Mirrors the SDK's
// tests/{extra_log_file,error_response,read_json_file,core_standalone}.bats.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// ctShimEnv is the environment of a shim test: the test's own minus every
// MCP_* variable (a developer's MCP_LOG_STDERR must not leak in), plus
// MCP_BASHD and SHIM.
func ctShimEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MCP_") || strings.HasPrefix(kv, "PROJECT_ROOT=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "MCP_BASHD="+harness.Binary, "SHIM="+harness.RepoPath("scripts/mcpserver_core.sh"))
	return append(env, extra...)
}

// ctBash runs a bash script (with the shim at $SHIM) and returns its
// stdout, stderr and exit status.
func ctBash(t *testing.T, env []string, script string) (string, string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--noprofile", "--norc", "-c", script)
	cmd.Env = env
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// Sourcing the shim prints nothing, succeeds, leaves the caller's shopt
// options alone and turns on errexit, nounset and pipefail as the SDK's
// file did (issue 11 item 2), can be repeated, and sources no other file
// (mcp_arg, inside a call, sources the call's values file).
func TestShimSourcing(t *testing.T) {
	out, errOut, code := ctBash(t, ctShimEnv(), `set -euo pipefail; shopt -s nullglob
source "$SHIM"
source "$SHIM"
echo "status=$?"
[[ -o errexit && -o nounset && -o pipefail ]] && echo opts-kept
shopt -q nullglob && echo shopt-kept
for f in log create_response create_error_response read_json_file run_mcp_server; do
  declare -F "$f" >/dev/null || echo "missing $f"
done`)
	if code != 0 || out != "status=0\nopts-kept\nshopt-kept\n" || errOut != "" {
		t.Errorf("status %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	out, errOut, code = ctBash(t, ctShimEnv(), `source "$SHIM"; [[ -o errexit && -o nounset && -o pipefail ]] && echo sdk-options`)
	if code != 0 || out != "sdk-options\n" || errOut != "" {
		t.Errorf("sourcing in a shell without options: status %d stdout %q stderr %q", code, out, errOut)
	}
	body, err := os.ReadFile(harness.RepoPath("scripts/mcpserver_core.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The one file it sources is no file of its own: mcp_arg's values,
	// which the daemon writes for each call (supervisor/argvalues.go).
	for _, m := range regexp.MustCompile(`(?m)^[ \t]*(source|\.)[ \t]+.*$`).FindAll(body, -1) {
		if strings.TrimSpace(string(m)) != `. "$MCP_BASHD_ARGS"` {
			t.Errorf("the shim sources other files: %q", m)
		}
	}
}

// Sourcing the shim's stdout is empty (checked on its own: the protocol
// stream of a drop-in server starts right after it).
func TestShimSourcingStdoutEmpty(t *testing.T) {
	out, errOut, code := ctBash(t, ctShimEnv(), `source "$SHIM"`)
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("status %d stdout %q stderr %q", code, out, errOut)
	}
}

// log LEVEL MSG: "[YYYY-mm-dd HH:MM:SS] [LEVEL] msg" appended to
// MCP_LOG_FILE and MCP_EXTRA_LOG_FILE, mirrored to stderr only when
// MCP_LOG_STDERR is exactly 1; never stdout.
func TestShimLog(t *testing.T) {
	lineRE := regexp.MustCompile(`^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] \[INFO\] hello  world\n$`)
	checkLine := func(t *testing.T, what, s string) {
		t.Helper()
		m := lineRE.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("%s: %q does not match %s", what, s, lineRE)
			return
		}
		if _, err := time.ParseInLocation("2006-01-02 15:04:05", m[1], time.Local); err != nil {
			t.Errorf("%s: timestamp %q: %v", what, m[1], err)
		}
	}
	for _, c := range []struct {
		name, stderrVal string
		extra, mirror   bool
	}{
		{"default", "", false, false},
		{"extra file", "", true, false},
		{"stderr 1", "1", true, true},
		{"stderr 0", "0", false, false},
		{"stderr true", "true", false, false},
		{"stderr 2", "2", false, false},
		{"stderr empty", "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			logf, extra := filepath.Join(dir, "server.log"), filepath.Join(dir, "extra.log")
			env := ctShimEnv("MCP_LOG_FILE=" + logf)
			if c.extra {
				env = append(env, "MCP_EXTRA_LOG_FILE="+extra)
			}
			if c.stderrVal != "" || c.name == "stderr empty" {
				env = append(env, "MCP_LOG_STDERR="+c.stderrVal)
			}
			out, errOut, code := ctBash(t, env, `source "$SHIM"; log INFO "hello  world"; echo "rc=$?"`)
			if code != 0 || out != "rc=0\n" {
				t.Errorf("status %d stdout %q", code, out)
			}
			b, _ := os.ReadFile(logf)
			checkLine(t, "MCP_LOG_FILE", string(b))
			eb, err := os.ReadFile(extra)
			if c.extra {
				checkLine(t, "MCP_EXTRA_LOG_FILE", string(eb))
				if string(eb) != string(b) {
					t.Errorf("the two files differ: %q vs %q", b, eb)
				}
			} else if err == nil {
				t.Errorf("extra log written without MCP_EXTRA_LOG_FILE: %q", eb)
			}
			if c.mirror {
				checkLine(t, "stderr", errOut)
			} else if errOut != "" {
				t.Errorf("stderr without MCP_LOG_STDERR=1: %q", errOut)
			}
		})
	}
	t.Run("no MCP_LOG_FILE", func(t *testing.T) {
		dir := t.TempDir()
		out, errOut, code := ctBash(t, append(ctShimEnv(), "HOME="+dir), `cd "$HOME"; source "$SHIM"; log WARN "nowhere"; echo "rc=$?"; ls -A`)
		if code != 0 || out != "rc=0\n" || errOut != "" {
			t.Errorf("status %d stdout %q stderr %q", code, out, errOut)
		}
	})
}

// _configure_extra_log_file: empty is a no-op, a relative path resolves
// against PROJECT_ROOT, an absolute one is used as is, a missing parent
// logs a WARN and leaves the extra log off.
func TestShimConfigureExtraLogFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(dir, "server.log")
	env := ctShimEnv("MCP_LOG_FILE="+logf, "PROJECT_ROOT="+dir)
	out, errOut, code := ctBash(t, env, `source "$SHIM"
declare -F _configure_extra_log_file >/dev/null || { echo "no _configure_extra_log_file"; exit 3; }
MCP_EXTRA_LOG_FILE=""
_configure_extra_log_file ""; printf 'empty=[%s]\n' "$MCP_EXTRA_LOG_FILE"
_configure_extra_log_file "subdir/debug.log"; printf 'relative=[%s]\n' "$MCP_EXTRA_LOG_FILE"
log INFO "to both"
bash -c 'printf "exported=[%s]\n" "$MCP_EXTRA_LOG_FILE"'
MCP_EXTRA_LOG_FILE=""
_configure_extra_log_file "$PROJECT_ROOT/abs.log"; printf 'absolute=[%s]\n' "$MCP_EXTRA_LOG_FILE"
MCP_EXTRA_LOG_FILE=""
_configure_extra_log_file "nonexistent/debug.log"; printf 'missing=[%s] rc=%s\n' "$MCP_EXTRA_LOG_FILE" "$?"`)
	want := "empty=[]\nrelative=[" + dir + "/subdir/debug.log]\nexported=[" + dir + "/subdir/debug.log]\nabsolute=[" + dir + "/abs.log]\nmissing=[] rc=0\n"
	if code != 0 || out != want {
		t.Fatalf("status %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}
	b, _ := os.ReadFile(logf)
	if !regexp.MustCompile(`(?m)^\[[^]]+\] \[WARN\] .*log_file parent directory does not exist`).Match(b) {
		t.Errorf("no WARN for the missing parent in MCP_LOG_FILE:\n%s", b)
	}
	if eb, _ := os.ReadFile(filepath.Join(dir, "subdir", "debug.log")); !strings.Contains(string(eb), "] [INFO] to both") {
		t.Errorf("the configured extra log did not get the line: %q", eb)
	}
}

// create_response ID RESULT and create_error_response ID CODE MSG [DATA]:
// compact envelopes in the SDK's key order; an invalid data JSON fails.
func TestShimEnvelopes(t *testing.T) {
	for _, c := range []struct {
		name, call, out string
		fail            bool
	}{
		{"response", `create_response 1 '{"a":1}'`, `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, false},
		{"response string id, pretty result", `create_response '"7"' '{ "b" : [ 1, 2 ] }'`, `{"jsonrpc":"2.0","id":"7","result":{"b":[1,2]}}`, false},
		{"response big id", `create_response 9007199254740993 '{}'`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`, false},
		{"response invalid result", `create_response 1 '{not json'`, "", true},
		{"error without data", `create_error_response 1 -32602 "Invalid params"`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`, false},
		{"error empty data", `create_error_response 1 -32602 "Invalid params" ""`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`, false},
		{"error object data", `create_error_response 1 -32602 "Invalid params" '{"param":"age"}'`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"age"}}}`, false},
		{"error string data", `create_error_response 1 -32602 "Invalid params" '"details"'`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"details"}}`, false},
		{"error null id, quotes in message", `create_error_response null -32700 'Parse "error" <&>'`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse \"error\" <&>"}}`, false},
		{"error invalid data", `create_error_response 1 -32602 "Invalid params" '{not json'`, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, code := ctBash(t, ctShimEnv(), `source "$SHIM"; `+c.call)
			if c.fail {
				if code == 0 || out != "" {
					t.Errorf("want failure and no stdout, got status %d stdout %q", code, out)
				}
				return
			}
			if code != 0 || out != c.out+"\n" {
				t.Errorf("status %d\n got %q\nwant %q", code, out, c.out+"\n")
			}
		})
	}
}

// read_json_file: exactly one JSON object → compact print; anything else
// (missing, empty, two documents, unparseable, not an object, null,
// false) → status 1, nothing on stdout, the reason logged.
func TestShimReadJSONFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"one.json":   "{\n  \"a\": 1,\n  \"b\": [2, 3]\n}\n",
		"empty.json": "",
		"ws.json":    " \n",
		"two.json":   "{\"a\": 1}\n{\"b\": 2}\n",
		"bad.json":   "{ not json",
		"array.json": "[1]",
		"null.json":  "null",
		"false.json": "false",
		"str.json":   `"x"`,
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logf := filepath.Join(dir, "server.log")
	out, errOut, code := ctBash(t, ctShimEnv("MCP_LOG_FILE="+logf, "D="+dir), `source "$SHIM"; read_json_file "$D/one.json"`)
	if code != 0 || out != `{"a":1,"b":[2,3]}`+"\n" || errOut != "" {
		t.Errorf("one object: status %d stdout %q stderr %q", code, out, errOut)
	}
	for _, n := range []string{"absent.json", "empty.json", "ws.json", "two.json", "bad.json", "array.json", "null.json", "false.json", "str.json"} {
		os.Remove(logf)
		out, errOut, code := ctBash(t, ctShimEnv("MCP_LOG_FILE="+logf, "F="+filepath.Join(dir, n)), `source "$SHIM"; read_json_file "$F"`)
		if code != 1 || out != "" {
			t.Errorf("%s: want status 1 and no stdout, got status %d stdout %q stderr %q", n, code, out, errOut)
		}
		if b, _ := os.ReadFile(logf); !regexp.MustCompile(`(?m)^\[[^]]+\] \[ERROR\] .*` + regexp.QuoteMeta(n)).Match(b) {
			t.Errorf("%s: no ERROR log line naming the file: %q", n, b)
		}
	}
}

// Without the binary, sourcing says so on stderr with how to install it,
// fails, prints nothing on stdout and leaves the shell options alone (the
// SDK's preflight came before its set -euo pipefail); with set -e the
// script stops there.
func TestShimWithoutBinary(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	noBin := t.TempDir() // a PATH with no mcp-bashd on it
	base := func(extra ...string) []string {
		var env []string
		for _, kv := range ctShimEnv() {
			if strings.HasPrefix(kv, "MCP_BASHD=") || strings.HasPrefix(kv, "PATH=") {
				continue
			}
			env = append(env, kv)
		}
		return append(append(env, "PATH="+noBin), extra...)
	}
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"unset", base()},
		{"empty", base("MCP_BASHD=")},
		{"missing file", base("MCP_BASHD=" + filepath.Join(noBin, "no-such-mcp-bashd"))},
		{"a directory", base("MCP_BASHD=" + noBin)},
		{"not executable", base("MCP_BASHD=" + ctNonExecutable(t))},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bash, "--noprofile", "--norc", "-c", `source "$SHIM"; echo "after=$?"; [[ -o nounset || -o pipefail || -o errexit ]] && echo "options changed"`)
			cmd.Env = c.env
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			cmd.Run()
			if !strings.HasPrefix(out.String(), "after=") || out.String() == "after=0\n" || strings.Contains(out.String(), "options changed") {
				t.Errorf("sourcing succeeded or printed: stdout %q", out.String())
			}
			msg := errb.String()
			for _, want := range []string{"mcp-bashd", "MCP_BASHD"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q lacks %q", msg, want)
				}
			}
			if !strings.Contains(strings.ToLower(msg), "install") {
				t.Errorf("stderr %q does not say how to install", msg)
			}

			cmd = exec.Command(bash, "--noprofile", "--norc", "-c", `set -e; source "$SHIM"; echo reached`)
			cmd.Env = c.env
			out.Reset()
			cmd.Stdout, cmd.Stderr = &out, &bytes.Buffer{}
			err := cmd.Run()
			if err == nil || out.String() != "" {
				t.Errorf("under set -e: err %v stdout %q", err, out.String())
			}
		})
	}
}

func ctNonExecutable(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "mcp-bashd")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The shim parses with bash -n and in POSIX mode, and carries none of the
// bash ≥ 4 constructs a bash 3.2 parser (macOS /bin/bash) rejects or
// misreads — as far as a static scan of its code (comments removed) can
// tell.
func TestShimSyntax(t *testing.T) {
	shim := harness.RepoPath("scripts/mcpserver_core.sh")
	for _, args := range [][]string{{"-n", shim}, {"--posix", "-n", shim}} {
		out, err := exec.Command("bash", args...).CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("bash %v: %v %s", args, err, out)
		}
	}
	body, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		code = append(code, l)
	}
	src := strings.Join(code, "\n")
	for _, c := range []struct{ what, re string }{
		{"associative arrays", `\b(declare|local|typeset)\s+-[a-zA-Z]*A`},
		{"namerefs", `\b(declare|local|typeset)\s+-[a-zA-Z]*n\b`},
		{"declare -g", `\bdeclare\s+-[a-zA-Z]*g`},
		{"mapfile/readarray", `\b(mapfile|readarray)\b`},
		{"case conversion", `\$\{[^}]*(,,|\^\^)`},
		{"@ transformations", `\$\{[^}]*@[QEPAaUuLK]\}`},
		{"&>> and |&", `&>>|\|&`},
		{"coproc", `\bcoproc\b`},
		{"{var} redirections", `\{[A-Za-z_][A-Za-z0-9_]*\}[<>]`},
		{"[[ -v", `\[\[\s+-v\b`},
		{";;& and ;&", `;;&|;&`},
		{"negative subscripts", `\[\s*-[0-9]+\s*\]\}`},
		{"wait -n", `\bwait\s+-n\b`},
		{"globstar/lastpipe", `\b(globstar|lastpipe)\b`},
		{"EPOCH/BASHPID variables", `\$\{?(EPOCHSECONDS|EPOCHREALTIME|BASHPID|SRANDOM)\b`},
	} {
		if m := regexp.MustCompile(`(?m)`+c.re).FindAllString(src, -1); len(m) != 0 {
			t.Errorf("bash 4+ construct (%s): %q", c.what, m)
		}
	}
}

// A drop-in server run as ./server.sh a b: the script's $0 and arguments
// are what its top level saw and what each call's $0/$@ hold; errexit set
// by the script is off in the tool; stdin is /dev/null.
func TestDropInScriptArguments(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(tools, []byte(harness.ToolsJSON("who")), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "server.sh")
	body := `#!/usr/bin/env bash
set -euo pipefail
export MCP_TOOLS_LIST_FILE="` + tools + `"
TOP0=$0
TOP_ARGS=("$@")
source "$SHIM"
tool_who() {
  printf 'zero=%s\n' "$0"
  printf 'top0=%s\n' "$TOP0"
  printf 'args='; printf '%s|' "${TOP_ARGS[@]}"; echo
  false
  [[ -o errexit ]] && echo errexit-on || echo errexit-off
  read -r line; printf 'read=%s\n' "$?"
}
run_mcp_server
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"a b", "", "--ct-marker=1", "x\ny"}
	want := func(zero, top0 string) string {
		return "zero=" + zero + "\ntop0=" + top0 + "\nargs=a b||--ct-marker=1|x\ny|\nerrexit-off\nread=1"
	}
	env := []string{"MCP_BASHD=" + harness.Binary, "SHIM=" + harness.RepoPath("scripts/mcpserver_core.sh"), "TMPDIR=" + t.TempDir()}

	t.Run("./server.sh", func(t *testing.T) {
		s := harness.Exec(t, script, args, env)
		s.RoundTrip(harness.InitLine)
		ctWantText(t, harness.Parse(t, s.RoundTrip(harness.CallLine(1, "who", `{}`))), false, want(script, script))
	})
	t.Run("bash server.sh", func(t *testing.T) {
		s := harness.Exec(t, "bash", append([]string{script}, args...), env)
		s.RoundTrip(harness.InitLine)
		ctWantText(t, harness.Parse(t, s.RoundTrip(harness.CallLine(1, "who", `{}`))), false, want(script, script))
	})
	t.Run("relative ./server.sh", func(t *testing.T) {
		s := harness.Start(t, harness.Options{Exe: "./server.sh", Args: append([]string{}, args...), WorkDir: dir, Env: env})
		s.RoundTrip(harness.InitLine)
		txt, isErr := harness.Parse(t, s.RoundTrip(harness.CallLine(1, "who", `{}`))).Text(t)
		lines := strings.SplitN(txt, "\n", 3)
		if isErr || len(lines) != 3 {
			t.Fatalf("isError=%v %q", isErr, txt)
		}
		zero := strings.TrimPrefix(lines[0], "zero=")
		if !filepath.IsAbs(zero) {
			zero = filepath.Join(dir, zero)
		}
		if zero != script {
			t.Errorf("$0 in the tool %q does not name %s", lines[0], script)
		}
		if lines[1] != "top0=./server.sh" || lines[2] != "args=a b||--ct-marker=1|x\ny|\nerrexit-off\nread=1" {
			t.Errorf("got %q", txt)
		}
	})
}
