package mcp

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// promptParams are prompts/get's params.
type promptParams struct {
	name string
	args json.RawMessage // as written; promptArgs checks them
	rounds
}

func decodePrompt(r *request) (promptParams, *wire.Error) {
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		roundsJSON
	}
	if wire.FirstByte(r.Msg.Params) != '{' || json.Unmarshal(r.Msg.Params, &p) != nil || p.Name == nil {
		return promptParams{}, wire.InvalidParams("name is required and must be a string")
	}
	return promptParams{name: *p.Name, args: p.Arguments, rounds: p.rounds()}, nil
}

// getPrompt answers prompts/get: the declared prompt's required arguments
// are checked, then prompt_NAME runs with the arguments as a JSON object
// in $1. Its output is one user text message; mcp_message (and mcp_text,
// mcp_image, mcp_audio, mcp_resource) add messages before it.
func (c *session) getPrompt(r *request, p promptParams) (inFlightRun, *wire.Error) {
	s, cat, id := c.srv, r.cat, r.Msg.ID
	pr := cat.Prompts.Lookup(p.name)
	if pr == nil {
		return nil, wire.NewError(wire.CodeInvalidParams, "Prompt not found: "+p.name)
	}
	args, why := promptArgs(pr, p.args)
	if why != "" {
		return nil, wire.InvalidParams(why)
	}
	fn := "prompt_" + pr.Name
	switch {
	case pr.Problem != "":
		return nil, wire.Internal("Cannot get prompt " + pr.Name + ": " + pr.Problem)
	case !s.opt.Snapshot().HasFunction(fn):
		return nil, wire.Internal("Cannot get prompt " + pr.Name + ": the server script defines no function " + fn)
	}
	cfg := cat.Config
	f := funcCall{fn: fn, argv: []string{string(args)}, timeout: pr.Timeout}
	if r.modern() {
		mc, e := newMRTR(s.states, p.rounds, "prompts/get", pr.Name, args, r.caps)
		if e != nil {
			return nil, e
		}
		f.mrtr = mc
	}
	return c.funcRun(cfg, f, func(oc supervisor.Outcome) transport.Response {
		if res, ok := f.mrtr.answer(id, oc, cfg, "prompt "+pr.Name); ok {
			return res
		}
		if failed(oc) {
			return funcFailed(id, fn, oc)
		}
		b, why := s.promptMessages(fn, pr.Description, oc)
		if why != "" {
			return transport.Response{ID: id, Err: wire.Internal("Cannot get prompt " + pr.Name + ": " + why)}
		}
		if r.modern() {
			b.insertMembers(membersOf(modernMembers(nil, cfg.ServerInfo(), nil)))
		}
		return transport.Response{ID: id, Body: b}
	}), nil
}

// promptArgs checks a prompts/get's arguments against the declaration: an
// object of strings ("arguments" absent or null is {}) holding every
// required argument. It returns them compacted, or why they are refused.
func promptArgs(pr *catalog.Prompt, raw json.RawMessage) (json.RawMessage, string) {
	if len(raw) == 0 || wire.FirstByte(raw) == 'n' {
		raw = json.RawMessage(`{}`)
	}
	var args map[string]json.RawMessage
	if wire.FirstByte(raw) != '{' || json.Unmarshal(raw, &args) != nil {
		return nil, "arguments must be an object"
	}
	if path, dup := wire.DuplicateKey(raw); dup {
		return nil, "arguments" + path + " is given more than once"
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if wire.FirstByte(args[k]) != '"' {
			return nil, "argument " + strconv.Quote(k) + " must be a string"
		}
	}
	var missing []string
	for _, a := range pr.Args {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, strconv.Quote(a.Name))
		}
	}
	if len(missing) > 0 {
		return nil, "prompt " + pr.Name + " requires argument " + strings.Join(missing, ", ")
	}
	return wire.Compact(raw), ""
}

// promptMessages is the GetPromptResult of a run: a message per item the
// function added, each with the role mcp_message gave it (user when
// none), then its output, trailing newlines removed, as one user text
// message — always when nothing else was added, else when it printed
// anything.
func (s *Server) promptMessages(fn, description string, oc supervisor.Outcome) (*body, string) {
	var b body
	b.json("{")
	if description != "" {
		b.json(`"description":`)
		b.str(description)
		b.json(",")
	}
	b.json(`"messages":[`)
	n := 0
	message := func(role string, it supervisor.Item) {
		if n > 0 {
			b.json(",")
		}
		n++
		b.json(`{"role":`)
		b.str(role)
		b.json(`,"content":`)
		b.contentItem(it)
		b.json("}")
	}
	for _, it := range oc.Items {
		role := or(it.Role, "user")
		if role != "user" && role != "assistant" {
			return nil, "mcp_message role " + strconv.Quote(role) + " is neither user nor assistant"
		}
		switch it.Kind {
		case "text", "image", "audio", "resource":
			message(role, it)
		default:
			s.log.Warn("content ignored", zap.String("function", fn), zap.String("problem", it.Kind+" is not prompt message content"))
		}
	}
	if text := trimNewlines(oc.Output); text != "" || n == 0 {
		message("user", supervisor.Item{Kind: "text", Text: text})
	}
	b.json("]")
	b.json("}") // its own part: insertMembers adds before it
	return &b, ""
}

// completionMax is how many values one completion result may carry (the
// schema's maxItems).
const completionMax = 100

// completeParams are completion/complete's params.
type completeParams struct {
	refType, refName, refURI string
	argName, argValue        string
	context                  json.RawMessage // context.arguments, {} unless an object
}

func decodeComplete(r *request) (completeParams, *wire.Error) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"context"`
	}
	if wire.FirstByte(r.Msg.Params) != '{' || json.Unmarshal(r.Msg.Params, &p) != nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return completeParams{}, wire.InvalidParams("ref and argument {name, value} are required")
	}
	cp := completeParams{refType: p.Ref.Type, refName: p.Ref.Name, refURI: p.Ref.URI,
		argName: *p.Argument.Name, argValue: *p.Argument.Value, context: p.Context.Arguments}
	if wire.FirstByte(cp.context) != '{' {
		cp.context = json.RawMessage(`{}`)
	}
	return cp, nil
}

// complete answers completion/complete: complete_NAME runs, for the
// prompt or resource template the ref names, with the argument's name and
// value and the other arguments already chosen (context.arguments, {}
// when none) as a JSON object; each line it prints is a value. The first
// 100 are returned, total counts them all. Without a complete_NAME
// function the answer has no values.
func (c *session) complete(r *request, p completeParams) (inFlightRun, *wire.Error) {
	s, cat, id := c.srv, r.cat, r.Msg.ID
	name, timeout, werr := completionTarget(cat, p.refType, p.refName, p.refURI)
	if werr != nil {
		return nil, werr
	}
	for _, v := range []string{p.argName, p.argValue} {
		if strings.IndexByte(v, 0) >= 0 {
			return nil, wire.InvalidParams("argument holds a NUL character")
		}
	}
	cfg := cat.Config
	respond := func(values []string, total int, more bool) transport.Response {
		res := object(field{"completion", object(
			field{"values", wire.Marshal(values)},
			field{"total", json.RawMessage(strconv.Itoa(total))},
			field{"hasMore", json.RawMessage(boolText(more))},
		)})
		if r.modern() {
			res = modernResult(res, cfg.ServerInfo(), nil)
		}
		return transport.Response{ID: id, Result: res}
	}
	fn := "complete_" + name
	if !s.opt.Snapshot().HasFunction(fn) {
		r.Out.Respond(respond([]string{}, 0, false))
		return nil, nil
	}
	argv := []string{p.argName, p.argValue, string(wire.Compact(p.context))}
	return c.funcRun(cfg, funcCall{fn: fn, argv: argv, timeout: timeout}, func(oc supervisor.Outcome) transport.Response {
		if failed(oc) {
			return funcFailed(id, fn, oc)
		}
		values, total := completionValues(asString(oc.Output))
		// Output past the cap was not read: there are more values than
		// total counts.
		return respond(values, total, total > len(values) || oc.Truncated > 0)
	}), nil
}

// completionTarget is the prompt or resource template a completion/complete
// ref names: its name (complete_NAME) and timeout.
func completionTarget(cat *catalog.Catalog, typ, name, uri string) (string, time.Duration, *wire.Error) {
	switch typ {
	case "ref/prompt":
		pr := cat.Prompts.Lookup(name)
		if pr == nil {
			return "", 0, wire.NewError(wire.CodeInvalidParams, "Prompt not found: "+name)
		}
		return pr.Name, pr.Timeout, nil
	case "ref/resource":
		t := cat.Resources.TemplateFor(uri)
		if t == nil {
			return "", 0, wire.NewError(wire.CodeInvalidParams, "Resource template not found: "+uri)
		}
		return t.Name, t.Timeout, nil
	}
	return "", 0, wire.InvalidParams("ref.type must be ref/prompt or ref/resource")
}

// completionValues are a complete_ function's output lines (empty ones
// skipped), at most completionMax of them, and how many there were.
func completionValues(out string) ([]string, int) {
	values := []string{}
	total := 0
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSuffix(line, "\r"); line == "" {
			continue
		}
		if total++; len(values) < completionMax {
			values = append(values, line)
		}
	}
	return values, total
}
