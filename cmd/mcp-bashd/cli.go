package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// The commands for people: tools, call, check. Each resolves tools.json
// and config.json as the server does: a flag, else what SERVER's top level
// names (it is loaded first), else the environment, else beside SERVER.

type cliFiles struct {
	script, tools, config, bash string
	toolsFlag, configFlag       string // as given on the command line
	configNamed                 bool   // a missing config file is an error
	resources, prompts          string
	resourcesFlag, promptsFlag  string
}

// adopt picks tools.json and config.json as the server would once SERVER
// is loaded (sn nil: it is not, and the environment and the defaults
// beside it decide); resources.json and prompts.json follow the tools list.
func (f *cliFiles) adopt(sn *supervisor.Snapshot) {
	d := pickFiles(fileFlags{f.toolsFlag, f.configFlag, f.resourcesFlag, f.promptsFlag}, f.script, "", sn, false)
	f.tools, f.config, f.configNamed = absPath(d.tools), absPath(d.config), d.configNamed
	f.resources, f.prompts = absPath(d.resources), absPath(d.prompts)
}

// bashPath is --bash, or bash on PATH.
func (f *cliFiles) bashPath() (string, error) {
	if f.bash != "" {
		return f.bash, nil
	}
	return exec.LookPath("bash")
}

// cliFlags parses a command's flags (anywhere before "--", with extra
// adding the command's own) and resolves SERVER.sh (or a directory holding
// server.sh) and its files. It returns the arguments after SERVER.sh, or
// an exit status >= 0 when the command is done (help, usage error).
// scriptless, asked once the flags are parsed with the first argument (""
// for none), says when the command runs without a script.
func cliFlags(name, usage string, args []string, extra func(*flag.FlagSet), scriptless func(first string) bool, std streams) (*cliFiles, []string, int) {
	f := &cliFiles{}
	fs := cliFlagSet(name, f, extra)
	positional, rest, err := parseArgs(fs, args, func(w io.Writer) { usageOf(w, fs, usage, "") }, std)
	if err != nil {
		return nil, nil, parseFailed(err, name, std)
	}
	return f.resolve(name, positional, rest, scriptless, std)
}

// cliFlagSet is the flags of the command name: the files', then extra.
func cliFlagSet(name string, f *cliFiles, extra func(*flag.FlagSet)) *flag.FlagSet {
	fs := flag.NewFlagSet("mcp-bashd "+name, flag.ContinueOnError)
	fs.StringVar(&f.tools, "tools", "", "tools list `file` (default: MCP_TOOLS_LIST_FILE as SERVER's top level leaves it, or tools.json beside SERVER)")
	fs.StringVar(&f.config, "config", "", "configuration `file` (default: MCP_CONFIG_FILE as SERVER's top level leaves it, or config.json beside SERVER)")
	fs.StringVar(&f.bash, "bash", "", "`path` of the bash that runs the script and its tools (default: bash on PATH)")
	fs.StringVar(&f.resources, "resources", "", "resources list `file` (default: MCP_RESOURCES_FILE, or resources.json beside the tools list)")
	fs.StringVar(&f.prompts, "prompts", "", "prompts list `file` (default: MCP_PROMPTS_FILE, or prompts.json beside the tools list)")
	if extra != nil {
		extra(fs)
	}
	return fs
}

// resolve finds SERVER.sh (or a directory holding server.sh) and its
// files, as cliFlags says.
func (f *cliFiles) resolve(name string, positional, rest []string, scriptless func(first string) bool, std streams) (*cliFiles, []string, int) {
	first := ""
	if len(positional) > 0 {
		first = positional[0]
	}
	if scriptless != nil && scriptless(first) {
		f.tools, f.config = absPath(f.tools), absPath(f.config)
		return f, append(positional, rest...), -1
	}
	if len(positional) < 1 {
		fmt.Fprintf(std.err, "mcp-bashd %s: missing SERVER.sh (see mcp-bashd %s --help)\n", name, name)
		return nil, nil, 2
	}
	abs, err := filepath.Abs(scriptOf(positional[0]))
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		fmt.Fprintf(std.err, "mcp-bashd %s: server script %s: %v\n", name, positional[0], err)
		return nil, nil, 1
	}
	f.script = abs
	f.toolsFlag, f.configFlag = f.tools, f.config
	f.resourcesFlag, f.promptsFlag = f.resources, f.prompts
	f.adopt(nil) // until the script is loaded
	return f, append(positional[1:], rest...), -1
}

// absPath makes a file name absolute, so every message names the file a
// reader can find whatever their directory.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

const toolsUsage = `Usage: mcp-bashd tools [flags] SERVER.sh

Lists the tools SERVER.sh's tools.json declares: name, description and
arguments as name:type ({a|b} lists an enum's values, * marks a required
one). --json prints the tools/list result as a client receives it. When
resources.json or prompts.json is there too, the resources (a template's
URI is its uriTemplate) and the prompts (* marks a required argument)
follow. Without --tools, SERVER.sh's top level runs once (as the server
runs it) to learn whether it names its tools list itself
(MCP_TOOLS_LIST_FILE).

Example:
  mcp-bashd tools examples/greeter/server.sh

Flags:
`

func toolsCommand(args []string, std streams) int {
	stdout := std.out
	var tf toolsFlags
	asJSON, rf := &tf.asJSON, &tf.remote
	f, rest, code := cliFlags("tools", toolsUsage, args, tf.define, func(string) bool { return rf.url != "" }, std)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(std.err, "mcp-bashd tools: one SERVER.sh, not also %q (see mcp-bashd tools --help)\n", strings.Join(rest, " "))
		return 2
	}
	if rf.url != "" {
		return remoteTools(*rf, *asJSON, std)
	}
	if f.toolsFlag == "" {
		// The script may name its tools list itself (MCP_TOOLS_LIST_FILE
		// at its top level): load it to know.
		if sn, err := loadScript(f); err != nil {
			fmt.Fprintf(std.err, "mcp-bashd tools: the server script did not load, so the tools list it may name is not known; reading %s (%v)\n", f.tools, err)
		} else {
			f.adopt(sn)
		}
	}
	if *asJSON {
		tf := catalog.LoadTools(f.tools)
		if tf.Err != nil {
			fmt.Fprintf(std.err, "mcp-bashd tools: %s: %v\n", f.tools, tf.Err)
			return 1
		}
		var out bytes.Buffer
		json.Indent(&out, tf.List, "", "  ")
		out.WriteByte('\n')
		stdout.Write(out.Bytes())
		return 0
	}
	tools, err := catalog.InspectTools(f.tools)
	if err != nil {
		fmt.Fprintf(std.err, "mcp-bashd tools: %s: %v\n", f.tools, err)
		return 1
	}
	toolsTable(tools, stdout)
	return declarationsTable(f, std)
}

// toolsTable prints one line per tool: name, description, arguments.
func toolsTable(tools []catalog.ToolInfo, stdout io.Writer) {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tDESCRIPTION\tARGUMENTS")
	for _, t := range tools {
		var as []string
		for _, a := range t.Args {
			s := a.Name + ":" + a.Type
			if len(a.Enum) > 0 {
				s += "{" + strings.Join(a.Enum, "|") + "}"
			}
			if a.Required {
				s += "*"
			}
			as = append(as, s)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", oneLine(t.Name, 40), oneLine(t.Description, 60), strings.Join(as, " "))
	}
	w.Flush()
}

// toolsFlags are tools' own flags.
type toolsFlags struct {
	asJSON bool
	remote remoteFlags
}

func (tf *toolsFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&tf.asJSON, "json", false, "print the tools/list result (JSON) instead of a table")
	fs.StringVar(&tf.remote.url, "url", "", "list the tools of the Streamable HTTP server at `URL` (no SERVER.sh)")
	fs.StringVar(&tf.remote.tokenFile, "auth-token-file", "", "with --url: send `file`'s content as a bearer token")
	fs.StringVar(&tf.remote.cacert, "cacert", "", "with --url: trust the CA certificate(s) in this PEM `file`, besides the system's")
	fs.BoolVar(&tf.remote.insecure, "insecure", false, "with --url: do not verify the server's TLS certificate")
}

// oneLine fits text in one table cell: whitespace runs (newlines, tabs)
// become one space, and it is cut at max runes with "...".
func oneLine(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > max {
		text = string(r[:max-3]) + "..."
	}
	return text
}

func printCallResult(body []byte, std streams) int {
	stdout := std.out
	var res struct {
		Content []struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			MimeType string          `json:"mimeType"`
			Data     string          `json:"data"`
			Resource json.RawMessage `json:"resource"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		fmt.Fprintf(std.err, "mcp-bashd call: unexpected result %q\n", body)
		return exitRPCError
	}
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			fmt.Fprintln(stdout, c.Text)
		case "image", "audio":
			fmt.Fprintf(stdout, "[%s %s, %d bytes base64]\n", c.Type, c.MimeType, len(c.Data))
		default:
			fmt.Fprintf(stdout, "[%s] %s\n", c.Type, c.Resource)
		}
	}
	if res.Structured != nil {
		fmt.Fprintf(stdout, "structuredContent: %s\n", res.Structured)
	}
	if res.IsError {
		return exitToolError
	}
	return 0
}

const checkUsage = `Usage: mcp-bashd check [flags] SERVER.sh

Lints a server without serving it: tools.json parses and holds usable
entries, names are valid and unique, every inputSchema compiles, every
declared tool has a tool_<name> function and every tool_ function is
declared, and a vendored mcpserver_core.sh is this version's shim. So do
resources.json and prompts.json when they exist: templates are RFC 6570
levels 1-3, mimeTypes are media types, every resource and prompt has its
resource_<name> or prompt_<name> function, and every resource_, prompt_
and complete_ function is declared.
Problems are printed as FILE:LINE: message; the exit status is 1 if any.
An inputSchema keyword whose value is not JSON Schema is a warning
(FILE:LINE: warning: ...): the server leaves it unenforced, as bash-mcp-sdk
did, and says so in its log; warnings alone do not fail the check. A type
name that is no JSON type ("strin") is an error, with the name meant. A
path that depends on the working directory (a relative MCP_TOOLS_LIST_FILE,
or a drop-in server left with the shim's default, tools.json in the
working directory) is a warning: a host starts a server in a directory of
its own.

Example:
  mcp-bashd check examples/greeter/server.sh

Flags:
`

func checkCommand(args []string, std streams) int {
	stdout := std.out
	f, rest, code := cliFlags("check", checkUsage, args, nil, nil, std)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(std.err, "mcp-bashd check: one SERVER.sh at a time, not also %q\n", strings.Join(rest, " "))
		return 2
	}
	sn, in := loadForLint(f)
	problems, n := catalog.Lint(in)
	decl, counts := catalog.LintDeclarations(catalog.DeclInput{ResourcesFile: f.resources, PromptsFile: f.prompts, Script: f.script, Functions: in.Functions})
	problems = append(problems, decl...)
	problems = append(problems, catalog.LintIcons(f.config, f.tools, f.resources, f.prompts)...)
	problems = append(problems, limitRefusals(f.tools)...)
	if sn != nil {
		problems = append(problems, cwdWarnings(f, sn)...)
	}
	failed, warnings := 0, 0
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
		if p.Warning {
			warnings++
		} else {
			failed++
		}
	}
	switch {
	case failed > 0:
		return 1
	case warnings > 0:
		fmt.Fprintf(stdout, "%s: ok (%d tools%s, %d %s)\n", f.script, n, declaredCounts(counts), warnings, plural(warnings, "warning"))
	default:
		fmt.Fprintf(stdout, "%s: ok (%d tools%s)\n", f.script, n, declaredCounts(counts))
	}
	return 0
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// loadScript loads the script once, from our directory.
// loadForLint loads f's script for check and doctor, adopting the files
// it names as the server reads them; sn is nil when it did not load, and
// in is what catalog.Lint needs of it either way.
func loadForLint(f *cliFiles) (sn *supervisor.Snapshot, in catalog.LintInput) {
	sn, err := loadScript(f)
	if err == nil {
		f.adopt(sn)
	}
	in = catalog.LintInput{ToolsFile: f.tools, Script: f.script}
	if err != nil {
		in.LoadErr = err
	} else {
		in.Functions, in.LoadStdout = sn.Functions, sn.LoadStdout
	}
	return sn, in
}

func loadScript(f *cliFiles) (*supervisor.Snapshot, error) { return loadScriptIn(f, "") }

// loadScriptIn loads the script once, its top level started in dir ("":
// ours).
func loadScriptIn(f *cliFiles, dir string) (*supervisor.Snapshot, error) {
	bash, err := f.bashPath()
	if err != nil {
		return nil, errors.New("bash not found on PATH (use --bash PATH): cannot load the script")
	}
	self, _ := os.Executable()
	sup, err := supervisor.New(supervisor.Config{Bash: bash, Script: f.script, Self: self, Log: zap.NewNop(), Warm: -1, LoadDir: dir})
	if err != nil {
		return nil, err
	}
	defer sup.Close()
	return sup.Load(context.Background())
}
