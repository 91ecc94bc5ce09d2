package supervisor

import (
	"fmt"
	"strings"
)

// Result shapes an outcome into the text and isError flag of a tools/call
// result, with the bash SDK's texts (users' own tests compare them).
func (o Outcome) Result(tool string) (text string, isError bool) {
	switch {
	case o.SetupErr != nil:
		return "Cannot run " + tool + ": its call directory could not be created.", true
	case o.TimedOut:
		t := fmt.Sprintf("Tool %s timed out after %s and was stopped.", tool, o.Timeout)
		if out := trimNewlines(o.Output); out != "" {
			t += " Output so far:\n" + out
		}
		return t + o.truncation(), true
	case o.Phase == "hook":
		if o.Signal != 0 {
			return fmt.Sprintf("mcp_before_tool_call was killed by signal %d; tool %s did not run.", int(o.Signal), tool), true
		}
		t := "mcp_before_tool_call ended the call instead of returning; tool " + tool + " did not run."
		if out := trimNewlines(o.HookOutput); out != "" {
			t += "\n" + out
		}
		return t, true
	case o.Phase == "refused":
		return "Error executing " + tool + ": " + trimNewlines(o.HookOutput), true
	}
	text = trimNewlines(o.Output) + o.truncation()
	if o.ExitCode != 0 || o.Signal != 0 {
		return "Error executing " + tool + ": " + text, true
	}
	return text, false
}

func (o Outcome) truncation() string {
	if o.Truncated == 0 {
		return ""
	}
	return fmt.Sprintf("\n[mcp-bashd: output truncated; %d more bytes not shown]", o.Truncated)
}

// trimNewlines strips every trailing newline, as $(...) does in bash.
func trimNewlines(b []byte) string { return strings.TrimRight(string(b), "\n") }
