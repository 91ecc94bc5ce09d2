package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// toolResult shapes a finished call into a CallToolResult.
//
// A tool that used none of the content helpers gets the SDK's result: one
// text item of its output (trailing newlines stripped), isError from its
// exit status. A tool that did gets its items in order, followed by its
// output as a text item when it printed anything; structuredContent is
// added when set (with its JSON as text when no item carries text, as the
// spec asks for compatibility), and checked against the tool's
// outputSchema. mcp_result replaces everything with the tool's own result.
//
// The output cap bounds the result's text once escaped as JSON too (a NUL
// byte is six bytes there): the output is cut where its escaped form
// reaches the cap, and the marker counts what was cut with what the cap
// cut from the file.
//
// sdk2026 is a server in the 2026 SDK's dialect (dialect.go): a failing
// bash function tool's text is then its output as it is, and a result
// that is not an error carries no isError.
func (s *Server) toolResult(t *catalog.Tool, oc supervisor.Outcome, sdk2026 bool) *Result {
	name := t.Name
	sh := shape{sdk2026Text: sdk2026 && t.Exe == "", omitFalse: sdk2026}
	if t.Exe != "" && oc.End != supervisor.NotRun && oc.End != supervisor.TimedOut {
		// A tools-directory executable may print a whole CallToolResult.
		if out := bytes.TrimSpace(oc.Output); wire.FirstByte(out) == '{' {
			if r, why := fullResult(out); why == "" {
				if oc.ExitCode != 0 && !r.IsError {
					o := cutOutput(supervisor.Outcome{Output: out, OutputCap: oc.OutputCap}, textBudget(oc))
					s.warnInvalid(name, asString(o.Output))
					return sh.textResult([]string{"Error executing " + name + ": ", asString(o.Output), truncation(o)}, true)
				}
				return r
			}
		}
	}
	oc = cutOutput(oc, textBudget(oc))
	parts, isErr := outcomeText(name, oc, sh.sdk2026Text)
	s.warnInvalid(name, parts...)
	for _, p := range oc.ContentProblems {
		s.log.Warn("tool content ignored", zap.String("tool", name), zap.String("problem", p))
	}
	if oc.FullResult != nil && !isErr {
		r, why := fullResult(oc.FullResult)
		if why != "" {
			return errorResult("Tool " + name + " returned an invalid result: " + why)
		}
		return r
	}
	if len(oc.Items) == 0 && oc.Structured == nil {
		if t.Output != nil && !isErr {
			return errorResult("Tool " + name + " declares an outputSchema but returned no structured content (use mcp_structured).")
		}
		return sh.textResult(parts, isErr)
	}
	return s.richResult(t, oc, isErr, sh)
}

// shape is how a server's SDK shaped what differs between the two bash
// SDKs' results (dialect.go): sdk2026Text, the 2026 SDK's text of a failing
// tool (a bash function's); omitFalse, no isError member unless it is true.
type shape struct{ sdk2026Text, omitFalse bool }

// isError is the result's closing isError member, or "" when the SDK left
// it out.
func (sh shape) isError(isErr bool) string {
	if !isErr && sh.omitFalse {
		return ""
	}
	return `,"isError":` + boolText(isErr)
}

// textBudget is how many bytes a result's text may take once escaped.
func textBudget(oc supervisor.Outcome) int {
	if oc.OutputCap <= 0 {
		return math.MaxInt
	}
	return int(min(oc.OutputCap, math.MaxInt))
}

// cutOutput cuts o's output (and a hook's) to what takes at most budget
// bytes once escaped as JSON, counting the cut with what the cap cut.
func cutOutput(o supervisor.Outcome, budget int) supervisor.Outcome {
	if n, _ := wire.FitStringBody(asString(o.Output), budget); n < len(o.Output) {
		o.Truncated += int64(len(o.Output) - n)
		o.Output = o.Output[:n]
	}
	if n, _ := wire.FitStringBody(asString(o.HookOutput), budget); n < len(o.HookOutput) {
		o.HookOutput = o.HookOutput[:n]
	}
	return o
}

// richResult is the result of a tool that used the content helpers. Its
// text items, its output and its structured content share the text budget
// in that order; content that no longer fits is left out, with everything
// after it (and logged), as content past the cap is.
func (s *Server) richResult(t *catalog.Tool, oc supervisor.Outcome, isErr bool, sh shape) *Result {
	name := t.Name
	r := richBody{left: textBudget(oc)}
	r.json(`{"content":[`)
	for _, it := range oc.Items {
		if !r.add(it) {
			s.log.Warn("tool content ignored", zap.String("tool", name), zap.String("problem", "content larger than the output cap"))
			break
		}
		if it.Kind == "text" || it.Kind == "resource" {
			s.warnInvalid(name, it.Text)
		}
	}
	oc = cutOutput(oc, max(r.left, 0))
	if parts, _ := outcomeText(name, oc, sh.sdk2026Text); isErr || joinedLen(parts) > 0 {
		r.item("text")
		r.json(`"text":"`)
		for _, p := range parts {
			r.textBody(p)
			r.left -= wire.StringBodyLen(p)
		}
		r.json(`"}`)
		r.hasText = true
	}
	var structured json.RawMessage
	if oc.Structured != nil && !isErr {
		if !json.Valid(oc.Structured) {
			return errorResult("Tool " + name + " returned structured content that is not JSON.")
		}
		if t.Output != nil {
			if err := t.Output.Validate(oc.Structured); err != nil {
				return errorResult("Tool " + name + " returned structured content that does not match its outputSchema: " + err.Error())
			}
		}
		structured = wire.Compact(oc.Structured)
		asText := asString(structured)
		if len(structured) > r.left || (!r.hasText && len(structured)+wire.StringBodyLen(asText) > r.left) {
			return errorResult("Tool " + name + " returned structured content larger than the output cap.")
		}
		if !r.hasText {
			r.sep()
			r.contentItem(supervisor.Item{Kind: "text", Text: asText})
		}
	}
	r.json("]")
	if structured != nil {
		r.json(`,"structuredContent":`)
		r.jsonBytes(structured)
	}
	if m := sh.isError(isErr); m != "" {
		r.json(m)
	}
	r.json("}") // a part of its own: modern inserts before it
	return &Result{doc: &r.body, IsError: isErr}
}

// richBody is a rich result's body under construction: its content array
// so far and what is left of its text budget.
type richBody struct {
	body
	items   int
	left    int // bytes of escaped text still allowed
	hasText bool
}

// item opens the next content item of type typ (the result's own text
// item, written in parts).
func (r *richBody) item(typ string) {
	r.sep()
	r.json(`{"type":"` + typ + `",`)
}

// sep separates the next content item from the last.
func (r *richBody) sep() {
	if r.items > 0 {
		r.json(",")
	}
	r.items++
}

// add appends one of the tool's content items; false when its text does
// not fit in what is left of the budget. Binary content is bounded by the
// bytes the supervisor read.
func (r *richBody) add(it supervisor.Item) bool {
	switch it.Kind {
	case "text":
		r.left -= wire.StringBodyLen(it.Text)
	case "resource":
		r.left -= wire.StringBodyLen(it.URI) + wire.StringBodyLen(it.MIME) + wire.StringBodyLen(it.Text)
	case "image", "audio":
	default:
		return true
	}
	if r.left < 0 {
		return false
	}
	r.hasText = r.hasText || it.Kind == "text"
	r.sep()
	r.contentItem(it)
	return true
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// errorResult is an isError result with one text item.
func errorResult(text string) *Result { return shape{}.textResult([]string{text}, true) }

// textResult is a CallToolResult with one text item, in the SDK's key
// order. The text comes in parts (prefix, output, marker), each escaped
// only when the line is written.
func (sh shape) textResult(parts []string, isError bool) *Result {
	var b body
	b.json(`{"content":[{"type":"text","text":"`)
	for _, p := range parts {
		b.textBody(p)
	}
	b.json(`"}]` + sh.isError(isError))
	b.json("}") // a part of its own: modern inserts before it
	return &Result{doc: &b, IsError: isError}
}

// warnInvalid logs tool text that is not valid UTF-8: a JSON string cannot
// carry the invalid bytes, and the escaper replaces them with U+FFFD —
// never a silent change.
func (s *Server) warnInvalid(name string, texts ...string) {
	for _, t := range texts {
		if !utf8.ValidString(t) {
			s.log.Warn("tool output is not valid UTF-8; invalid bytes replaced by U+FFFD", zap.String("tool", name))
			return
		}
	}
}

func joinedLen(parts []string) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// fullResult accepts a tool's own CallToolResult when it is an object
// whose content is an array of objects each with a string type.
func fullResult(raw json.RawMessage) (*Result, string) {
	var r struct {
		Content []map[string]json.RawMessage `json:"content"`
		IsError bool                         `json:"isError"`
	}
	if wire.FirstByte(raw) != '{' || json.Unmarshal(raw, &r) != nil {
		return nil, "not a JSON object with a content array"
	}
	if r.Content == nil {
		return nil, "content is missing"
	}
	for i, c := range r.Content {
		var typ string
		if json.Unmarshal(c["type"], &typ) != nil || typ == "" {
			return nil, "content[" + strconv.Itoa(i) + "] has no type"
		}
	}
	return &Result{Body: wire.Compact(raw), IsError: r.IsError}, ""
}

// outcomeText is the text and isError flag of a call's result, with the
// bash SDK's texts (users' own tests compare them), in parts (prefix,
// output, marker) so megabytes of output are never copied to be joined.
// sdk2026 takes the 2026 SDK's text for a tool that failed: its output as
// it is, or "Tool 'NAME' failed with exit status N" when it printed
// nothing (N is 128+S for a tool killed by signal S, as $? read it).
func outcomeText(tool string, o supervisor.Outcome, sdk2026 bool) (parts []string, isError bool) {
	switch {
	case o.End == supervisor.NotRun && errors.Is(o.Err, supervisor.ErrCallDir):
		return []string{"Cannot run " + tool + ": its call directory could not be created."}, true
	case o.End == supervisor.NotRun:
		return []string{"Cannot run " + tool + ": " + o.Err.Error() + "."}, true
	case o.OutputErr != nil:
		return []string{"Tool " + tool + " ran, but its output could not be read back: " + o.OutputErr.Error() + "."}, true
	case o.End == supervisor.TimedOut:
		t := fmt.Sprintf("Tool %s timed out after %s and was stopped.", tool, o.Timeout)
		if out := trimNewlines(o.Output); out != "" {
			return []string{t + " Output so far:\n", out, truncation(o)}, true
		}
		return []string{t, truncation(o)}, true
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
	if o.ExitCode == 0 && o.Signal == 0 {
		return []string{text, truncation(o)}, false
	}
	if sdk2026 {
		if text == "" {
			text = fmt.Sprintf("Tool '%s' failed with exit status %d", tool, o.ExitCode)
		}
		return []string{text, truncation(o)}, true
	}
	if errText := trimNewlines(o.Stderr); errText != "" {
		if text != "" {
			return []string{"Error executing " + tool + ": ", text, truncation(o), "\n", errText}, true
		}
		return []string{"Error executing " + tool + ": ", errText, truncation(o)}, true
	}
	return []string{"Error executing " + tool + ": ", text, truncation(o)}, true
}

// truncation is the marker after a result's output: what the output cap
// cut, and which of the call's limits bit (only when one did, so results
// of calls that hit none keep the SDK's shape).
func truncation(o supervisor.Outcome) string {
	var m string
	if o.Truncated != 0 {
		m = fmt.Sprintf("\n[mcp-bashd: output truncated; %d more bytes not shown]", o.Truncated)
	}
	for _, l := range o.Limits {
		m += "\n[mcp-bashd: " + l + "]"
	}
	return m
}

// trimNewlines strips every trailing newline, as $(...) does in bash.
func trimNewlines(b []byte) string { return strings.TrimRight(asString(b), "\n") }

// asString is b as a string sharing its memory (no copy of a large
// output): the supervisor never modifies an outcome's bytes after the call.
func asString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
