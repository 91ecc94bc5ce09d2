package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

// Problem is one finding of Lint, printed as FILE[:LINE]: message.
type Problem struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
	// Warning is a finding the server works with as the bash SDK did (a
	// malformed inputSchema keyword left unenforced): printed with
	// "warning: ", it does not fail the check.
	Warning bool
}

func (p Problem) String() string {
	msg := p.Msg
	if p.Warning {
		msg = "warning: " + msg
	}
	if p.Line > 0 {
		return p.File + ":" + strconv.Itoa(p.Line) + ": " + msg
	}
	return p.File + ": " + msg
}

var (
	shimVersionRE = regexp.MustCompile(`(?m)^MCP_BASHD_SHIM_VERSION=(\S+)`)
	lineRE        = regexp.MustCompile(`line (\d+)`)
)

// LintInput is what Lint checks: the files, and what loading the script
// showed.
type LintInput struct {
	ToolsFile, Script string
	Functions         map[string]bool // the shell functions the loaded script defines
	LoadErr           error           // why it could not be loaded (then Functions are not checked)
	LoadStdout        string          // what its top level wrote to stdout
}

// Lint checks a server without serving it: tools.json parses and holds
// usable entries, names are valid and unique, every tool has a description
// and an object inputSchema that compiles, every declared tool has a
// tool_<name> function and every tool_ function is declared, a drop-in
// script's top level writes nothing to stdout, and a vendored
// mcpserver_core.sh is this version's shim. Keywords of an inputSchema
// left unenforced as malformed are warnings (Problem.Warning). It returns
// the problems and the number of tools declared.
func Lint(in LintInput) ([]Problem, int) {
	toolsFile, script, functions, loadErr := in.ToolsFile, in.Script, in.Functions, in.LoadErr
	var ps []Problem
	report := func(file string, line int, format string, a ...any) {
		ps = append(ps, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	tools, err := InspectTools(toolsFile)
	if err != nil {
		line := 0
		if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		report(toolsFile, line, "%v", err)
	}
	declared := map[string]bool{}
	for _, t := range tools {
		switch {
		case !t.ValidName:
			report(toolsFile, t.Line, "tool name %q is not a valid bash function suffix ([a-zA-Z_][a-zA-Z0-9_]*)", t.Name)
		case declared[t.Name]:
			report(toolsFile, t.Line, "tool %q is declared more than once", t.Name)
		case !t.HasSchema:
			report(toolsFile, t.Line, "tool %q declares no inputSchema (its calls are refused)", t.Name)
		case t.SchemaErr != nil:
			report(toolsFile, t.Line, "tool %q: %v", t.Name, t.SchemaErr)
		case t.InputType != "object":
			report(toolsFile, t.Line, "tool %q: its inputSchema's type is %q, not \"object\" (MCP arguments are an object; clients may refuse the tool)", t.Name, t.InputType)
		}
		if t.SandboxErr != nil {
			report(toolsFile, t.Line, "tool %q: %s.%v", t.Name, SettingsKey, t.SandboxErr)
		}
		for _, i := range t.Ignored {
			// A type name that is no type is a typo, not a schema from
			// another dialect: an error, with the name meant.
			ps = append(ps, Problem{File: toolsFile, Line: t.Line, Msg: fmt.Sprintf("tool %q: inputSchema %s", t.Name, i), Warning: i.UnknownType == ""})
		}
		if t.Description == "" && t.ValidName {
			report(toolsFile, t.Line, "tool %q has no description (clients show it to people and models to choose the tool)", t.Name)
		}
		declared[t.Name] = true
	}
	if loadErr != nil {
		report(script, 0, "%v", loadErr)
	} else {
		for _, t := range tools {
			if t.ValidName && !functions["tool_"+t.Name] {
				report(toolsFile, t.Line, "tool %q has no tool_%s function in %s", t.Name, t.Name, script)
			}
		}
		if err == nil {
			for _, fn := range undeclared(functions, declared) {
				report(script, 0, "function %s is not declared in %s (it can never be called)", fn, toolsFile)
			}
		}
	}
	if in.LoadStdout != "" && dropIn(script) {
		out := in.LoadStdout
		if len(out) > 60 {
			out = out[:57] + "..."
		}
		report(script, 0, "its top level writes to stdout (%q): started as ./%s (the drop-in shim), that stdout is the protocol stream and the client sees invalid messages; write to stderr (>&2) or a log", out, filepath.Base(script))
	}
	if p, ok := lintShim(filepath.Join(filepath.Dir(script), "mcpserver_core.sh")); ok {
		ps = append(ps, p)
	}
	return ps, len(tools)
}

// undeclared are the tool_ functions (cancel hooks aside) no entry names.
func undeclared(functions, declared map[string]bool) []string {
	var out []string
	for fn := range functions {
		name, ok := strings.CutPrefix(fn, "tool_")
		if !ok || declared[name] {
			continue
		}
		if base, ok := strings.CutSuffix(name, "_cancel"); ok && declared[base] {
			continue // a cancel hook
		}
		out = append(out, fn)
	}
	sort.Strings(out)
	return out
}

// lintShim checks a vendored shim beside the script.
func lintShim(vendored string) (Problem, bool) {
	data, err := os.ReadFile(vendored)
	if err != nil {
		return Problem{}, false
	}
	want := shimVersionRE.FindStringSubmatch(scripts.Shim)
	got := shimVersionRE.FindSubmatch(data)
	switch {
	case got == nil:
		return Problem{File: vendored, Msg: "this is not mcp-bashd's shim (bash-mcp-sdk's own file?): replace it with `mcp-bashd shim > mcpserver_core.sh`"}, true
	case want != nil && string(got[1]) != want[1]:
		return Problem{File: vendored, Msg: fmt.Sprintf("shim version %s, this mcp-bashd ships %s: refresh it with `mcp-bashd shim > mcpserver_core.sh`", got[1], want[1])}, true
	}
	return Problem{}, false
}

// dropIn reports whether the script starts the server itself (it calls
// run_mcp_server), so that its stdout is the protocol stream.
func dropIn(script string) bool {
	data, err := os.ReadFile(script)
	return err == nil && strings.Contains(string(data), "run_mcp_server")
}
