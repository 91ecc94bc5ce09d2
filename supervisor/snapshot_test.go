package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

// A dump as the shim writes it, with what bash before 5.2 prints for a
// value holding newlines, and lines that look like the format's own inside
// a value and inside a function body.
const handDump = `# mcp-bashd snapshot v1
#fn log
#fn tool_a
#fn f
{
declare -x FOO="bar"
declare -x CHANGED="new"
declare -x Q="x\"y"
declare -x L="line1
declare -x FOO=\"bar\"
#shim /not/the/shim.sh
line3"
declare -- PLAIN="1"
#shim /s.sh
#def log 3 /s.sh
log () 
{ 
    echo shim log
}
#def tool_a 9 /my file.sh
tool_a () 
{ 
    echo a
}
#def f 20 /my file.sh
f () 
{ 
    cat <<EOT
declare -x FOO="bar"
}
EOT

}
} 2>/dev/null
__mcpbashd_options() {
shopt -u extglob
shopt -s nullglob
set +o posix
set -o errexit
shopt -u sourcepath
}
__mcpbashd_exit_trap() {
:
trap -- 'echo "bye
}"' EXIT
}
builtin cd -- /x 2>/dev/null
`

func TestTrimSnapshotOnePass(t *testing.T) {
	out, fns, err := trimSnapshot([]byte(handDump), []string{"FOO=bar", "CHANGED=old", `Q=x"y`, "L=line1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"log": true, "tool_a": true, "f": true}; !reflect.DeepEqual(fns, want) {
		t.Errorf("functions %v, want %v", fns, want)
	}
	got := string(out)
	for _, c := range []struct {
		line string
		n    int
		why  string
	}{
		{`declare -x FOO="bar"`, 1, "the variable the environment gives is dropped; the here-document line in f is not"},
		{`declare -x CHANGED="new"`, 1, "a changed export stays"},
		{`declare -x Q="x\"y"`, 0, "an escaped value equal to the environment's is dropped"},
		{`declare -x FOO=\"bar\"`, 1, "a line of a multi-line value is not a declare line"},
		{`#shim /not/the/shim.sh`, 1, "a line of a multi-line value is not the #shim line"},
		{`log () { __mcpbashd_load log "$@"; }`, 1, "the shim's function becomes a stub"},
		{`__mcpbashd_load () { __mcpbashd_lazy=1; builtin . "$__mcpbashd_shim_file"; builtin unset __mcpbashd_lazy; "$@"; }`, 1, "one loader for the stubs"},
		{`    echo shim log`, 0, "the stubbed body is gone"},
		{`    echo a`, 1, "a function of another file stays"},
		{"}\nEOT", 1, "a here-document's } line does not end f"},
		{`shopt -u extglob`, 0, "turning off an option that is off by default is dropped"},
		{`set +o posix`, 0, "turning off an option that is off by default is dropped"},
		{`shopt -u sourcepath`, 1, "sourcepath may be on in a fresh bash"},
		{`shopt -s nullglob`, 1, "turning an option on stays"},
		{`set -o errexit`, 1, "turning an option on stays"},
		{"__mcpbashd_options() {\n:\n", 1, "the options function opens with a :"},
		{"__mcpbashd_exit_trap() {\n:\ntrap", 1, "the trap function keeps one :"},
		{"trap -- 'echo \"bye\n}\"' EXIT\n}\nbuiltin cd -- /x 2>/dev/null\n", 1, "the trap and the cd line are kept as written"},
	} {
		if n := strings.Count(got, c.line); n != c.n {
			t.Errorf("%q appears %d times, want %d: %s", c.line, n, c.n, c.why)
		}
	}
	if t.Failed() {
		t.Logf("trimmed:\n%s", got)
	}
	// The writer and the pass agree on the format: trimming a trimmed file
	// or the empty snapshot changes nothing.
	again, _, err := trimSnapshot(out, nil)
	if err != nil || string(again) != got {
		t.Errorf("trimming the trimmed file again changed it (%v):\n%s", err, again)
	}
	empty, fns, err := trimSnapshot(emptySnapshot(), nil)
	if err != nil || string(empty) != string(emptySnapshot()) || len(fns) != 0 {
		t.Errorf("the empty snapshot is not a fixed point of the pass (%v, %v):\n%s", err, fns, empty)
	}
	if _, _, err := trimSnapshot([]byte("#!/bin/bash\necho hi\n"), nil); err != errNotSnapshot {
		t.Errorf("a file without the header: %v", err)
	}
}

// The trimmed snapshot must restore the same shell as the shim's dump: the
// same variables, functions, options and EXIT trap, as real bash sees them.
func TestTrimmedSnapshotRestoresTheSameShell(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "mcpserver_core.sh")
	script := filepath.Join(dir, "server.sh")
	write(t, shim, scripts.Shim)
	write(t, script, `
export KEPT=from-env CHANGED=from-script
MULTI=$'one\ntwo }\ndeclare -x KEPT="from-env"'
declare -A MAP=([k]=$'v\n}' [x]=1)
shopt -s extglob nullglob
set -uo pipefail
log() { echo "the script's own log: $*"; }
heredoc() { cat <<EOT
declare -x KEPT="from-env"
}
EOT
}
trap 'echo "bye
}"' EXIT
`)
	env := []string{"PATH=" + os.Getenv("PATH"), "KEPT=from-env", "CHANGED=from-env", "MCP_BASHD=/bin/true"}
	raw := filepath.Join(dir, "raw.sh")
	load := exec.Command(bash, "--noprofile", "--norc", "-c", `. "$1"; . "$2"; run_mcp_server`, "load", shim, script)
	load.Env = append(env, "__MCPBASHD_SNAPSHOT_OUT="+raw)
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("dump: %v: %s", err, out)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	trimmed, fns, err := trimSnapshot(data, env)
	if err != nil {
		t.Fatal(err)
	}
	if !fns["heredoc"] || !fns["log"] || !fns["mcp_text"] || !fns["run_mcp_server"] {
		t.Errorf("functions from the header: %v", fns)
	}
	if len(trimmed) >= len(data) {
		t.Errorf("nothing trimmed (%d bytes, dump %d)", len(trimmed), len(data))
	}
	cut := filepath.Join(dir, "trimmed.sh")
	write(t, cut, string(trimmed))
	state := func(file string) string {
		t.Helper()
		cmd := exec.Command(bash, "--noprofile", "--norc", "-c", `__mcpbashd_shim_file=$1; . "$2"
{ __mcpbashd_options; } 2>/dev/null
declare -p KEPT CHANGED MULTI MAP
heredoc; log a b; __mcpbashd_esc "$MULTI"; echo "$__mcpbashd_e"
shopt -p; set +o
__mcpbashd_exit_trap; trap -p EXIT; trap - EXIT`, "state", shim, file)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sourcing %s: %v: %s", file, err, out)
		}
		return string(out)
	}
	if a, b := state(raw), state(cut); a != b {
		t.Errorf("the trimmed snapshot restores another shell.\nfrom the dump:\n%s\nfrom the trimmed file:\n%s", a, b)
	}
}

// The empty snapshot is one bash sources and whose functions it calls.
func TestEmptySnapshotSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "empty.sh")
	write(t, file, string(emptySnapshot()))
	out, err := exec.Command("bash", "--noprofile", "--norc", "-c", `. "$1" && __mcpbashd_options && __mcpbashd_exit_trap`, "empty", file).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("sourcing the empty snapshot: %v: %s", err, out)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
