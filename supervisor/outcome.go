package supervisor

import (
	"fmt"
	"strings"
	"unsafe"
)

// Result shapes an outcome into the text and isError flag of a tools/call
// result, with the bash SDK's texts (users' own tests compare them).
func (o Outcome) Result(tool string) (text string, isError bool) {
	parts, isError := o.ResultParts(tool)
	return strings.Join(parts, ""), isError
}

// ResultParts is Result with the text in parts (prefix, output, marker), so
// a caller can encode megabytes of output without concatenating copies.
func (o Outcome) ResultParts(tool string) (parts []string, isError bool) {
	switch {
	case o.SetupErr != nil && o.SetupDir:
		return []string{"Cannot run " + tool + ": its call directory could not be created."}, true
	case o.SetupErr != nil:
		return []string{"Cannot run " + tool + ": " + o.SetupErr.Error() + "."}, true
	case o.TimedOut:
		t := fmt.Sprintf("Tool %s timed out after %s and was stopped.", tool, o.Timeout)
		if out := trimNewlines(o.Output); out != "" {
			return []string{t + " Output so far:\n", out, o.truncation()}, true
		}
		return []string{t, o.truncation()}, true
	case o.Phase == "hook":
		if o.Signal != 0 {
			return []string{fmt.Sprintf("mcp_before_tool_call was killed by signal %d; tool %s did not run.", int(o.Signal), tool)}, true
		}
		t := "mcp_before_tool_call ended the call instead of returning; tool " + tool + " did not run."
		if out := trimNewlines(o.HookOutput); out != "" {
			return []string{t, "\n", out}, true
		}
		return []string{t}, true
	case o.Phase == "refused":
		return []string{"Error executing " + tool + ": ", trimNewlines(o.HookOutput)}, true
	}
	text := trimNewlines(o.Output)
	if o.ExitCode != 0 || o.Signal != 0 {
		if errText := trimNewlines(o.Stderr); errText != "" {
			if text != "" {
				return []string{"Error executing " + tool + ": ", text, o.truncation(), "\n", errText}, true
			}
			return []string{"Error executing " + tool + ": ", errText}, true
		}
		return []string{"Error executing " + tool + ": ", text, o.truncation()}, true
	}
	return []string{text, o.truncation()}, false
}

func (o Outcome) truncation() string {
	if o.Truncated == 0 {
		return ""
	}
	return fmt.Sprintf("\n[mcp-bashd: output truncated; %d more bytes not shown]", o.Truncated)
}

// trimNewlines strips every trailing newline, as $(...) does in bash. The
// string shares b's memory (no copy of a large output): b is never
// modified after the call's output is read.
func trimNewlines(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return strings.TrimRight(unsafe.String(&b[0], len(b)), "\n")
}
