package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
func (s *Server) toolResult(t *catalog.Tool, oc supervisor.Outcome) *Result {
	name := t.Name
	parts, isErr := outcomeText(name, oc)
	for _, p := range parts {
		s.cleanText(name, p) // logs when output had to be repaired
	}
	if t.Exe != "" && oc.SetupErr == nil && !oc.TimedOut {
		// A tools-directory executable may print a whole CallToolResult.
		if out := bytes.TrimSpace(oc.Output); wire.FirstByte(out) == '{' {
			if r, why := fullResult(out); why == "" {
				if oc.ExitCode != 0 && !r.IsError {
					return errorResult("Error executing " + name + ": " + s.cleanText(name, string(out)))
				}
				return r
			}
		}
	}
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
		// The common case, and the one that may carry megabytes: escaped
		// once, straight from the output's parts.
		return textResult(parts, isErr)
	}
	return s.richResult(t, oc, s.cleanText(name, strings.Join(parts, "")), isErr)
}

// richResult is the result of a tool that used the content helpers.
func (s *Server) richResult(t *catalog.Tool, oc supervisor.Outcome, text string, isErr bool) *Result {
	name := t.Name
	var items [][]byte
	hasText := false
	for _, it := range oc.Items {
		switch it.Kind {
		case "text":
			hasText = true
			items = append(items, object(field{"type", json.RawMessage(`"text"`)}, field{"text", wire.Quote(s.cleanText(name, it.Text))}))
		case "image", "audio":
			items = append(items, object(field{"type", wire.Quote(it.Kind)},
				field{"data", wire.Quote(base64.StdEncoding.EncodeToString(it.Data))}, field{"mimeType", wire.Quote(it.MIME)}))
		case "resource":
			res := object(field{"uri", wire.Quote(it.URI)}, field{"mimeType", wire.Quote(it.MIME)}, field{"text", wire.Quote(s.cleanText(name, it.Text))})
			items = append(items, object(field{"type", json.RawMessage(`"resource"`)}, field{"resource", res}))
		}
	}
	if text != "" || isErr {
		hasText = true
		items = append(items, object(field{"type", json.RawMessage(`"text"`)}, field{"text", wire.Quote(text)}))
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
		if !hasText {
			items = append(items, object(field{"type", json.RawMessage(`"text"`)}, field{"text", wire.Quote(string(structured))}))
		}
	}
	content := append([]byte{'['}, bytes.Join(items, []byte{','})...)
	content = append(content, ']')
	return &Result{Body: object(field{"content", content}, field{"structuredContent", structured}, field{"isError", boolJSON(isErr)}), IsError: isErr}
}

func boolJSON(b bool) json.RawMessage {
	if b {
		return json.RawMessage("true")
	}
	return json.RawMessage("false")
}

// errorResult is an isError result with one text item.
func errorResult(text string) *Result { return textResult([]string{text}, true) }

// textResult is a CallToolResult with one text item, in the SDK's key
// order. The text comes in parts (prefix, output, marker) so a large
// output is escaped once into a buffer of the right size, never
// concatenated first.
func textResult(parts []string, isError bool) *Result {
	n := 64
	for _, p := range parts {
		n += len(p) + len(p)/16
	}
	b := make([]byte, 0, n)
	b = append(b, `{"content":[{"type":"text","text":"`...)
	for _, p := range parts {
		b = wire.AppendStringBody(b, p)
	}
	b = append(b, `"}],"isError":`...)
	b = append(b, boolJSON(isError)...)
	return &Result{Body: append(b, '}'), IsError: isError}
}

// cleanText makes tool text valid UTF-8 (a JSON string cannot carry the
// invalid bytes) and says so in the log: never a silent change.
func (s *Server) cleanText(name, text string) string {
	if utf8.ValidString(text) {
		return text
	}
	s.log.Warn("tool output is not valid UTF-8; invalid bytes replaced by U+FFFD", zap.String("tool", name))
	return wire.ValidUTF8(text)
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
func outcomeText(tool string, o supervisor.Outcome) (parts []string, isError bool) {
	switch {
	case o.SetupErr != nil && o.SetupDir:
		return []string{"Cannot run " + tool + ": its call directory could not be created."}, true
	case o.SetupErr != nil:
		return []string{"Cannot run " + tool + ": " + o.SetupErr.Error() + "."}, true
	case o.TimedOut:
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
	if errText := trimNewlines(o.Stderr); errText != "" {
		if text != "" {
			return []string{"Error executing " + tool + ": ", text, truncation(o), "\n", errText}, true
		}
		return []string{"Error executing " + tool + ": ", errText}, true
	}
	return []string{"Error executing " + tool + ": ", text, truncation(o)}, true
}

func truncation(o supervisor.Outcome) string {
	if o.Truncated == 0 {
		return ""
	}
	return fmt.Sprintf("\n[mcp-bashd: output truncated; %d more bytes not shown]", o.Truncated)
}

// trimNewlines strips every trailing newline, as $(...) does in bash. The
// string shares b's memory (no copy of a large output): the supervisor
// never modifies an outcome's output after the call.
func trimNewlines(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return strings.TrimRight(unsafe.String(&b[0], len(b)), "\n")
}
