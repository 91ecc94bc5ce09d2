package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

const newUsage = `Usage: mcp-bashd new [--plain] DIR

Starts a new server in DIR (made if missing; it must be empty): server.sh
with one tool, tools.json declaring it, config.json, the drop-in shim
(mcpserver_core.sh, so ./server.sh runs on its own), a host manifest
snippet (mcp.json) and test.sh, which calls the tool through
mcp-bashd call. mcp-bashd check DIR passes on it as it is.

With --plain, server.sh holds only tool functions (no shim): serve it as
mcp-bashd DIR/server.sh.

Example:
  mcp-bashd new weather && weather/test.sh

Flags:
`

// The files of a new server. %[1]s is the server's name.
const newServerShim = `#!/usr/bin/env bash
# %[1]s: an MCP server whose tools are bash functions. Run it as
# ./server.sh (it speaks MCP on stdin/stdout) or as mcp-bashd server.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The declarations beside this file, whatever directory the host starts it in.
export MCP_TOOLS_LIST_FILE="${HERE}/tools.json" MCP_CONFIG_FILE="${HERE}/config.json"

# shellcheck disable=SC1091 # the drop-in shim: mcp-bashd shim > mcpserver_core.sh
source "${HERE}/mcpserver_core.sh"

# tool_<name> ARGS_JSON prints the result; a non-zero status makes it an
# error result. tools.json declares each tool and its arguments, which are
# checked against the inputSchema before the function runs.
tool_hello() {
    local re='"name"[[:space:]]*:[[:space:]]*"([^"]*)"'
    local name=World
    [[ $1 =~ $re ]] && name=${BASH_REMATCH[1]}
    printf 'Hello, %%s!\n' "$name"
}

run_mcp_server
`

const newServerPlain = `#!/usr/bin/env bash
# %[1]s: MCP tools as bash functions. Serve them with
#   mcp-bashd server.sh
# tools.json beside this file declares each tool and its arguments.

# tool_<name> ARGS_JSON prints the result; a non-zero status makes it an
# error result.
tool_hello() {
    local re='"name"[[:space:]]*:[[:space:]]*"([^"]*)"'
    local name=World
    [[ $1 =~ $re ]] && name=${BASH_REMATCH[1]}
    printf 'Hello, %%s!\n' "$name"
}
`

const newTools = `{
  "tools": [
    {
      "name": "hello",
      "description": "Greets someone by name.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "description": "who to greet", "pattern": "^[A-Za-z ]{1,40}$"}
        },
        "required": ["name"],
        "additionalProperties": false
      }
    }
  ]
}
`

const newTest = `#!/usr/bin/env bash
# Calls each tool the way a client would (validation, its own process
# group, the before-tool hook) and checks the answer.
set -euo pipefail
cd "$(dirname "$0")"
mcp-bashd check server.sh
got=$(mcp-bashd call server.sh hello name=Ada)
[ "$got" = "Hello, Ada!" ] || { echo "hello: got '$got'" >&2; exit 1; }
echo ok
`

func newCommand(args []string, stdout io.Writer) int {
	fs := flag.NewFlagSet("mcp-bashd new", flag.ContinueOnError)
	plain := fs.Bool("plain", false, "server.sh holds only tool functions (no shim)")
	positional, _, err := parseArgs(fs, args, func(w io.Writer) { usageOf(w, fs, newUsage, "") })
	if err != nil {
		return parseFailed(err, "new")
	}
	if len(positional) != 1 {
		fmt.Fprintln(os.Stderr, "mcp-bashd new: give one DIR (see mcp-bashd new --help)")
		return 2
	}
	dir, err := filepath.Abs(positional[0])
	if err == nil {
		err = emptyOrMissing(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-bashd new:", err)
		return 1
	}
	files, err := newFiles(filepath.Base(dir), dir, *plain)
	if err == nil {
		err = writeFiles(dir, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-bashd new:", err)
		return 1
	}
	fmt.Fprintf(stdout, "created %s: server.sh, tools.json, config.json, mcp.json, test.sh", dir)
	if !*plain {
		fmt.Fprint(stdout, ", mcpserver_core.sh")
	}
	fmt.Fprintf(stdout, "\ntry it: %s/test.sh\n", dir)
	return 0
}

func emptyOrMissing(dir string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

type newFile struct {
	name string
	mode os.FileMode
	body string
}

func newFiles(name, dir string, plain bool) ([]newFile, error) {
	config, err := json.MarshalIndent(map[string]any{
		"serverInfo":   map[string]string{"name": name, "version": "0.1.0"},
		"capabilities": map[string]any{"tools": map[string]any{}},
		"instructions": "Tools of " + name + ", written in bash.",
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	server := filepath.Join(dir, "server.sh")
	entry := map[string]any{"command": "mcp-bashd", "args": []string{server}}
	if !plain {
		entry = map[string]any{"command": server}
	}
	manifest, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{name: entry}}, "", "  ")
	if err != nil {
		return nil, err
	}
	body := newServerShim
	if plain {
		body = newServerPlain
	}
	files := []newFile{
		{"server.sh", 0o755, fmt.Sprintf(body, name)},
		{"tools.json", 0o644, newTools},
		{"config.json", 0o644, string(config) + "\n"},
		{"mcp.json", 0o644, string(manifest) + "\n"},
		{"test.sh", 0o755, newTest},
	}
	if !plain {
		files = append(files, newFile{"mcpserver_core.sh", 0o644, scripts.Shim})
	}
	return files, nil
}

func writeFiles(dir string, files []newFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.body), f.mode); err != nil {
			return err
		}
	}
	return nil
}

// scriptOf is SERVER.sh for a path that may name the server's directory.
func scriptOf(path string) string {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, "server.sh")
	}
	return strings.TrimSuffix(path, "/")
}
