package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// What a server's files lack, said where a newcomer looks: a tools list
// that does not parse stops `call` with check's FILE:LINE message, and a
// declared tool without its function is named at start and in `call`.

// toolsUsable reports whether the tools list can serve the call; when it
// cannot, it prints check's problems with the file (FILE:LINE: message).
func (l *localServer) toolsUsable(f *cliFiles, toolsDir string, w io.Writer) bool {
	if f.script == "" {
		return true // a tools directory alone
	}
	if catalog.LoadTools(f.tools).Err == nil {
		return true
	}
	if _, err := os.Stat(f.tools); os.IsNotExist(err) && toolsDir != "" {
		return true // the tools directory's tools are enough
	}
	problems, _ := catalog.Lint(catalog.LintInput{ToolsFile: f.tools, Script: f.script, Functions: l.sup.Current().Functions})
	printed := false
	for _, p := range problems {
		if !p.Warning && p.File == f.tools {
			fmt.Fprintln(w, p)
			printed = true
		}
	}
	if !printed {
		fmt.Fprintf(w, "%s: %v\n", f.tools, catalog.LoadTools(f.tools).Err)
	}
	fmt.Fprintf(w, "mcp-bashd call: no call made: the tools list is unusable (mcp-bashd check %s lists every problem)\n", f.script)
	return false
}

// whyNotFound adds to a call's "Tool not found" the reason when the tool
// is declared but its function is missing (the wire keeps the SDK's
// message; the person at the terminal gets the reason).
func (l *localServer) whyNotFound(tool string, rerr *wire.Error) string {
	if l == nil || rerr.Code != wire.CodeMethodNotFound || l.sup.Current() == nil {
		return ""
	}
	for _, name := range missingFunctions(l.src.Current(), l.sup.Current()) {
		if name == tool {
			return fmt.Sprintf(" (it is declared in %s, but %s defines no tool_%s function)", filepath.Base(l.src.Current().Tools.Path), filepath.Base(l.script), tool)
		}
	}
	return ""
}

// missingFunctions are the bash tools the catalog declares whose tool_
// function the snapshot lacks.
func missingFunctions(cat *catalog.Catalog, sn *supervisor.Snapshot) []string {
	if cat == nil || cat.Tools == nil || sn == nil {
		return nil
	}
	var out []string
	for _, t := range cat.Tools.Order {
		if t.Exe == "" && catalog.ValidName.MatchString(t.Name) && !sn.HasFunction("tool_"+t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// warnMissingFunctions says at start which declared tools cannot run: a
// client lists them, and their calls answer "Tool not found".
func warnMissingFunctions(log *zap.Logger, toolsFile, script string, sn *supervisor.Snapshot) {
	if script == "" {
		return
	}
	tf := catalog.LoadTools(toolsFile)
	if tf.Err != nil {
		return // the catalog says why
	}
	for _, t := range tf.Order {
		if catalog.ValidName.MatchString(t.Name) && !sn.HasFunction("tool_"+t.Name) {
			log.Warn("a declared tool has no function: clients list it, its calls answer Tool not found",
				zap.String("tool", t.Name), zap.String("function", "tool_"+t.Name), zap.String("script", script), zap.String("tools", toolsFile))
		}
	}
}

// warnElsewhere says, when a declaration file is not where the server
// looks (the working directory a host started it in) but is beside the
// script, how to name it so it is found from anywhere.
func warnElsewhere(log *zap.Logger, script string, files declFiles) {
	if script == "" {
		return
	}
	for _, f := range []struct{ path, key string }{{files.tools, "MCP_TOOLS_LIST_FILE"}, {files.config, "MCP_CONFIG_FILE"}} {
		beside := filepath.Join(filepath.Dir(script), filepath.Base(f.path))
		if f.path == "" || isFile(f.path) || !isFile(beside) || sameFile(f.path, beside) {
			continue
		}
		wd, _ := os.Getwd()
		log.Warn("a declaration file is not in the directory the server was started in, but is beside the script: "+
			"name it by the script's directory ("+f.key+"=\"$HERE/"+filepath.Base(f.path)+"\", as mcp-bashd new writes it; mcp-bashd check says so)",
			zap.String("looked_for", f.path), zap.String("working_directory", wd), zap.String("beside_the_script", beside))
	}
}
