package main

import (
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// declFiles are the files a server declares itself with, picked as the
// bash SDK opened them (pickFiles).
type declFiles struct {
	tools, config      string
	resources, prompts string // beside the tools list unless named
	// configNamed: the configuration file was named (a flag, the
	// environment, the script), so a missing one is an error; only the
	// default beside the script may be absent (defaults apply).
	configNamed bool
	// logs are log files the script named that the environment did not:
	// the logger starts writing to them once the script is loaded.
	logs []string
}

// configMarker is the drop-in shim's word on MCP_CONFIG_FILE: it exports
// __MCPBASHD_CONFIG_NAMED as "1" when the variable was set when
// run_mcp_server ran, as "" when it exported its own default. The daemon
// reads it once at start-up (the supervisor keeps __MCPBASHD_* variables
// from every process it starts).
var configMarker, configMarked = os.LookupEnv("__MCPBASHD_CONFIG_NAMED")

// configDefaulted reports whether the drop-in shim, not the script, put
// value in MCP_CONFIG_FILE. Without the marker — the shim's one-shot
// process_request (also in a nested dispatch, whose environment holds the
// serving shim's export), or a shim vendored before the marker existed —
// its default, "config.json", is taken as the default: a file named so
// explicitly is then optional too.
func configDefaulted(dropIn bool, value string) bool {
	if configMarked {
		return configMarker != "1"
	}
	return dropIn && value == "config.json"
}

// pickFiles picks tools.json and config.json: a flag wins; then the value
// the server script's shell held when run_mcp_server ran (sn.Vars: what
// the script set or exported, or inherited from the environment), a
// relative one meaning a file in the directory that shell was in, as the
// SDK opened it; then the environment (a server without a script); then
// tools.json beside the script and config.json beside it (or beside the
// tools directory). sn is nil when the script was not loaded; dropIn says
// the drop-in shim started us.
func pickFiles(flags fileFlags, script, toolsDir string, sn *supervisor.Snapshot, dropIn bool) declFiles {
	flagTools, flagConfig := flags.tools, flags.config
	var d declFiles
	home := toolsDir
	if script != "" {
		home = filepath.Dir(script)
	}
	d.tools = flagTools
	if d.tools == "" {
		d.tools, _ = scriptValue("MCP_TOOLS_LIST_FILE", sn)
	}
	if d.tools == "" && script != "" {
		d.tools = filepath.Join(home, "tools.json")
	}
	d.config, d.configNamed = flagConfig, flagConfig != ""
	if !d.configNamed {
		d.config, d.configNamed = scriptValue("MCP_CONFIG_FILE", sn)
		if d.configNamed && configDefaulted(dropIn, d.config) {
			d.configNamed = false
		}
	}
	if d.config == "" && home != "" {
		d.config = filepath.Join(home, "config.json")
	}
	d.resources, d.prompts = declarationPaths(flags, d.tools, home, sn)
	for _, key := range []string{"MCP_LOG_FILE", "MCP_EXTRA_LOG_FILE"} {
		if v, ok := scriptValue(key, sn); ok && v != os.DevNull && !sameFile(v, os.Getenv(key)) {
			d.logs = append(d.logs, v)
		}
	}
	return d
}

// scriptValue is a variable as the script's shell held it (resolved
// against its directory), or as the environment holds it.
func scriptValue(key string, sn *supervisor.Snapshot) (string, bool) {
	if sn != nil {
		if v := sn.Vars[key]; v != "" {
			return inDir(sn.Dir, v), true
		}
	}
	v := os.Getenv(key)
	return v, v != ""
}

// scriptSetting is a variable that is not a path, as the script's shell
// held it, or as the environment holds it ("" for neither).
func scriptSetting(key string, sn *supervisor.Snapshot) string {
	if sn != nil {
		if v := sn.Vars[key]; v != "" {
			return v
		}
	}
	return os.Getenv(key)
}

// inDir resolves a relative path against dir, the directory it was meant
// in. It stays as written when dir is ours anyway (the drop-in form: the
// shim started us there), so the SDK's messages name the file as the
// script did ("Cannot read server configuration: conf.json").
func inDir(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	if wd, err := os.Getwd(); err == nil && wd == dir {
		return p
	}
	return filepath.Join(dir, p)
}

// sameFile reports whether two names of a log file are the same name.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// declare picks the declaration files once the script is loaded (sn) and
// has the logger write to the log files the script named.
func declare(o options, p paths, sn *supervisor.Snapshot, log *zap.Logger) declFiles {
	files := pickFiles(fileFlags{o.tools, o.config, o.resources, o.prompts}, p.script, p.toolsDir, sn, o.snapshotFD >= 0)
	for _, l := range files.logs {
		if err := addLogFile(log, l); err != nil {
			say(log, zap.WarnLevel, fmt.Sprintf("log file %s the server script names cannot be opened; serving without it: %v", l, err), zap.String("path", l))
		}
	}
	return files
}

// fileFlags are the declaration files named on the command line.
type fileFlags struct{ tools, config, resources, prompts string }

// declarationPaths are resources.json and prompts.json: a flag, else what
// the script (or the environment) names, else beside the tools list.
func declarationPaths(flags fileFlags, tools, home string, sn *supervisor.Snapshot) (string, string) {
	dir := home
	if tools != "" {
		dir = filepath.Dir(tools)
	}
	named := func(flag, key, base string) string {
		if flag != "" {
			return flag
		}
		if v, _ := scriptValue(key, sn); v != "" {
			return v
		}
		return filepath.Join(dir, base)
	}
	return named(flags.resources, "MCP_RESOURCES_FILE", "resources.json"), named(flags.prompts, "MCP_PROMPTS_FILE", "prompts.json")
}
