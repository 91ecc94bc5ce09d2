package main

import (
	"os"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger writes JSON lines to MCP_LOG_FILE and MCP_EXTRA_LOG_FILE when
// set (every level: the bash SDK's log targets), and warnings and errors to
// stderr, one readable line each, so a missing file or a failed reload is
// seen where hosts keep a server's stderr. MCP_LOG_STDERR=1 sends every
// level to stderr, MCP_LOG_STDERR=0 nothing; MCP_LOG_FORMAT=json makes the
// stderr lines JSON too. Never stdout: stdout is the protocol.
func newLogger() (*zap.Logger, func(), error) {
	var cores []zapcore.Core
	var files []*os.File
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	open := func(path string) error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		files = append(files, f)
		cores = append(cores, zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(f), zap.DebugLevel))
		return nil
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, key := range []string{"MCP_LOG_FILE", "MCP_EXTRA_LOG_FILE"} {
		if p := os.Getenv(key); p != "" && p != os.DevNull {
			if err := open(p); err != nil {
				closeAll()
				return nil, nil, err
			}
		}
	}
	if c := stderrCore(enc); c != nil {
		cores = append(cores, c)
	}
	late := &lateFiles{level: zap.NewAtomicLevelAt(zapcore.InvalidLevel)}
	cores = append(cores, zapcore.NewCore(zapcore.NewJSONEncoder(enc), late, late.level))
	return zap.New(withLateFiles{zapcore.NewTee(cores...), late}), func() { closeAll(); late.close() }, nil
}

// lateFiles are log files named only once the server script is loaded
// (the manifest form: the script sets MCP_LOG_FILE itself). Until one is
// added its core is disabled, so nothing is encoded for nobody.
type lateFiles struct {
	level zap.AtomicLevel
	mu    sync.Mutex
	files []*os.File
}

// add opens path and logs every level to it from now on.
func (l *lateFiles) add(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.files = append(l.files, f)
	l.mu.Unlock()
	l.level.SetLevel(zap.DebugLevel)
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

// withLateFiles is the logger's core, carrying its lateFiles through With
// so that any logger derived from it can add one (addLogFile).
type withLateFiles struct {
	zapcore.Core
	late *lateFiles
}

func (c withLateFiles) With(fields []zapcore.Field) zapcore.Core {
	return withLateFiles{c.Core.With(fields), c.late}
}

// addLogFile makes log (and every logger made from the same newLogger)
// write to path too.
func addLogFile(log *zap.Logger, path string) error {
	c, ok := log.Core().(withLateFiles)
	if !ok {
		return nil // not one of ours (a test's nop logger)
	}
	return c.late.add(path)
}

// stderrCore is the stderr sink the environment asks for (nil for none).
func stderrCore(enc zapcore.EncoderConfig) zapcore.Core {
	level := zap.WarnLevel
	switch os.Getenv("MCP_LOG_STDERR") {
	case "1":
		level = zap.DebugLevel
	case "0":
		return nil
	}
	if os.Getenv("MCP_LOG_FORMAT") == "json" {
		return zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), level)
	}
	// One line a reader can take in: "mcp-bashd: WARN catalog: message {fields}".
	enc.TimeKey = ""
	enc.CallerKey = ""
	enc.StacktraceKey = ""
	enc.ConsoleSeparator = " "
	enc.EncodeLevel = func(l zapcore.Level, e zapcore.PrimitiveArrayEncoder) {
		e.AppendString("mcp-bashd: " + l.CapitalString())
	}
	enc.EncodeName = func(n string, e zapcore.PrimitiveArrayEncoder) { e.AppendString(n + ":") }
	return zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), level)
}
