package tests

// mcp_arg: a tool reads its arguments without jq, exactly, from the values
// the daemon decoded (supervisor/argvalues.go), in a cold call, a warm one
// and under bash 3.2 (bash32: MCP_BASHD_TEST_BASH, or what
// scripts/bash32.sh builds).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// argsBody's tool writes what mcp_arg gives for each name in $1's "names"
// (a space-separated list) to $RF_DIR/got.NAME, its status to
// $RF_DIR/st.NAME and its stderr to $RF_DIR/err.NAME; and what
// $(mcp_arg NAME) gives to $RF_DIR/sub.NAME.
const argsBody = `
tool_args() {
	local names n v st
	mcp_arg -v names names
	for n in $names; do
		v=; st=0
		mcp_arg -v v "$n" 2>"$RF_DIR/err.$n" || st=$?
		printf '%s' "$v" >"$RF_DIR/got.$n"
		printf '%s' "$st" >"$RF_DIR/st.$n"
		printf '%s' "$(mcp_arg "$n" 2>/dev/null)" >"$RF_DIR/sub.$n"
	done
	echo done
}
`

// argsCase is one argument and what mcp_arg must give for it.
type argsCase struct {
	name, want string
	status     string
}

func argsCases() (map[string]any, []argsCase) {
	text := "say \"hi\" \\ it's 'quoted' $(date) `x` \\n é 日本 \t\r\nline two\n\n"
	args := map[string]any{
		"text":  text,
		"empty": "",
		"n":     json.Number("12345678901234567890"),
		"f":     json.Number("2.50"),
		"i":     json.Number("-7"),
		"yes":   true,
		"z":     nil,
		"obj":   map[string]any{"k": "v\n", "inner": map[string]any{"deep": "x y"}, "list": []any{1, "two"}},
		"list":  []any{"a", "b c", map[string]any{"q": "'"}},
		"nul":   "a\x00b",
		"a.b":   "top-level wins",
		"a":     map[string]any{"b": "nested"},
	}
	cases := []argsCase{
		{"text", text, "0"},
		{"empty", "", "0"},
		{"n", "12345678901234567890", "0"},
		{"f", "2.50", "0"},
		{"i", "-7", "0"},
		{"yes", "true", "0"},
		{"z", "", "0"},
		{"obj", `{"inner":{"deep":"x y"},"k":"v\n","list":[1,"two"]}`, "0"},
		{"obj.k", "v\n", "0"},
		{"obj.inner.deep", "x y", "0"},
		{"obj.list.1", "two", "0"},
		{"list", `["a","b c",{"q":"'"}]`, "0"},
		{"list.1", "b c", "0"},
		{"list.2.q", "'", "0"},
		{"a.b", "top-level wins", "0"},
		{"absent", "", "1"},
		{"obj.absent", "", "1"},
		{"nul", "", "2"},
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	args["names"] = strings.Join(names, " ")
	return args, cases
}

func checkArgs(t *testing.T, d *harness.Daemon) {
	t.Helper()
	args, cases := argsCases()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	d.Send(rfCall("7", "args", string(b)))
	if r := harness.Parse(t, string(d.Recv())); strings.TrimSpace(r.First()) != "done" {
		t.Fatalf("the tool answered %q, stderr:\n%s", r.First(), d.Stderr.String())
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(d.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range cases {
		if got, st := read("got."+c.name), read("st."+c.name); got != c.want || st != c.status {
			t.Errorf("mcp_arg -v v %s: %q status %s, want %q status %s (stderr %q)", c.name, got, st, c.want, c.status, read("err."+c.name))
		}
		// $(...) drops trailing newlines, as for any command.
		if got, want := read("sub."+c.name), strings.TrimRight(c.want, "\n"); got != want {
			t.Errorf("$(mcp_arg %s): %q, want %q", c.name, got, want)
		}
	}
	if e := read("err.nul"); !strings.Contains(e, "mcp_arg: argument nul holds a NUL character") {
		t.Errorf("mcp_arg of a string holding NUL said %q", e)
	}
	if e := read("err.absent"); e != "" {
		t.Errorf("mcp_arg of an absent argument printed %q on stderr", e)
	}
}

// A cold call (every call starts its own process) reads every kind of
// value exactly.
func TestMcpArgReadsArgumentsExactlyCold(t *testing.T) {
	checkArgs(t, harness.Start(t, rfServer(argsBody, []string{"args"}, []string{"--warm", "0"})))
}

// A warm call (its process was started before the call and handed it)
// reads the same.
func TestMcpArgReadsArgumentsExactlyWarm(t *testing.T) {
	d := harness.Start(t, rfServer(argsBody, []string{"args"}, nil))
	waitWarm(t, d)
	checkArgs(t, d)
}

// Under bash 3.2 (macOS's /bin/bash), cold and warm.
func TestMcpArgReadsArgumentsExactlyBash32(t *testing.T) {
	bash := bash32(t)
	t.Run("cold", func(t *testing.T) {
		checkArgs(t, harness.Start(t, rfServer(argsBody, []string{"args"}, []string{"--warm", "0", "--bash", bash})))
	})
	t.Run("warm", func(t *testing.T) {
		d := harness.Start(t, rfServer(argsBody, []string{"args"}, []string{"--bash", bash}))
		waitWarm(t, d)
		checkArgs(t, d)
	})
}

// Outside a tool call mcp_arg says so and fails.
func TestMcpArgOutsideACall(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": "out=$(mcp_arg x 2>&1); st=$?\ntool_t() { printf '%s|%s' \"$st\" \"$out\"; }\n", "tools.json": harness.ToolsJSON("t")})
	d := harness.Start(t, rfIn(dir, "", nil))
	d.Send(rfCall("1", "t", `{}`))
	if got := harness.Parse(t, string(d.Recv())).First(); got != "2|mcp_arg: not inside a tool call" {
		t.Fatalf("mcp_arg at the top level: %q", got)
	}
}

// In the drop-in form (the script sources the shim, which turns on
// errexit, nounset and pipefail as the SDK's did, and calls
// run_mcp_server) mcp_arg reads the same; a wrong call is a usage error,
// not a nounset abort.
func TestMcpArgDropIn(t *testing.T) {
	const script = `source "$SHIM"
tool_args() {
	local v st=0 u=0
	mcp_arg -v v text
	mcp_arg 2>/dev/null || u=$?
	mcp_arg missing || st=$?
	printf '%s|%s|%s' "$v" "$st" "$u"
}
run_mcp_server "$@"
`
	for _, bash := range []string{"", "3.2"} {
		if bash == "3.2" {
			bash = bash32(t)
		}
		base := d2Write(t, script, "args")
		dir := filepath.Join(base, "srv")
		o := d2Server(dir, filepath.Join(dir, "server.sh"), nil)
		if bash != "" {
			o = d2Server(dir, bash, []string{filepath.Join(dir, "server.sh")})
		}
		r := harness.Start(t, o)
		r.RoundTrip(harness.InitLine)
		got := harness.Parse(t, r.RoundTrip(rfCall("1", "args", `{"text":"a \"b\" \\ c\n"}`))).First()
		if want := "a \"b\" \\ c\n|1|2"; got != want {
			t.Errorf("bash %q: %q, want %q\nstderr:\n%s", bash, got, want, r.Stderr.String())
		}
	}
}
