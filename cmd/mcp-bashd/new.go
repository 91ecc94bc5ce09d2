package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/internal/hostconfig"
	"github.com/mcp-bashd/mcp-bashd/scripts"
)

const newUsage = `Usage: mcp-bashd new [--plain] DIR

Starts a new server in DIR (made if missing; it must be empty): server.sh
with one tool, tools.json declaring it, config.json, the drop-in shim
(mcpserver_core.sh, so ./server.sh runs on its own), a host manifest
snippet (mcp.json: paste it into the host's MCP servers) and test.sh,
which calls the tool through mcp-bashd call. mcp-bashd check DIR passes on
it as it is. server.sh names its files by its own directory, so a host may
start it from any; its own flags are mcp-bashd's (./server.sh --http).

With --plain, server.sh holds only tool functions (no shim): serve it as
mcp-bashd DIR/server.sh.

Example:
  mcp-bashd new weather && weather/test.sh

Flags:
`

// The files of a new server. %[1]s is the server's name.
const newServerShim = `#!/usr/bin/env bash
# %[1]s: an MCP server whose tools are bash functions. Run it as
# ./server.sh (MCP on stdin/stdout), ./server.sh --http (Streamable HTTP;
# every flag of mcp-bashd --help works here), or mcp-bashd server.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The declarations beside this file, whatever directory the host starts it in.
export MCP_TOOLS_LIST_FILE="${HERE}/tools.json" MCP_CONFIG_FILE="${HERE}/config.json"

# shellcheck disable=SC1091 # the drop-in shim: mcp-bashd shim > mcpserver_core.sh
source "${HERE}/mcpserver_core.sh"

` + newToolHello + `
# This script's own flags are mcp-bashd's (--http, --http-port 3005, ...);
# one it does not know stops it with an error.
if [ "$#" -gt 0 ]; then
    export MCP_BASHD_FLAGS="${MCP_BASHD_FLAGS:+$MCP_BASHD_FLAGS }$*"
fi
run_mcp_server
`

const newServerPlain = `#!/usr/bin/env bash
# %[1]s: MCP tools as bash functions. Serve them with
#   mcp-bashd server.sh
# tools.json beside this file declares each tool and its arguments.

` + newToolHello

// newToolHello reads its argument with mcp_arg: exact for every string
// (quotes, backslashes, newlines), no jq, no process.
const newToolHello = `# tool_<name> prints the result; a non-zero status makes it an error
# result. tools.json declares each tool and its arguments, which are
# checked against the inputSchema before the function runs; mcp_arg NAME
# reads one (mcp_arg -v VAR NAME assigns it), $1 is them all as JSON.
tool_hello() {
    local name
    mcp_arg -v name name
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
          "name": {"type": "string", "description": "who to greet", "minLength": 1, "maxLength": 200}
        },
        "required": ["name"],
        "additionalProperties": false
      }
    }
  ]
}
`

// newTest runs from / on purpose: a host starts the server from a
// directory of its own, and so does this test.
const newTest = `#!/usr/bin/env bash
# Calls each tool the way a client would (validation, its own process
# group, the before-tool hook) and checks the answer.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd /
mcp-bashd check "$HERE/server.sh"
got=$(mcp-bashd call "$HERE/server.sh" hello name='Ada "the Countess"')
[ "$got" = 'Hello, Ada "the Countess"!' ] || { echo "hello: got '$got'" >&2; exit 1; }
echo ok
`

func newCommand(args []string, std streams) int {
	stdout := std.out
	fs, plain, client := newFlagSet()
	positional, _, err := parseArgs(fs, args, func(w io.Writer) { usageOf(w, fs, newUsage, "") }, std)
	if err != nil {
		return parseFailed(err, "new", std)
	}
	if len(positional) != 1 {
		fmt.Fprintln(std.err, "mcp-bashd new: give one DIR (see mcp-bashd new --help)")
		return 2
	}
	if *client != "" {
		if _, err := hostconfig.Render(*client, hostconfig.Server{}); err != nil {
			fmt.Fprintln(std.err, "mcp-bashd new: --client:", err)
			return 2
		}
	}
	dir, err := filepath.Abs(positional[0])
	if err == nil {
		err = emptyOrMissing(dir)
	}
	if err != nil {
		fmt.Fprintln(std.err, "mcp-bashd new:", err)
		return 1
	}
	files, err := newFiles(filepath.Base(dir), dir, *plain)
	if err == nil {
		err = writeFiles(dir, files)
	}
	if err != nil {
		fmt.Fprintln(std.err, "mcp-bashd new:", err)
		return 1
	}
	fmt.Fprintf(stdout, "created %s: server.sh, tools.json, config.json, mcp.json, test.sh", dir)
	if !*plain {
		fmt.Fprint(stdout, ", mcpserver_core.sh")
	}
	fmt.Fprintf(stdout, "\ntry it: %s/test.sh\n", dir)
	fmt.Fprintf(stdout, "call it: mcp-bashd call %s hello name=Ada\n", dir)
	fmt.Fprintf(stdout, "host it: paste %s/mcp.json into your MCP host's servers (docs/hosts.md)\n", dir)
	if *client != "" {
		fmt.Fprintf(stdout, "for %s:\n", *client)
		return configCommand([]string{"--client", *client, dir}, std)
	}
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
		"capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}, // logging: mcp_log reaches clients at info without logging/setLevel
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
	if self := hostUnseen(); self != "" {
		// A host gives its servers a bare PATH: name this binary, which
		// is elsewhere (a go install into ~/go/bin, say).
		if plain {
			entry["command"] = self
		} else {
			entry["env"] = map[string]string{"MCP_BASHD": self}
		}
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

func newFlagSet() (*flag.FlagSet, *bool, *string) {
	fs := flag.NewFlagSet("mcp-bashd new", flag.ContinueOnError)
	return fs, fs.Bool("plain", false, "server.sh holds only tool functions (no shim)"),
		fs.String("client", "", "also print the config of the MCP host `NAME` (as mcp-bashd config --client NAME DIR)")
}

// hostPath is the PATH a host's servers can count on.
var hostPath = []string{"/usr/local/bin", "/usr/bin", "/bin"}

// hostUnseen is this binary's path when a host's bare PATH would not find
// it as mcp-bashd ("" when it would, or when it cannot be told).
func hostUnseen() string {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return ""
	}
	st, err := os.Stat(self)
	if err != nil {
		return ""
	}
	for _, d := range hostPath {
		if other, err := os.Stat(filepath.Join(d, "mcp-bashd")); err == nil && os.SameFile(st, other) {
			return ""
		}
	}
	return self
}
