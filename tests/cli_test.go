package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

// The command line for people (issue 6): `mcp-bashd tools|call|check|shim|
// version`, `--help` of each, and the daemon's own usage errors, as
// testscript scripts in testdata/script. Every script runs the binary
// TestMain built, found on PATH as `mcp-bashd`, and gets:
//
//	$REPO                  the repository root (examples/, scripts/)
//	$MCPBASHD_TEST_MARK    a marker every process it starts inherits
//
// and these commands besides testscript's own:
//
//	exitcode N PROG ARGS...  run PROG like exec, require exit status N
//	emptydir DIR             DIR exists and holds nothing
//	validutf8 stdout|stderr  the last command's output is valid UTF-8
//	noprocs                  no live process carries this script's marker
//	                         (waits for one to go, up to the deadline)
//	waitfile FILE            wait until FILE exists (a tool's readiness
//	                         handshake), up to the deadline
func TestCLIScriptsRun(t *testing.T) {
	root, err := filepath.Abs(harness.RepoPath(""))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		// Report every broken expectation of a script, not only the first.
		ContinueOnError: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", filepath.Dir(harness.Binary)+string(os.PathListSeparator)+e.Getenv("PATH"))
			e.Setenv("REPO", root)
			e.Setenv(harness.MarkKey, "cli-"+strconv.Itoa(os.Getpid())+"-"+filepath.Base(e.WorkDir))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cliExitCode,
			"emptydir":  cliEmptyDir,
			"validutf8": cliValidUTF8,
			"noprocs":   cliNoProcs,
			"waitfile":  cliWaitFile,
		},
	})
}

func cliExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func cliEmptyDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: emptydir DIR")
	}
	ents, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		ts.Fatalf("%s is not empty: %s", args[0], strings.Join(names, " "))
	}
}

func cliValidUTF8(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || (args[0] != "stdout" && args[0] != "stderr") {
		ts.Fatalf("usage: validutf8 stdout|stderr")
	}
	if s := ts.ReadFile(args[0]); !utf8.ValidString(s) {
		ts.Fatalf("%s is not valid UTF-8: %q", args[0], s)
	}
}

// cliTB lets a testscript command wait with proctest.WaitUntil, which
// only calls Helper and Fatalf.
type cliTB struct {
	testing.TB
	ts *testscript.TestScript
}

func (c cliTB) Helper()                      {}
func (c cliTB) Fatalf(f string, args ...any) { c.ts.Fatalf(f, args...) }

func cliNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: noprocs")
	}
	mark := ts.Getenv(harness.MarkKey)
	proctest.WaitUntil(cliTB{ts: ts}, time.Now().Add(30*time.Second), "no process left running", func() (bool, string) {
		ps, err := proctest.WithEnv(harness.MarkKey, mark)
		ts.Check(err)
		alive := proctest.Alive(ps)
		var s []string
		for _, p := range alive {
			s = append(s, p.String())
		}
		return len(alive) == 0, "processes left running:\n" + strings.Join(s, "\n")
	})
}

func cliWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	path := ts.MkAbs(args[0])
	proctest.WaitUntil(cliTB{ts: ts}, time.Now().Add(30*time.Second), args[0]+" to appear", func() (bool, string) {
		_, err := os.Stat(path)
		return err == nil, fmt.Sprint(err)
	})
}

// Issue 12, item 5: `mcp-bashd call --url` calls a tool on a running
// Streamable HTTP server (with its bearer token), shows the tool's
// progress and log lines on stderr, and prints the result.
func TestCLICallURL(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  "tool_steps() { mcp_progress 1 2 first; mcp_log warning careful; mcp_progress 2 2; echo \"done $1\"; }\n",
		"tools.json": `{"tools":[{"name":"steps","description":"d","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}]}`,
		"token":      "s3cret\n",
	})
	mark := "cli-url-" + strconv.Itoa(os.Getpid())
	d := harness.StartHTTP(t, harness.Options{Script: filepath.Join(dir, "server.sh"), Flags: []string{"--auth-token-file", filepath.Join(dir, "token")}, Env: nil, Marked: mark})
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(harness.Binary, append([]string{"call", "--url", d.URL}, args...)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	out, stderr, code := run("--auth-token-file", filepath.Join(dir, "token"), "steps", "n=3")
	if code != 0 || out != "done {\"n\":3}\n" {
		t.Errorf("call --url: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for _, want := range []string{"progress: [==========          ]  50% first\n", "[warning] careful\n", "progress: [====================] 100%\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Refused before any call: exit 4, no call made (issue 24: not the
	// isError result's 1), with what to give.
	if _, stderr, code := run("steps"); code != 4 || !strings.Contains(stderr, "Unauthorized: a valid bearer token is required") ||
		!strings.Contains(stderr, "give the token with --auth-token-file FILE") {
		t.Errorf("without the token: exit %d, stderr %q", code, stderr)
	}
}

// Issue 12, item 3: started from a terminal, the server says on stderr
// that it speaks MCP on stdin and how to try its tools, in one line pair;
// stdout stays protocol-only.
func TestCLITerminalHint(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": "tool_a() { :; }\n", "tools.json": harness.ToolsJSON("a")})
	master, slave := cliOpenPTY(t)
	defer master.Close()
	stdout := &harness.Output{}
	p, _ := harness.RunCmd(t, harness.Options{Dir: dir, TempDir: true}, func(cmd *exec.Cmd) { cmd.Stdin, cmd.Stdout = slave, stdout })
	stderr := p.Stderr
	slave.Close()
	proctest.WaitUntil(t, harness.Deadline(t), "the hint on stderr", func() (bool, string) {
		return strings.Contains(stderr.String(), "mcp-bashd call "), stderr.String()
	})
	// Ctrl-D at the start of a line: EOF on the terminal, the server ends.
	master.Write([]byte{4})
	if err := p.Wait(t, "the server at EOF on its terminal"); err != nil {
		t.Fatalf("server at EOF: %v\nstderr: %s", err, stderr.String())
	}
	want := "mcp-bashd: serving " + filepath.Join(dir, "server.sh") + " as MCP on stdin/stdout"
	if !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 2 {
		t.Errorf("stderr = %q, want two lines starting %q", stderr.String(), want)
	}
	if stdout.String() != "" {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
}
