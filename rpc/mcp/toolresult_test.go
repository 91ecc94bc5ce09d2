package mcp

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// The result texts are the bash SDK's (users' own tests compare them);
// mcp-bashd's own outcomes (timeouts, hooks, setup) say what happened.
func TestOutcomeText(t *testing.T) {
	cases := []struct {
		name  string
		o     supervisor.Outcome
		text  string
		isErr bool
	}{
		{"ok, newlines cut", supervisor.Outcome{Output: []byte("hi\n\n")}, "hi", false},
		{"failed with output", supervisor.Outcome{Output: []byte("/\nbye\n"), ExitCode: 2}, "Error executing where: /\nbye", true},
		{"killed", supervisor.Outcome{Signal: syscall.SIGKILL}, "Error executing where: ", true},
		{"hook refused", supervisor.Outcome{Phase: "refused", HookStatus: 3, HookOutput: []byte("no way\n")}, "Error executing where: no way", true},
		{"hook exited", supervisor.Outcome{Phase: "hook", ExitCode: 1}, "mcp_before_tool_call ended the call instead of returning; tool where did not run.", true},
		{"timed out", supervisor.Outcome{TimedOut: true, Timeout: time.Second, Output: []byte("so far\n")}, "Tool where timed out after 1s and was stopped. Output so far:\nso far", true},
		{"truncated", supervisor.Outcome{Output: []byte("abc"), Truncated: 7}, "abc\n[mcp-bashd: output truncated; 7 more bytes not shown]", false},
		{"no call directory", supervisor.Outcome{SetupErr: errors.New("x"), SetupDir: true}, "Cannot run where: its call directory could not be created.", true},
		{"tools-dir stderr", supervisor.Outcome{Output: []byte("out"), Stderr: []byte("err\n"), ExitCode: 1}, "Error executing where: out\nerr", true},
	}
	for _, c := range cases {
		parts, isErr := outcomeText("where", c.o)
		if text := strings.Join(parts, ""); text != c.text || isErr != c.isErr {
			t.Errorf("%s: %q isError=%v, want %q %v", c.name, text, isErr, c.text, c.isErr)
		}
	}
}
