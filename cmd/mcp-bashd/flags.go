package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// parseArgs parses fs's flags wherever they stand before a "--": the other
// arguments come back in order as positional, those after "--" as rest.
// (The flag package alone stops at the first non-flag, so `mcp-bashd
// server.sh --http` would pass --http to the script and serve stdio.)
// usage is printed on stdout for --help; a usage error is one line on
// stderr (stdout may be a protocol stream).
func parseArgs(fs *flag.FlagSet, args []string, usage func(io.Writer), std streams) (positional, rest []string, err error) {
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(std.out)
			} else {
				// One line and where to look, not the whole usage: the
				// mistake stays on the screen.
				fmt.Fprintf(std.err, "%s: %v (see %s --help)\n", fs.Name(), err, fs.Name())
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
		if _, ok := f.Value.(*durationValue); ok && name == "value" {
			name = "duration"
		}
		// Two dashes, as the README and the examples write them (the
		// flag package takes either).
		line := "  --" + f.Name
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
func parseFailed(err error, cmd string, std streams) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if strings.HasPrefix(err.Error(), "flag provided but not defined") && cmd == "" {
		fmt.Fprintln(std.err, "mcp-bashd: arguments for the server script go after --, e.g. mcp-bashd server.sh -- --verbose")
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

// envSettings are the daemon flags each of which may also come from its
// own MCP_BASHD_<NAME> variable (envKey): the ones a host that starts
// ./server.sh itself has no other way to set.
var envSettings = []string{"max-concurrency", "timeout", "grace", "drain", "sequential", "warm", "fork"}

// envKey is the variable of a setting: max-concurrency → MCP_BASHD_MAX_CONCURRENCY.
func envKey(name string) string {
	return "MCP_BASHD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// envFlags applies the daemon settings the environment gives, once fs has
// parsed the command line, for a server whose command line is not ours
// (the host starts ./server.sh): first each MCP_BASHD_<NAME> of
// envSettings, then MCP_BASHD_FLAGS, daemon flags separated by spaces (no
// quoting: values hold no spaces). The command line wins over both, and
// MCP_BASHD_FLAGS over a MCP_BASHD_<NAME>. A value that does not parse is
// an error naming its variable.
func envFlags(fs *flag.FlagSet) error {
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	set := func(name, value, from string) error {
		if onCommandLine[name] {
			return nil
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("%s: invalid value %q for --%s: %v", from, value, name, err)
		}
		return nil
	}
	for _, name := range envSettings {
		key := envKey(name)
		if v := strings.TrimSpace(os.Getenv(key)); v != "" {
			if err := set(name, v, key); err != nil {
				return err
			}
		}
	}
	words := strings.Fields(os.Getenv("MCP_BASHD_FLAGS"))
	if len(words) == 0 {
		return nil
	}
	var scratch options
	efs := daemonFlags(&scratch)
	efs.SetOutput(io.Discard)
	efs.Usage = func() {}
	if err := efs.Parse(words); err != nil {
		return fmt.Errorf("MCP_BASHD_FLAGS: %v", err)
	}
	if efs.NArg() > 0 {
		return fmt.Errorf("MCP_BASHD_FLAGS: only flags may stand there, not %q", efs.Arg(0))
	}
	var err error
	efs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case strings.HasPrefix(f.Usage, "internal:"):
			err = fmt.Errorf("MCP_BASHD_FLAGS: --%s is not a setting", f.Name)
		default:
			err = set(f.Name, f.Value.String(), "MCP_BASHD_FLAGS")
		}
	})
	return err
}

// settingsField logs the serving settings in force, wherever they came
// from (command line, environment, default).
func settingsField(o options) zap.Field {
	return zap.Dict("settings", zap.Int("max_concurrency", o.maxConcurrent), zap.Duration("timeout", o.timeout),
		zap.Duration("grace", o.grace), zap.Duration("drain", o.drain), zap.Bool("sequential", o.sequential))
}

// durationValue is a duration flag that also takes plain seconds ("2",
// "0.5"), as tools.json's x-mcp-bashd.timeout does: --timeout 2 and
// MCP_BASHD_TIMEOUT=2 mean two seconds.
type durationValue time.Duration

func durationVar(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var((*durationValue)(p), name, usage)
}

func (d *durationValue) Set(s string) error {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) || secs > math.MaxInt64/float64(time.Second) {
			return errors.New("not a duration")
		}
		*d = durationValue(time.Duration(secs * float64(time.Second)))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration: give seconds (2, 0.5) or a Go duration (1m30s, 500ms)")
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return time.Duration(*d).String() }

// Get makes the value a flag.Getter, as the flag package's own are.
func (d *durationValue) Get() any { return time.Duration(*d) }
