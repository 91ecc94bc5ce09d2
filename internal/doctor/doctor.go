// Package doctor holds what `mcp-bashd doctor` finds, one line per check,
// and the checks that need nothing of the command's (bash's version, free
// space, the host configs naming a server).
package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Status orders the checks' outcomes; the worst is the exit status.
type Status int

const (
	OK   Status = 0 // nothing to do
	Warn Status = 1 // it may serve, but a host may see less than you do
	Fail Status = 2 // a host will not get this server's tools
)

func (s Status) String() string { return [...]string{"OK", "WARN", "FAIL"}[s] }

// MarshalText makes the JSON read as the text does.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Check is one line of the report.
type Check struct {
	Name   string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is every check, in the order run.
type Report []Check

// Add appends a check.
func (r *Report) Add(name string, s Status, detail, fix string) {
	*r = append(*r, Check{name, s, detail, fix})
}

// Worst is the report's exit status: 0 all OK, 1 a warning, 2 a failure.
func (r Report) Worst() Status {
	w := OK
	for _, c := range r {
		w = max(w, c.Status)
	}
	return w
}

// Print writes one line per check, and its fix under it.
func (r Report) Print(w io.Writer) {
	for _, c := range r {
		fmt.Fprintf(w, "%-4s %-10s %s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "     %-10s fix: %s\n", "", c.Fix)
		}
	}
}

// JSON writes {"status": worst, "checks": [...]}.
func (r Report) JSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(map[string]any{"status": r.Worst(), "checks": r})
}

var bashVersion = regexp.MustCompile(`^(\d+)\.(\d+)`)

// BashVersion runs bash and returns its BASH_VERSION and major version.
func BashVersion(bash string) (string, int, error) {
	out, err := exec.Command(bash, "-c", `printf %s "$BASH_VERSION"`).Output()
	if err != nil {
		return "", 0, err
	}
	v := string(out)
	m := bashVersion.FindStringSubmatch(v)
	if m == nil {
		return v, 0, fmt.Errorf("%s is not bash (BASH_VERSION %q)", bash, v)
	}
	major, _ := strconv.Atoi(m[1])
	return v, major, nil
}

// bash4 are what bash 3.2 (macOS's /bin/bash) does not run: associative
// arrays, mapfile/readarray, case-changing expansions, coproc, &>>, |&.
var bash4 = regexp.MustCompile(`(?m)(^|[\s;])(declare|local|typeset)\s+-[a-zA-Z]*A|(^|[\s;])(mapfile|readarray|coproc)\s|\$\{[A-Za-z_][A-Za-z0-9_]*(\^\^?|,,?)\}|&>>|\|&`)

// NeedsBash4 is the first line of script using a bash 4 feature ("" none).
func NeedsBash4(script string) string {
	b, err := os.ReadFile(script)
	if err != nil {
		return ""
	}
	for i, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			continue
		}
		if bash4.MatchString(line) {
			return fmt.Sprintf("%s:%d: %s", script, i+1, t)
		}
	}
	return ""
}

// HostConfigs are the config files of the hosts this OS has, whether
// present or not: Claude Desktop's, Cursor's, VS Code's user mcp.json.
func HostConfigs(home string) []string {
	var out []string
	switch runtime.GOOS {
	case "darwin":
		out = append(out, filepath.Join(home, "Library/Application Support/Claude/claude_desktop_config.json"),
			filepath.Join(home, "Library/Application Support/Code/User/mcp.json"))
	case "windows":
		out = append(out, filepath.Join(os.Getenv("APPDATA"), "Claude", "claude_desktop_config.json"),
			filepath.Join(os.Getenv("APPDATA"), "Code", "User", "mcp.json"))
	default:
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = filepath.Join(home, ".config")
		}
		out = append(out, filepath.Join(cfg, "Claude/claude_desktop_config.json"), filepath.Join(cfg, "Code/User/mcp.json"))
	}
	return append(out, filepath.Join(home, ".cursor/mcp.json"), filepath.Join(home, ".claude.json"))
}

// Naming is which of files' servers name script (in command or args),
// as "FILE: NAME"; a file that does not parse is an error naming it.
func Naming(files []string, script string) (found []string, errs []error) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(b, &doc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", f, err))
			continue
		}
		for _, key := range []string{"mcpServers", "servers"} {
			var servers map[string]struct {
				Command string
				Args    []string
			}
			if json.Unmarshal(doc[key], &servers) != nil {
				continue
			}
			for name, s := range servers {
				if s.Command == script || strings.Contains(strings.Join(s.Args, "\x00")+"\x00", script+"\x00") {
					found = append(found, f+": "+name)
				}
			}
		}
	}
	return found, errs
}
