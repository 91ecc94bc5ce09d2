package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/internal/hostconfig"
)

const configUsage = `Usage: mcp-bashd config --client NAME [flags] SERVER.sh|DIR
       mcp-bashd config --client NAME --http URL [--token-file FILE]
       mcp-bashd config --list

Prints what the MCP host NAME needs to start SERVER (stdio), or to reach a
running one (--http URL, the token sent as an Authorization header): the
JSON for its config file, or the command line of its CLI. Paths in it are
absolute (this mcp-bashd, --bash or bash on PATH, SERVER), since a host
starts servers from a directory of its own. On macOS the env carries PATH
from your login shell: a host launched from the Dock gets launchd's bare
PATH, not your profile's. docs/hosts.md says where each snippet goes.

Example:
  mcp-bashd config --client claude-desktop ./myserver
  mcp-bashd config --client vscode --http https://host:8080/mcp --token-file token
`

func configCommand(args []string, std streams) int {
	var client, url, tokenFile, name string
	var list bool
	extra := func(fs *flag.FlagSet) {
		fs.StringVar(&client, "client", "", "the host `NAME` (see --list)")
		fs.BoolVar(&list, "list", false, "list the hosts --client knows")
		fs.StringVar(&url, "http", "", "reach the server running at `URL` instead of starting it")
		fs.StringVar(&tokenFile, "token-file", "", "`file` holding the bearer token the server wants (with --http)")
		fs.StringVar(&name, "name", "", "the `name` the host lists it under (default: SERVER's directory, or mcp-bashd)")
	}
	f, rest, code := cliFlags("config", configUsage, args, extra, func(first string) bool { return list || (url != "" && first == "") }, std)
	if code >= 0 {
		return code
	}
	if list {
		for _, c := range hostconfig.Clients() {
			fmt.Fprintf(std.out, "%-15s %s\n", c[0], c[1])
		}
		return 0
	}
	if len(rest) > 0 {
		fmt.Fprintf(std.err, "mcp-bashd config: one SERVER at a time, not also %q\n", strings.Join(rest, " "))
		return 2
	}
	if client == "" {
		fmt.Fprintln(std.err, "mcp-bashd config: missing --client NAME (see mcp-bashd config --list)")
		return 2
	}
	if _, err := hostconfig.Render(client, hostconfig.Server{}); err != nil {
		fmt.Fprintln(std.err, "mcp-bashd config: --client:", err)
		return 2 // a usage error, as an unknown flag is
	}
	s, err := hostServer(f, url, tokenFile, name)
	if err == nil {
		var out string
		if out, err = hostconfig.Render(client, s); err == nil {
			fmt.Fprint(std.out, out)
			return 0
		}
	}
	fmt.Fprintln(std.err, "mcp-bashd config:", err)
	return 1
}

// hostServer is what a host needs of the server f names (or of url).
func hostServer(f *cliFiles, url, tokenFile, name string) (hostconfig.Server, error) {
	s := hostconfig.Server{Name: name, URL: url}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return s, fmt.Errorf("--token-file: %v", err)
		}
		s.Token = strings.TrimSpace(string(b))
	}
	if url != "" {
		if s.Name == "" {
			s.Name = "mcp-bashd"
		}
		return s, nil
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return s, fmt.Errorf("this binary's path: %v", err)
	}
	bash, err := f.bashPath()
	if err != nil {
		return s, fmt.Errorf("bash: %v (give --bash PATH)", err)
	}
	if bash, err = filepath.Abs(bash); err != nil {
		return s, err
	}
	if _, err := os.Stat(bash); err != nil {
		return s, fmt.Errorf("--bash: %v", err)
	}
	s.Binary, s.Bash, s.Script = self, bash, f.script
	if s.Name == "" {
		s.Name = filepath.Base(filepath.Dir(f.script))
	}
	path, err := hostPATH(bash)
	if err != nil {
		return s, err
	}
	s.Env = map[string]string{"PATH": path}
	return s, nil
}

// hostPATH is the PATH the snippet gives the server: on macOS the login
// shell's (see configUsage); elsewhere hosts inherit the user's session,
// and bash's directory ahead of the system's is all the tools are sure of.
func hostPATH(bash string) (string, error) {
	if runtime.GOOS == "darwin" {
		return hostconfig.LoginPath(os.Getenv("SHELL"))
	}
	dirs := []string{filepath.Dir(bash)}
	for _, d := range hostPath {
		if d != dirs[0] {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ":"), nil
}
