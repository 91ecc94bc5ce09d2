package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The daemon's log: the log files (MCP_LOG_FILE and MCP_EXTRA_LOG_FILE,
// the bash SDK's targets, and those the server script names) and stderr,
// where hosts keep a server's log. Never stdout: stdout is the protocol.
//
//   - One level for every sink: --log-level or MCP_LOG_LEVEL (debug, info,
//     warn, error). Unset, the files get every level and stderr warnings
//     and errors.
//   - MCP_LOG_STDERR narrows stderr alone: 0 (false, no, off) nothing; 1
//     (true, yes, on) the level above (every level when unset); a level
//     name that level and above.
//   - One format: --log-format or MCP_LOG_FORMAT, console or json, for
//     every sink. Unset, stderr gets one readable line each ("mcp-bashd:
//     WARN catalog: message {fields}") and the files JSON lines.
//
// A variable holding a value none of these is named in a warning on
// stderr, and its default applies. The lines a person starts the server
// to see (the URL it serves, the warning before tools are exposed to the
// network, why it could not start) are written with say: on stderr
// whatever the levels, in the format.

// logFlags are the logging flags of the serving command (addLogFlags).
// quiet: the shim's one-shot dispatch, whose stderr is its caller's (a
// tool's output): the serving daemon said the warnings already.
type logFlags struct {
	level, format string
	quiet         bool
}

// addLogFlags adds --log-level and --log-format to fs.
func addLogFlags(fs *flag.FlagSet) *logFlags {
	f := &logFlags{}
	fs.StringVar(&f.level, "log-level", "", "least `level` logged anywhere: debug, info, warn or error (MCP_LOG_LEVEL; default: every level to the log files, warn to stderr)")
	fs.StringVar(&f.format, "log-format", "", "`format` of every log line: console or json (MCP_LOG_FORMAT; default: console on stderr, json in files)")
	return f
}

// check refuses a flag value that is not one the flag takes.
func (f *logFlags) check() error {
	if f == nil {
		return nil
	}
	if _, ok := parseLevel(f.level); f.level != "" && !ok {
		return fmt.Errorf("invalid value %q for --log-level: debug, info, warn or error", f.level)
	}
	if f.format != "" && f.format != "console" && f.format != "json" {
		return fmt.Errorf("invalid value %q for --log-format: console or json", f.format)
	}
	return nil
}

func parseLevel(s string) (zapcore.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return zap.DebugLevel, true
	case "info":
		return zap.InfoLevel, true
	case "warn", "warning":
		return zap.WarnLevel, true
	case "error":
		return zap.ErrorLevel, true
	}
	return zapcore.InvalidLevel, false
}

// logConfig is what the flags and the environment ask for, decided once.
type logConfig struct {
	files    zapcore.Level // least level of the log files
	stderr   zapcore.Level // least level of stderr; InvalidLevel: nothing
	json     bool          // every sink JSON
	console  bool          // every sink console lines
	warnings []string      // values not understood
}

// decideLogging applies the rules above; f may be nil (the environment
// alone, as for `call`).
func decideLogging(f *logFlags) logConfig {
	c := logConfig{files: zap.DebugLevel, stderr: zap.WarnLevel}
	if f == nil {
		f = &logFlags{}
	}
	level, format := f.level, f.format
	if level == "" {
		if v := os.Getenv("MCP_LOG_LEVEL"); v != "" {
			if _, ok := parseLevel(v); ok {
				level = v
			} else {
				c.warnings = append(c.warnings, fmt.Sprintf("MCP_LOG_LEVEL=%s is not debug, info, warn or error; ignored", v))
			}
		}
	}
	if l, ok := parseLevel(level); ok {
		c.files, c.stderr = l, l
	}
	switch v := os.Getenv("MCP_LOG_STDERR"); strings.ToLower(strings.TrimSpace(v)) {
	case "":
	case "0", "false", "no", "off":
		c.stderr = zapcore.InvalidLevel
	case "1", "true", "yes", "on":
		c.stderr = c.files
	default:
		if l, ok := parseLevel(v); ok {
			c.stderr = l
		} else {
			c.warnings = append(c.warnings, fmt.Sprintf("MCP_LOG_STDERR=%s is not 0, 1, debug, info, warn or error; stderr gets its default", v))
		}
	}
	if format == "" {
		if v := os.Getenv("MCP_LOG_FORMAT"); v == "json" || v == "console" {
			format = v
		} else if v != "" {
			c.warnings = append(c.warnings, fmt.Sprintf("MCP_LOG_FORMAT=%s is not console or json; ignored", v))
		}
	}
	c.json, c.console = format == "json", format == "console"
	return c
}

// newLogger is the logger the environment asks for (the CLI's commands).
func newLogger() (*zap.Logger, func(), error) { return newLoggerWith(nil) }

// newLoggerWith is the daemon's logger. A log file that cannot be opened,
// even once its directory is made, is said once on stderr and left out:
// the server goes on serving (a host sees a server that speaks, and why its
// log is missing).
func newLoggerWith(f *logFlags) (*zap.Logger, func(), error) {
	cfg := decideLogging(f)
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	fileEnc := zapcore.NewJSONEncoder(enc)
	if cfg.console {
		fileEnc = zapcore.NewConsoleEncoder(enc)
	}
	var fileCores []zapcore.Core
	var files []*os.File
	var failed []string
	for _, key := range []string{"MCP_LOG_FILE", "MCP_EXTRA_LOG_FILE"} {
		if p := os.Getenv(key); p != "" && p != os.DevNull {
			fh, err := openLogFile(p)
			if err != nil {
				failed = append(failed, fmt.Sprintf("log file %s (%s) cannot be opened; serving without it: %v", p, key, err))
				continue
			}
			files = append(files, fh)
			fileCores = append(fileCores, zapcore.NewCore(fileEnc, zapcore.Lock(fh), cfg.files))
		}
	}
	late := &lateFiles{level: zap.NewAtomicLevelAt(zapcore.InvalidLevel), least: cfg.files}
	fileCores = append(fileCores, zapcore.NewCore(fileEnc, late, late.level))
	root := &rootCore{files: zapcore.NewTee(fileCores...), json: cfg.json, late: late,
		say: zapcore.NewCore(stderrEncoder(enc, cfg.json), zapcore.Lock(os.Stderr), zap.DebugLevel)}
	root.Core = root.files
	if cfg.stderr != zapcore.InvalidLevel {
		root.Core = zapcore.NewTee(root.files, zapcore.NewCore(stderrEncoder(enc, cfg.json), zapcore.Lock(os.Stderr), cfg.stderr))
	}
	log := zap.New(root)
	for _, w := range append(cfg.warnings, failed...) {
		if f != nil && f.quiet {
			log.Info(w)
			continue
		}
		say(log, zap.WarnLevel, w)
	}
	closeAll := func() {
		for _, fh := range files {
			fh.Close()
		}
		late.close()
	}
	return log, closeAll, nil
}

// openLogFile opens a log file for appending, making its directory first
// when it does not exist, as the 2026 bash SDK does (its examples log to
// logs/NAME.log beside the script; a fresh clone has no logs/).
func openLogFile(path string) (*os.File, error) {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil && os.IsNotExist(err) {
		if merr := os.MkdirAll(filepath.Dir(path), 0o755); merr != nil {
			return nil, merr
		}
		fh, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	}
	return fh, err
}

// stderrEncoder is the stderr lines' encoder: JSON, or one line a reader
// can take in: "mcp-bashd: WARN catalog: message {fields}".
func stderrEncoder(enc zapcore.EncoderConfig, json bool) zapcore.Encoder {
	if json {
		return zapcore.NewJSONEncoder(enc)
	}
	enc.TimeKey = ""
	enc.CallerKey = ""
	enc.StacktraceKey = ""
	enc.ConsoleSeparator = " "
	enc.EncodeLevel = func(l zapcore.Level, e zapcore.PrimitiveArrayEncoder) {
		e.AppendString("mcp-bashd: " + l.CapitalString())
	}
	enc.EncodeName = func(n string, e zapcore.PrimitiveArrayEncoder) { e.AppendString(n + ":") }
	return zapcore.NewConsoleEncoder(enc)
}

// rootCore is the logger's core: every sink, plus what say and
// addLogFile need, carried through With so any logger derived from it
// has them.
type rootCore struct {
	zapcore.Core              // files and stderr
	files        zapcore.Core // the log files alone
	say          zapcore.Core // stderr at every level, for say
	json         bool
	late         *lateFiles
}

func (c *rootCore) With(fields []zapcore.Field) zapcore.Core {
	return &rootCore{Core: c.Core.With(fields), files: c.files.With(fields), say: c.say.With(fields), json: c.json, late: c.late}
}

// say writes a line a person starts the server to see: to the log files
// as any line, and on stderr whatever the levels — in the console format
// exactly "mcp-bashd: MSG" ("mcp-bashd: WARNING: MSG" for a warning),
// without fields, as these lines always read; in JSON as a log line.
func say(log *zap.Logger, lvl zapcore.Level, msg string, fields ...zap.Field) {
	c, ok := log.Core().(*rootCore)
	if !ok {
		log.Log(lvl, msg, fields...)
		return
	}
	// The files (and the late ones) only: stderr gets the line below.
	ent := zapcore.Entry{Level: lvl, Time: time.Now(), LoggerName: log.Name(), Message: msg}
	if ce := c.files.Check(ent, nil); ce != nil {
		ce.Write(fields...)
	}
	if c.json {
		if ce := c.say.Check(ent, nil); ce != nil {
			ce.Write(fields...)
		}
		return
	}
	prefix := "mcp-bashd: "
	if lvl == zap.WarnLevel {
		prefix += "WARNING: "
	}
	fmt.Fprintln(os.Stderr, prefix+msg)
}

// scriptStderr is where the server script's top level's stderr goes once
// it loaded: our stderr, as the script wrote it (hosts keep a server's
// stderr as its log, and under the SDK the script's was the server's), or
// in the JSON format one log line per line, so that stderr stays JSON.
func scriptStderr(log *zap.Logger) io.Writer {
	c, ok := log.Core().(*rootCore)
	if !ok || !c.json {
		return os.Stderr
	}
	return writerFunc(func(p []byte) (int, error) {
		for _, line := range strings.SplitAfter(string(p), "\n") {
			if line != "" {
				say(log, zap.InfoLevel, "server script stderr", zap.String("line", strings.TrimSuffix(line, "\n")))
			}
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// lateFiles are log files named only once the server script is loaded
// (the manifest form: the script sets MCP_LOG_FILE itself). Until one is
// added its core is disabled, so nothing is encoded for nobody.
type lateFiles struct {
	level zap.AtomicLevel
	least zapcore.Level // the files' level, once one is added
	mu    sync.Mutex
	files []*os.File
}

// add opens path (making its directory) and logs to it from now on.
func (l *lateFiles) add(path string) error {
	f, err := openLogFile(path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.files = append(l.files, f)
	l.mu.Unlock()
	l.level.SetLevel(l.least)
	return nil
}

func (l *lateFiles) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.files {
		f.Write(p)
	}
	return len(p), nil
}

func (l *lateFiles) Sync() error { return nil }

func (l *lateFiles) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.files {
		f.Close()
	}
	l.files = nil
}

// addLogFile makes log (and every logger made from the same newLogger)
// write to path too.
func addLogFile(log *zap.Logger, path string) error {
	c, ok := log.Core().(*rootCore)
	if !ok {
		return nil // not one of ours (a test's nop logger)
	}
	return c.late.add(path)
}
