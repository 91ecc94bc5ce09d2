package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runCmd runs the command in-process, as main does, on buffers.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, streams{in: strings.NewReader(""), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

// help of help is the usage (it recursed until the stack overflowed).
func TestHelpOfHelpIsTheUsage(t *testing.T) {
	for _, args := range [][]string{{"help", "--help"}, {"help", "-h"}, {"--help", "--help"}, {"-h", "help"}, {"help"}} {
		code, out, errs := runCmd(t, args...)
		if code != 0 || !strings.Contains(out, "\nUsage:\n") || errs != "" {
			t.Errorf("%q: exit %d, stdout %.40q, stderr %q", args, code, out, errs)
		}
	}
	code, out, errs := runCmd(t, "help", "bogus")
	if code != 2 || out != "" || !strings.Contains(errs, `no command "bogus"`) {
		t.Errorf("help bogus: exit %d, stdout %.40q, stderr %q", code, out, errs)
	}
	if code, out, _ := runCmd(t, "help", "new"); code != 0 || !strings.HasPrefix(out, "Usage: mcp-bashd new") {
		t.Errorf("help new: exit %d, stdout %.40q", code, out)
	}
}

// A flag error is one line saying where to look, not the whole usage.
func TestFlagErrorIsOneLine(t *testing.T) {
	code, out, errs := runCmd(t, "call", "--nope", "x.sh", "t")
	if code != 2 || out != "" || errs != "mcp-bashd call: flag provided but not defined: -nope (see mcp-bashd call --help)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// Durations take plain seconds, as tools.json's timeout does.
func TestDurationsTakePlainSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"2": 2 * time.Second, "0.5": 500 * time.Millisecond, "1m30s": 90 * time.Second, "0": 0} {
		var d time.Duration
		if err := (*durationValue)(&d).Set(in); err != nil || d != want {
			t.Errorf("%q: %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"soon", "-1", "1e300", "NaN"} {
		var d time.Duration
		if err := (*durationValue)(&d).Set(in); err == nil {
			t.Errorf("%q: accepted as %v", in, d)
		}
	}
	t.Setenv("MCP_BASHD_TIMEOUT", "2")
	var o options
	fs := daemonFlags(&o)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := envFlags(fs); err != nil || o.timeout != 2*time.Second {
		t.Errorf("MCP_BASHD_TIMEOUT=2: %v, %v", o.timeout, err)
	}
}

// The terminal's answer to an elicitation, typed by its schema; Ctrl-D
// cancels; a wrong value is asked again.
func TestPromptElicitTypesTheAnswers(t *testing.T) {
	params := json.RawMessage(`{"message":"Book it?","requestedSchema":{"type":"object","properties":{
		"who":{"type":"string"},"n":{"type":"integer"},"ok":{"type":"boolean"},"size":{"type":"string","enum":["s","m"]},"note":{"type":"string"}},
		"required":["who","n"]}}`)
	var w bytes.Buffer
	got, err := promptElicit(&w, bufio.NewReader(strings.NewReader("Ada \"the\" Countess\n1.5\n2\nyes\nxl\nm\n\n")), params)
	want := `{"action":"accept","content":{"n":2,"ok":true,"size":"m","who":"Ada \"the\" Countess"}}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v; want %s\nprompts:\n%s", got, err, want, w.String())
	}
	if !strings.Contains(w.String(), "an integer, please") || !strings.Contains(w.String(), "size (s|m; optional): ") {
		t.Errorf("prompts:\n%s", w.String())
	}
	got, err = promptElicit(&w, bufio.NewReader(strings.NewReader("Ada\n")), params)
	if err != nil || string(got) != `{"action":"cancel"}` {
		t.Errorf("end of input: %s, %v", got, err)
	}
	// A URL elicitation: the person opens the page, Enter says done.
	w.Reset()
	got, err = promptElicit(&w, bufio.NewReader(strings.NewReader("\n")), json.RawMessage(`{"mode":"url","message":"Sign in","url":"https://example.com/x","elicitationId":"e1"}`))
	if err != nil || string(got) != `{"action":"accept"}` || !strings.Contains(w.String(), "Open https://example.com/x, then press Enter") {
		t.Errorf("url mode: %s, %v\n%s", got, err, w.String())
	}
}

// check warns about a drop-in server that finds tools.json in the working
// directory, and not about one that names it by its own directory.
func TestCheckWarnsAboutWorkingDirectoryPaths(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"relative/server.sh":  "source \"$(dirname \"${BASH_SOURCE[0]}\")/mcpserver_core.sh\"\ntool_a() { :; }\nrun_mcp_server\n",
		"absolute/server.sh":  "MCP_TOOLS_LIST_FILE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)/tools.json\"\nsource \"$(dirname \"${BASH_SOURCE[0]}\")/mcpserver_core.sh\"\ntool_a() { :; }\nrun_mcp_server\n",
		"relative/tools.json": `{"tools":[{"name":"a","description":"a","inputSchema":{"type":"object"}}]}`,
		"absolute/tools.json": `{"tools":[{"name":"a","description":"a","inputSchema":{"type":"object"}}]}`,
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var shim bytes.Buffer
	run([]string{"shim"}, streams{out: &shim, err: &shim})
	for _, d := range []string{"relative", "absolute"} {
		os.WriteFile(filepath.Join(dir, d, "mcpserver_core.sh"), shim.Bytes(), 0o644)
	}
	t.Chdir(dir) // the check runs where the files are, as a newcomer's does
	code, out, _ := runCmd(t, "check", "relative")
	if code != 0 || !strings.Contains(out, "warning: tools.json is looked up in the directory the server starts in") || !strings.Contains(out, "ok (1 tools, 1 warning)") {
		t.Errorf("relative: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "check", "absolute")
	if code != 0 || strings.Contains(out, "warning") || !strings.Contains(out, "ok (1 tools)") {
		t.Errorf("absolute: exit %d:\n%s", code, out)
	}
}

// The completion scripts name every command's flags.
func TestCompletionNamesTheFlags(t *testing.T) {
	code, out, _ := runCmd(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "--auth-token-file") || !strings.Contains(out, "complete -o filenames -F _mcp_bashd mcp-bashd") {
		t.Errorf("bash: exit %d\n%s", code, out)
	}
	if code, _, errs := runCmd(t, "completion"); code != 2 || !strings.Contains(errs, "bash, zsh or fish") {
		t.Errorf("no shell: exit %d, %q", code, errs)
	}
}
