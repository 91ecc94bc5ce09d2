package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

// What the shim's #rdwr line is under bash before 5.3 and from 5.3 on.
const (
	rdwrBefore53 = "#rdwr __mcpbashd_p ()  {      : <> /dev/null }"
	rdwrFrom53   = "#rdwr __mcpbashd_p ()  {      : 1<> /dev/null }"
)

// rdwrDump is a dump with one function f whose printed body is body, the
// #rdwr line probe ("" for none) and a shim function after it.
func rdwrDump(probe, body string) string {
	head := snapHeader + "\n"
	if probe != "" {
		head += probe + "\n"
	}
	return head + "#fn f\n{\n#shim /s.sh\n#def f 1 /x.sh\nf () \n{ \n" + body + "\n}\n" +
		"#def log 3 /s.sh\nlog () \n{ \n    echo x <> f\n}\n} 2>/dev/null\n" +
		"__mcpbashd_options() {\n}\n__mcpbashd_exit_trap() {\n:\n}\n"
}

// trimmedBody is the body of f in the trimmed dump.
func trimmedBody(t *testing.T, dump string) string {
	t.Helper()
	out, _, err := trimSnapshot([]byte(dump), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(out), "f () \n{ \n")
	// The shim's functions follow f as stubs (after their one loader).
	body, _, ok := strings.Cut(rest, "\n}\n__mcpbashd_load () {")
	if !ok {
		body, _, ok = strings.Cut(rest, "\n}\nlog () {")
	}
	if !ok {
		t.Fatalf("f or the stub of log is missing:\n%s", out)
	}
	return body
}

func TestRdwrRestoresFd1(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
	}{
		{"the quirk", "    echo x <> file", "    echo x 1<> file"},
		{"several on one line", `    echo a <> f 0<> g <> "h i" 2<> j <> k`, `    echo a 1<> f 0<> g 1<> "h i" 2<> j 1<> k`},
		{"a word 1 before it", "    echo 1 <> f", "    echo 1 1<> f"},
		{"at a line's start", "<> f", "1<> f"},
		{"after a backslash in single quotes", `    echo 'a\' <> f`, `    echo 'a\' 1<> f`},
		{"a group, a subshell, the function's own", "    { \n        echo g\n    } <> f;\n    ( echo s <> g ) <> h\n} <> k",
			"    { \n        echo g\n    } 1<> f;\n    ( echo s 1<> g ) 1<> h\n} 1<> k"},
		{"the header of a here-document", "    cat <<'E O' <> f\nbody <> x\nE O\n", "    cat <<'E O' 1<> f\nbody <> x\nE O\n"},
		{"after a case in a quoted substitution", "    x=\"$(case a in \n    a)\n        echo \"c <> d\" <> f\n    ;;\nesac)\";\n    echo \"$x\" <> h",
			"    x=\"$(case a in \n    a)\n        echo \"c <> d\" <> f\n    ;;\nesac)\";\n    echo \"$x\" 1<> h"},
		{"after a case with a subshell and a pattern's (", "    case $1 in \n        (a | b)\n            ( echo a ) <> f\n        ;;\n        *)\n            echo <> g\n        ;;\n    esac <> h",
			"    case $1 in \n        (a | b)\n            ( echo a ) 1<> f\n        ;;\n        *)\n            echo 1<> g\n        ;;\n    esac 1<> h"},

		{"0<>, 2<>, 10<>, {fd}<>", "    echo 0<> a 2<> b 10<> c {fd}<> d", ""},
		{"double quotes", `    echo "a <> b" "\" <> "`, ""},
		{"single quotes", `    echo 'a <> b'`, ""},
		{"$'…'", `    echo $'a\' <> b'`, ""},
		{"a string over lines", "    echo \"a\n <> b\n\" 'c\n <> d'", ""},
		{"here-document bodies", "    cat <<EOF\n <> x\nx <> y\nEOF\n\n    cat <<-'T' <<U\n <> t\nT\n <> u\nU\n", ""},
		{"a here-document in a substitution", "    echo \"$(cat <<EOF\n <> x\nEOF\n)\"", ""},
		{"command substitutions", `    x=$(echo <> f) y="$(echo "q" <> f)" z=${a:-$(: <> f)}`, ""},
		{"process substitutions", "    cat <(echo <> f) >(cat <> g)", ""},
		{"backquotes", "    x=`cat <> f`; y=\"`cat <> g`\"", ""},
		{"arithmetic", "    (( a <> b ));\n    x=$(( a <> b ))", ""},
		{"${…}", "    echo ${x:- <> } \"${y:- <> }\" ${z/ <> /x}", ""},
		{"an extended pattern", "    echo @( <> )", ""},
		{"escaped", `    echo \<> f a\ \<>`, ""},
		{"an unterminated here-document: the function is kept as it was", "    echo <> f;\n    cat <<EOF\n <> x", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			if want == "" {
				want = c.body
			}
			if got := trimmedBody(t, rdwrDump(rdwrBefore53, c.body)); got != want {
				t.Errorf("\n got %q\nwant %q", got, want)
			}
		})
	}
	// Bash 5.3 prints 1<> with its number and fd 0 bare; a shim without
	// the probe says nothing: nothing changes. Bash 2 printed no blank.
	for probe, want := range map[string]string{
		rdwrFrom53: "    echo x <> file", "": "    echo x <> file",
		"#rdwr __mcpbashd_p ()  {      : <>/dev/null }": "    echo x 1<> file",
	} {
		if got := trimmedBody(t, rdwrDump(probe, "    echo x <> file")); got != want {
			t.Errorf("#rdwr line %q: got %q, want %q", probe, got, want)
		}
	}
	// The pass is its own fixed point.
	out, _, _ := trimSnapshot([]byte(rdwrDump(rdwrBefore53, "    echo x <> file")), nil)
	if again, _, _ := trimSnapshot(out, nil); string(again) != string(out) {
		t.Errorf("trimming again changed the file:\n%s\nto\n%s", out, again)
	}
}

// The functions a call sources do what they did in the script's own shell
// (the bash SDK ran them there): output and files alike, with the bash
// here, through the real shim's dump.
func TestRdwrSnapshotRunsAsTheScriptShell(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "mcpserver_core.sh")
	script := filepath.Join(dir, "server.sh")
	write(t, shim, scripts.Shim)
	write(t, script, `
f_top() { echo top 1<>"$D/a"; cat "$D/a"; }
f_many() { echo m 1<>"$D/b" 2<>"$D/c" 0<>"$D/d" 3<>"$D/e"; exec {fd}<>"$D/g"; echo x >&$fd; exec {fd}>&-; }
f_str() { echo "a <> b" 'c <> d' $'e <> f'; }
f_here() { cat <<EOF
 <> x
EOF
}
f_sub() { x=$(echo in 1<>"$D/s"); y="$(echo "q <> r")"; echo "$x|$y"; }
f_case() { x="$(case a in a) echo "c <> d";; esac)"; echo "$x" 1<>"$D/h"; }
f_back() { echo back >"$D/r"; x=`+"`cat <>\"$D/r\"`"+`; echo "$x"; }
f_grp() { { echo g; } 1<>"$D/i"; ( echo s ) 1<>"$D/j"; }
f_fn() { echo fn; } 1<>"$D/k"
`)
	fns := []string{"f_top", "f_many", "f_str", "f_here", "f_sub", "f_case", "f_back", "f_grp", "f_fn"}
	env := []string{"PATH=" + os.Getenv("PATH"), "MCP_BASHD=/bin/true"}
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
	trimmed, _, err := trimSnapshot(data, env)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "trimmed.sh")
	write(t, cut, string(trimmed))
	// run runs each function in a fresh directory D, after sourcing what
	// defines it, and reports its output and the files it left.
	run := func(source string) map[string]string {
		t.Helper()
		got := map[string]string{}
		for _, fn := range fns {
			d := filepath.Join(dir, "run", filepath.Base(source), fn)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bash, "--noprofile", "--norc", "-c", `__mcpbashd_shim_file=$1; . "$2"; "$3" </dev/null 2>&1; cd "$D" && for f in *; do [ -e "$f" ] && printf '%s:%s\n' "$f" "$(cat "$f")"; done; :`, "run", shim, source, fn)
			cmd.Env = append(env, "D="+d)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s from %s: %v: %s", fn, source, err, out)
			}
			got[fn] = string(out)
		}
		return got
	}
	want, got := run(script), run(cut)
	for _, fn := range fns {
		if got[fn] != want[fn] {
			t.Errorf("%s from the trimmed snapshot:\n%s\nin the script's shell:\n%s", fn, got[fn], want[fn])
		}
	}
	if want["f_top"] != "top\na:top\n" {
		t.Errorf("f_top in the script's shell: %q", want["f_top"])
	}
}
