package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// A host starts a server from a directory of its own, not the server's:
// a file the script names by a relative path (or the drop-in shim's
// default, "tools.json" in the working directory, as bash-mcp-sdk's) is
// then looked for there, and the server that passed `check` in its own
// directory lists no tools. check warns about each such path.

// cwdPaths are the variables naming files, with the drop-in shim's
// default when the script sets none ("" for no default).
var cwdPaths = []struct{ key, dropInDefault string }{
	{"MCP_TOOLS_LIST_FILE", "tools.json"}, {"MCP_CONFIG_FILE", "config.json"},
	{"MCP_RESOURCES_FILE", ""}, {"MCP_PROMPTS_FILE", ""}, {"MCP_LOG_FILE", ""}, {"MCP_EXTRA_LOG_FILE", ""},
}

// cwdWarnings are check's warnings for sn (the script as loaded from our
// directory). Only when a path is relative is the script loaded once more,
// from an empty directory of its own: one that then ends elsewhere moved
// (cd) to a fixed place, and its relative paths are fine.
func cwdWarnings(f *cliFiles, sn *supervisor.Snapshot) []catalog.Problem {
	dropIn := isDropIn(f.script)
	type rel struct{ key, value string }
	var found []rel
	for _, p := range cwdPaths {
		v, set := sn.Vars[p.key]
		switch {
		case set && v != "" && !filepath.IsAbs(v) && v != os.DevNull:
			found = append(found, rel{p.key, v})
		case (!set || v == "") && dropIn && p.dropInDefault != "" && os.Getenv(p.key) == "" &&
			isFile(filepath.Join(filepath.Dir(f.script), p.dropInDefault)):
			// The file is beside the script, but the shim's default looks
			// in the working directory.
			found = append(found, rel{p.key, ""})
		}
	}
	if len(found) == 0 {
		return nil
	}
	elsewhere, err := os.MkdirTemp("", "mcp-bashd-check.")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(elsewhere)
	if sn2, err := loadScriptIn(f, elsewhere); err != nil || sn2.Dir != elsewhere {
		return nil // it moves to a fixed directory (or did not load there)
	}
	var ps []catalog.Problem
	for _, r := range found {
		name := pick(r.value, defaultOf(r.key))
		how := fmt.Sprintf("%s=%q is relative", r.key, r.value)
		if r.value == "" {
			how = fmt.Sprintf("%s is not set (the shim's default: %q)", r.key, name)
		}
		ps = append(ps, catalog.Problem{File: f.script, Warning: true, Msg: fmt.Sprintf(
			"%s is looked up in the directory the server starts in, and a host starts it in one of its own: %s; set %s=\"$HERE/%s\" (HERE: the script's directory, as mcp-bashd new writes it)",
			name, how, r.key, filepath.Base(name))})
	}
	return ps
}

func defaultOf(key string) string {
	for _, p := range cwdPaths {
		if p.key == key {
			return p.dropInDefault
		}
	}
	return ""
}

// isDropIn reports whether the script runs itself (sources the shim and
// calls run_mcp_server), as a host starts ./server.sh.
func isDropIn(script string) bool {
	data, err := os.ReadFile(script)
	return err == nil && strings.Contains(string(data), "run_mcp_server")
}
