package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// parseArgs parses fs's flags wherever they stand before a "--": the other
// arguments come back in order as positional, those after "--" as rest.
// (The flag package alone stops at the first non-flag, so `mcp-bashd
// server.sh --http` would pass --http to the script and serve stdio.)
// usage is printed on stdout for --help and on stderr after a usage error
// (stdout may be a protocol stream).
func parseArgs(fs *flag.FlagSet, args []string, usage func(io.Writer)) (positional, rest []string, err error) {
	fs.Usage = func() {}
	fs.SetOutput(os.Stderr)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(os.Stdout)
			} else {
				usage(os.Stderr)
			}
			return nil, nil, err
		}
		left := fs.Args()
		used := len(args) - len(left)
		if used > 0 && args[used-1] == "--" {
			return positional, left, nil
		}
		if len(left) == 0 {
			return positional, nil, nil
		}
		positional = append(positional, left[0])
		args = left[1:]
	}
}

// usageOf prints text, then fs's flags as flag.PrintDefaults does, except
// the internal ones (set by the shim, not by people), then tail.
func usageOf(w io.Writer, fs *flag.FlagSet, text, tail string) {
	io.WriteString(w, text)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, "internal:") {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if name != "" {
			line += " " + name
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		switch def := f.DefValue; {
		case def == "" || def == "false" || def == "0" || def == "0s":
		case fmt.Sprintf("%T", f.Value) == "*flag.stringValue":
			line += fmt.Sprintf(" (default %q)", def)
		default:
			line += " (default " + def + ")"
		}
		fmt.Fprintln(w, line)
	})
	io.WriteString(w, tail)
}

// parseFailed turns a flag error into an exit status: 0 for --help (the
// usage went to stdout), 2 for a usage error (the flag package said why on
// stderr; a hint follows for a flag meant for the script).
func parseFailed(err error, cmd string) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if strings.HasPrefix(err.Error(), "flag provided but not defined") && cmd == "" {
		fmt.Fprintln(os.Stderr, "mcp-bashd: arguments for the server script go after --, e.g. mcp-bashd server.sh -- --verbose")
	}
	return 2
}

// buildVersion is the version to print: the one stamped at build time, or
// the module version and commit Go recorded (a `go install …@v1.2.3`).
func buildVersion() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " (commit " + rev + dirty + ")"
	}
	return v
}
