package main

import (
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
)

// The documented meaning of every logging setting (docs/operations.md,
// Logs), flag over variable, and a warning for each value not known.
func TestDecideLogging(t *testing.T) {
	const off = zapcore.InvalidLevel
	for _, c := range []struct {
		flags         logFlags
		env           map[string]string
		files, stderr zapcore.Level
		json, console bool
		warning       string
	}{
		{files: zapcore.DebugLevel, stderr: zapcore.WarnLevel},
		{flags: logFlags{level: "info"}, files: zapcore.InfoLevel, stderr: zapcore.InfoLevel},
		{env: map[string]string{"MCP_LOG_LEVEL": "error"}, files: zapcore.ErrorLevel, stderr: zapcore.ErrorLevel},
		{flags: logFlags{level: "warn"}, env: map[string]string{"MCP_LOG_LEVEL": "debug"}, files: zapcore.WarnLevel, stderr: zapcore.WarnLevel},
		{env: map[string]string{"MCP_LOG_LEVEL": "loud"}, files: zapcore.DebugLevel, stderr: zapcore.WarnLevel, warning: "MCP_LOG_LEVEL=loud"},
		{env: map[string]string{"MCP_LOG_STDERR": "0"}, files: zapcore.DebugLevel, stderr: off},
		{env: map[string]string{"MCP_LOG_STDERR": "off"}, files: zapcore.DebugLevel, stderr: off},
		{env: map[string]string{"MCP_LOG_STDERR": "1"}, files: zapcore.DebugLevel, stderr: zapcore.DebugLevel},
		{env: map[string]string{"MCP_LOG_STDERR": "yes", "MCP_LOG_LEVEL": "info"}, files: zapcore.InfoLevel, stderr: zapcore.InfoLevel},
		{env: map[string]string{"MCP_LOG_STDERR": "debug"}, files: zapcore.DebugLevel, stderr: zapcore.DebugLevel},
		{env: map[string]string{"MCP_LOG_STDERR": "error", "MCP_LOG_LEVEL": "info"}, files: zapcore.InfoLevel, stderr: zapcore.ErrorLevel},
		{env: map[string]string{"MCP_LOG_STDERR": "maybe"}, files: zapcore.DebugLevel, stderr: zapcore.WarnLevel, warning: "MCP_LOG_STDERR=maybe"},
		{env: map[string]string{"MCP_LOG_FORMAT": "json"}, files: zapcore.DebugLevel, stderr: zapcore.WarnLevel, json: true},
		{flags: logFlags{format: "console"}, env: map[string]string{"MCP_LOG_FORMAT": "json"}, files: zapcore.DebugLevel, stderr: zapcore.WarnLevel, console: true},
		{env: map[string]string{"MCP_LOG_FORMAT": "xml"}, files: zapcore.DebugLevel, stderr: zapcore.WarnLevel, warning: "MCP_LOG_FORMAT=xml"},
	} {
		for _, k := range []string{"MCP_LOG_LEVEL", "MCP_LOG_STDERR", "MCP_LOG_FORMAT"} {
			t.Setenv(k, c.env[k])
		}
		f := c.flags
		got := decideLogging(&f)
		w := strings.Join(got.warnings, "; ")
		if got.files != c.files || got.stderr != c.stderr || got.json != c.json || got.console != c.console ||
			(c.warning == "") != (w == "") || !strings.Contains(w, c.warning) {
			t.Errorf("flags %+v env %v: %+v, want files %v stderr %v json %v console %v warning %q", c.flags, c.env, got, c.files, c.stderr, c.json, c.console, c.warning)
		}
	}
	for _, f := range []logFlags{{level: "loud"}, {format: "xml"}} {
		if f.check() == nil {
			t.Errorf("%+v: no usage error", f)
		}
	}
}
