package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// The terminal is the client of `mcp-bashd call`: a tool's question
// (mcp_elicit) is put to the person at it, or answered from --answer.

// stringList is a flag that may be given more than once.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parseAnswers checks each --answer is one JSON object.
func parseAnswers(raw []string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, a := range raw {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(a), &obj); err != nil {
			return nil, fmt.Errorf("--answer %s: not a JSON object (%v)", a, err)
		}
		out = append(out, json.RawMessage(a))
	}
	return out, nil
}

// terminalAsker answers a call's questions: the next --answer, else the
// person at the terminal (stdin a TTY), else it refuses, saying how.
type terminalAsker struct {
	std     streams
	answers []json.RawMessage
	mu      sync.Mutex // one question at a time on the terminal
	in      *bufio.Reader
}

func (a *terminalAsker) ask(ctx context.Context, items []supervisor.AskItem) ([]json.RawMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		r, err := a.one(it)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (a *terminalAsker) one(it supervisor.AskItem) (json.RawMessage, error) {
	if len(a.answers) > 0 {
		r := a.answers[0]
		a.answers = a.answers[1:]
		return asResult(it.Method, r), nil
	}
	if it.Method != "elicitation/create" {
		return nil, fmt.Errorf("mcp-bashd call answers only elicitation at the terminal, not %s: give its result with --answer JSON", it.Method)
	}
	f, ok := a.std.in.(*os.File)
	if !ok || !isTerminal(f) {
		return nil, errors.New("mcp-bashd call has no terminal to ask (stdin is not one): give the answer with --answer JSON")
	}
	if a.in == nil {
		a.in = bufio.NewReader(a.std.in)
	}
	return promptElicit(a.std.err, a.in, it.Params)
}

// asResult is an --answer as the result of method: for an elicitation, an
// object without "action" is the accepted content.
func asResult(method string, answer json.RawMessage) json.RawMessage {
	if method != "elicitation/create" {
		return answer
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(answer, &obj) == nil && obj["action"] != nil {
		return answer
	}
	return json.RawMessage(`{"action":"accept","content":` + string(answer) + `}`)
}

// elicitField is one property of an elicitation's requestedSchema.
type elicitField struct {
	name        string
	Type        string            `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Default     json.RawMessage   `json:"default"`
	required    bool
}

// promptElicit asks for each field of the schema in turn, a line each,
// and returns the accepted content; end of input (Ctrl-D) cancels.
func promptElicit(w io.Writer, r *bufio.Reader, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Message string `json:"message"`
		Mode    string `json:"mode"`
		URL     string `json:"url"`
		Schema  struct {
			Properties json.RawMessage `json:"properties"`
			Required   []string        `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("the tool's question is not an elicitation: %v", err)
	}
	if p.Mode == "url" {
		// The person goes to the page; the terminal only says when.
		fmt.Fprintf(w, "%s\nOpen %s, then press Enter (Ctrl-D to decline)\n", p.Message, p.URL)
		if _, err := r.ReadString('\n'); err != nil {
			return json.RawMessage(`{"action":"decline"}`), nil
		}
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	fields, err := orderedFields(p.Schema.Properties, p.Schema.Required)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s\n(Ctrl-D to cancel)\n", p.Message)
	content := map[string]json.RawMessage{}
	for _, f := range fields {
		for {
			fmt.Fprint(w, f.prompt())
			line, err := r.ReadString('\n')
			if err != nil && line == "" {
				fmt.Fprintln(w)
				return json.RawMessage(`{"action":"cancel"}`), nil
			}
			v, ok, why := f.value(strings.TrimRight(line, "\r\n"))
			if why != "" {
				fmt.Fprintln(w, "  "+why)
				continue
			}
			if ok {
				content[f.name] = v
			}
			break
		}
	}
	b, err := json.Marshal(map[string]any{"action": "accept", "content": content})
	return b, err
}

// orderedFields reads the properties in the order the tool wrote them.
func orderedFields(props json.RawMessage, required []string) ([]elicitField, error) {
	if len(props) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(props))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("the elicitation's requestedSchema.properties is not an object")
	}
	var out []elicitField
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		f := elicitField{name: t.(string)}
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("requestedSchema.properties.%s: %v", f.name, err)
		}
		for _, r := range required {
			f.required = f.required || r == f.name
		}
		out = append(out, f)
	}
	return out, nil
}

func (f elicitField) prompt() string {
	label := f.name
	if f.Title != "" {
		label = f.Title
	}
	var notes []string
	if f.Type != "" && f.Type != "string" {
		notes = append(notes, f.Type)
	}
	if len(f.Enum) > 0 {
		var vs []string
		for _, e := range f.Enum {
			vs = append(vs, strings.Trim(string(e), `"`))
		}
		notes = append(notes, strings.Join(vs, "|"))
	}
	if f.Description != "" {
		notes = append(notes, f.Description)
	}
	if len(f.Default) > 0 {
		notes = append(notes, "default "+strings.Trim(string(f.Default), `"`))
	}
	if !f.required {
		notes = append(notes, "optional")
	}
	if len(notes) > 0 {
		label += " (" + strings.Join(notes, "; ") + ")"
	}
	return label + ": "
}

// value types a line by the field's schema; an empty line is the default,
// or nothing for an optional field. why says what to type instead.
func (f elicitField) value(line string) (json.RawMessage, bool, string) {
	if line == "" {
		switch {
		case len(f.Default) > 0:
			return f.Default, true, ""
		case f.required:
			return nil, false, "an answer is required"
		}
		return nil, false, ""
	}
	var v json.RawMessage
	switch f.Type {
	case "number", "integer":
		n, err := strconv.ParseFloat(line, 64)
		if err != nil || (f.Type == "integer" && n != float64(int64(n))) {
			return nil, false, map[string]string{"number": "a number", "integer": "an integer"}[f.Type] + ", please"
		}
		v = json.RawMessage(line)
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			v = json.RawMessage("true")
		case "n", "no", "false":
			v = json.RawMessage("false")
		default:
			return nil, false, "yes or no, please"
		}
	default:
		v, _ = json.Marshal(line)
	}
	if len(f.Enum) > 0 {
		for _, e := range f.Enum {
			if bytes.Equal(bytes.TrimSpace(e), v) {
				return v, true, ""
			}
		}
		return nil, false, "one of the values shown, please"
	}
	return v, true, ""
}
