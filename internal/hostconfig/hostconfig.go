// Package hostconfig prints the snippet each MCP host wants to start (or
// reach) one server: the JSON its config file holds, or the command line
// its CLI takes. Every path in it is absolute, since a host starts the
// server from a directory of its own, with an environment of its own.
package hostconfig

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// Server is what a host needs to know of one server.
type Server struct {
	Name   string            // the key the host lists it under
	Binary string            // absolute path of mcp-bashd
	Bash   string            // absolute path of the bash it runs tools with
	Script string            // absolute path of SERVER.sh
	Env    map[string]string // e.g. PATH, see cmd's loginPath
	URL    string            // set: reach a running server over HTTP instead
	Token  string            // HTTP bearer token ("" for none)
}

// Args are the stdio command's arguments: --bash first, so that the host's
// own PATH (often /usr/bin:/bin, with macOS's bash 3.2) does not decide.
func (s Server) Args() []string {
	var a []string
	if s.Bash != "" {
		a = append(a, "--bash", s.Bash)
	}
	return append(a, s.Script)
}

func (s Server) headers() map[string]string {
	if s.Token == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + s.Token}
}

type client struct {
	about  string
	render func(Server) (string, error)
}

var clients = map[string]client{
	"claude-desktop": {"Claude Desktop: merge into claude_desktop_config.json", claudeDesktop},
	"vscode":         {"VS Code: merge into .vscode/mcp.json (or the user mcp.json)", vscode},
	"cursor":         {"Cursor: merge into ~/.cursor/mcp.json (or .cursor/mcp.json in a project)", cursor},
	"claude-code":    {"Claude Code: run this command", claudeCode},
	"inspector":      {"MCP Inspector: run this command", inspector},
}

// Clients are the names Render takes, sorted, each with a line about it.
func Clients() [][2]string {
	var out [][2]string
	for n, c := range clients {
		out = append(out, [2]string{n, c.about})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Render is client's snippet for s.
func Render(name string, s Server) (string, error) {
	c, ok := clients[name]
	if !ok {
		var names []string
		for _, n := range Clients() {
			names = append(names, n[0])
		}
		return "", fmt.Errorf("unknown client %q (known: %s)", name, strings.Join(names, ", "))
	}
	return c.render(s)
}

func stdioEntry(s Server, typed bool) map[string]any {
	e := map[string]any{"command": s.Binary, "args": s.Args()}
	if typed {
		e["type"] = "stdio"
	}
	if len(s.Env) > 0 {
		e["env"] = s.Env
	}
	return e
}

func httpEntry(s Server, typ string) map[string]any {
	e := map[string]any{"url": s.URL}
	if typ != "" {
		e["type"] = typ
	}
	if h := s.headers(); h != nil {
		e["headers"] = h
	}
	return e
}

func jsonOf(key string, s Server, entry map[string]any) (string, error) {
	b, err := json.MarshalIndent(map[string]any{key: map[string]any{s.Name: entry}}, "", "  ")
	return string(b) + "\n", err
}

func claudeDesktop(s Server) (string, error) {
	if s.URL != "" {
		// Its config file starts local (stdio) servers only; remote ones
		// are added as connectors in its settings.
		return "", fmt.Errorf("claude-desktop: claude_desktop_config.json holds stdio servers only; add %s under Settings > Connectors, or serve it over stdio", s.URL)
	}
	return jsonOf("mcpServers", s, stdioEntry(s, false))
}

func cursor(s Server) (string, error) {
	if s.URL != "" {
		return jsonOf("mcpServers", s, httpEntry(s, ""))
	}
	return jsonOf("mcpServers", s, stdioEntry(s, false))
}

func vscode(s Server) (string, error) {
	if s.URL != "" {
		return jsonOf("servers", s, httpEntry(s, "http"))
	}
	return jsonOf("servers", s, stdioEntry(s, true))
}

func claudeCode(s Server) (string, error) {
	w := []string{"claude", "mcp", "add", "--transport"}
	if s.URL != "" {
		w = append(w, "http", s.Name, s.URL)
		if s.Token != "" {
			w = append(w, "--header", "Authorization: Bearer "+s.Token)
		}
		return Quote(w) + "\n", nil
	}
	w = append(w, "stdio")
	for _, k := range sortedKeys(s.Env) {
		w = append(w, "--env", k+"="+s.Env[k])
	}
	w = append(append(w, s.Name, "--", s.Binary), s.Args()...)
	return Quote(w) + "\n", nil
}

func inspector(s Server) (string, error) {
	w := []string{"npx", "@modelcontextprotocol/inspector"}
	if s.URL != "" {
		w = append(w, "--transport", "http", "--server-url", s.URL)
		if s.Token != "" {
			w = append(w, "--header", "Authorization: Bearer "+s.Token)
		}
		return Quote(w) + "\n", nil
	}
	for _, k := range sortedKeys(s.Env) {
		w = append(w, "-e", k+"="+s.Env[k])
	}
	// "--": the server's own flags (--bash) are not the Inspector's.
	w = append(append(w, "--", s.Binary), s.Args()...)
	return Quote(w) + "\n", nil
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Quote joins words as a POSIX shell reads them back.
func Quote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+%") == "" {
			q[i] = w
		} else {
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// LoginPath is PATH as the user's login shell sets it. A host launched from
// macOS's Dock or Finder inherits launchd's bare PATH (/usr/bin:/bin:...),
// not the one the user's shell profile builds (Homebrew's /opt/homebrew/bin,
// ~/go/bin), so tools that call jq or git would not find them; the snippet
// carries this PATH in its env instead. shell is $SHELL ("" : /bin/sh).
func LoginPath(shell string) (string, error) {
	if shell == "" {
		shell = "/bin/sh"
	}
	out, err := exec.Command(shell, "-lc", `printf %s "$PATH"`).Output()
	if err != nil {
		return "", fmt.Errorf("%s -lc: %v", shell, err)
	}
	return strings.TrimSpace(string(out)), nil
}
