package rpc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// buildResult shapes a finished call into a CallToolResult.
//
// A tool that used none of the content helpers gets the SDK's result: one
// text item of its output (trailing newlines stripped), isError from its
// exit status. A tool that did gets its items in order, followed by its
// output as a text item when it printed anything; structuredContent is
// added when set (with its JSON as text when no item carries text, as the
// spec asks for compatibility), and checked against the tool's
// outputSchema. mcp_result replaces everything with the tool's own result.
func (s *Server) buildResult(name string, t *tool, oc supervisor.Outcome) (json.RawMessage, bool) {
	body := s.buildResultBody(name, t, oc)
	// Whether the result is an error, for metrics: read from the body's own
	// isError (a tool's full result carries its own).
	var r struct {
		IsError bool `json:"isError"`
	}
	if bytes.HasSuffix(body, []byte(`"isError":true}`)) {
		return body, true
	}
	if len(body) < 1<<20 && json.Unmarshal(body, &r) == nil {
		return body, r.IsError
	}
	return body, false
}

func (s *Server) buildResultBody(name string, t *tool, oc supervisor.Outcome) json.RawMessage {
	parts, isErr := oc.ResultParts(name)
	for _, p := range parts {
		s.cleanText(name, p) // logs when output had to be repaired
	}
	text := ""
	if len(oc.Items) > 0 || oc.Structured != nil || t.exe != "" {
		text = strings.Join(parts, "")
	}
	if t.exe != "" && oc.SetupErr == nil && !oc.TimedOut {
		// A tools-directory executable may print a whole CallToolResult.
		if out := bytes.TrimSpace(oc.Output); firstByte(out) == '{' {
			if body, why := checkFullResult(out); why == "" {
				if oc.ExitCode != 0 && !bytes.Contains(body, []byte(`"isError":true`)) {
					return textResult("Error executing "+name+": "+s.cleanText(name, string(out)), true)
				}
				return body
			}
		}
	}
	for _, p := range oc.ContentProblems {
		s.log.Warn("tool content ignored", zap.String("tool", name), zap.String("problem", p))
	}
	if oc.FullResult != nil && !isErr {
		if body, err := checkFullResult(oc.FullResult); err == "" {
			return body
		} else {
			return textResult("Tool "+name+" returned an invalid result: "+err, true)
		}
	}
	if len(oc.Items) == 0 && oc.Structured == nil {
		if t.output != nil && !isErr {
			return textResult("Tool "+name+" declares an outputSchema but returned no structured content (use mcp_structured).", true)
		}
		// The common case, and the one that may carry megabytes: escaped
		// once, straight from the output's parts.
		return textResultParts(parts, isErr)
	}
	text = s.cleanText(name, text)
	var items []string
	hasText := false
	for _, it := range oc.Items {
		switch it.Kind {
		case "text":
			hasText = true
			items = append(items, `{"type":"text","text":`+string(mustJSON(s.cleanText(name, it.Text)))+`}`)
		case "image", "audio":
			items = append(items, `{"type":"`+it.Kind+`","data":"`+base64.StdEncoding.EncodeToString(it.Data)+`","mimeType":`+string(mustJSON(it.MIME))+`}`)
		case "resource":
			items = append(items, `{"type":"resource","resource":{"uri":`+string(mustJSON(it.URI))+`,"mimeType":`+string(mustJSON(it.MIME))+`,"text":`+string(mustJSON(s.cleanText(name, it.Text)))+`}}`)
		}
	}
	if text != "" || isErr {
		hasText = true
		items = append(items, `{"type":"text","text":`+string(mustJSON(text))+`}`)
	}
	var structured json.RawMessage
	if oc.Structured != nil && !isErr {
		var v any
		if json.Unmarshal(oc.Structured, &v) != nil {
			return textResult("Tool "+name+" returned structured content that is not JSON.", true)
		}
		if t.output != nil {
			if err := t.output.Validate(oc.Structured); err != nil {
				return textResult("Tool "+name+" returned structured content that does not match its outputSchema: "+err.Error(), true)
			}
		}
		structured = Compact(oc.Structured)
		if !hasText {
			items = append(items, `{"type":"text","text":`+string(mustJSON(string(structured)))+`}`)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"content":[` + strings.Join(items, ",") + `]`)
	if structured != nil {
		b.WriteString(`,"structuredContent":`)
		b.Write(structured)
	}
	if isErr {
		b.WriteString(`,"isError":true}`)
	} else {
		b.WriteString(`,"isError":false}`)
	}
	return b.Bytes()
}

// cleanText makes tool text valid UTF-8 (a JSON string cannot carry the
// invalid bytes) and says so in the log: never a silent change.
func (s *Server) cleanText(name, text string) string {
	text, fixed := validUTF8(text)
	if fixed {
		s.log.Warn("tool output is not valid UTF-8; invalid bytes replaced by U+FFFD", zap.String("tool", name))
	}
	return text
}

// checkFullResult accepts a tool's own CallToolResult when it is an object
// whose content is an array of objects each with a string type.
func checkFullResult(raw json.RawMessage) (json.RawMessage, string) {
	var r struct {
		Content []map[string]json.RawMessage `json:"content"`
	}
	if firstByte(raw) != '{' || json.Unmarshal(raw, &r) != nil {
		return nil, "not a JSON object with a content array"
	}
	if r.Content == nil {
		return nil, "content is missing"
	}
	for i, c := range r.Content {
		var typ string
		if json.Unmarshal(c["type"], &typ) != nil || typ == "" {
			return nil, "content[" + itoa(i) + "] has no type"
		}
	}
	return Compact(raw), ""
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// missingCaps returns the client capabilities a tool requires that the
// request's clientCapabilities lack, as a ClientCapabilities object, or nil.
func missingCaps(required, have json.RawMessage) json.RawMessage {
	var req, got map[string]json.RawMessage
	if json.Unmarshal(required, &req) != nil {
		return nil
	}
	_ = json.Unmarshal(have, &got)
	missing := map[string]json.RawMessage{}
	for k, v := range req {
		if _, ok := got[k]; !ok {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil
	}
	b, _ := json.Marshal(missing)
	return b
}
