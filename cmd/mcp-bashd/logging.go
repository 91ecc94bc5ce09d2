package main

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger writes JSON lines to MCP_LOG_FILE (default /dev/null), to
// MCP_EXTRA_LOG_FILE when set, and to stderr when MCP_LOG_STDERR=1 — the
// bash SDK's three log targets. Never stdout: stdout is the protocol.
func newLogger() (*zap.Logger, func(), error) {
	var sinks []zapcore.WriteSyncer
	var files []*os.File
	open := func(path string) error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		files = append(files, f)
		sinks = append(sinks, zapcore.Lock(f))
		return nil
	}
	if p := os.Getenv("MCP_LOG_FILE"); p != "" && p != os.DevNull {
		if err := open(p); err != nil {
			return nil, nil, err
		}
	}
	if p := os.Getenv("MCP_EXTRA_LOG_FILE"); p != "" {
		if err := open(p); err != nil {
			return nil, nil, err
		}
	}
	if os.Getenv("MCP_LOG_STDERR") == "1" {
		sinks = append(sinks, zapcore.Lock(os.Stderr))
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if len(sinks) == 0 {
		return zap.NewNop(), closeAll, nil
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.NewMultiWriteSyncer(sinks...), zap.DebugLevel)
	return zap.New(core), closeAll, nil
}
