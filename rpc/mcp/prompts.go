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

// getPrompt answers prompts/get: the declared prompt's required arguments
// are checked, then prompt_NAME runs with the arguments as a JSON object
// in $1. Its output is one user text message; mcp_message (and mcp_text,
// mcp_image, mcp_audio, mcp_resource) add messages before it.
func (c *session) getPrompt(req *transport.Request, cat *catalog.Catalog) {
	s := c.srv
	id := req.Msg.ID
	fail := func(e *wire.Error) { req.Out.Respond(transport.Response{ID: id, Err: e}) }
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if wire.FirstByte(req.Msg.Params) != '{' || json.Unmarshal(req.Msg.Params, &p) != nil || p.Name == nil {
		fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: name is required and must be a string"))
		return
	}
	pr := cat.Prompts.Lookup(*p.Name)
	if pr == nil {
		fail(wire.Errorf(wire.CodeInvalidParams, "Prompt not found: "+*p.Name))
		return
	}
	args, why := promptArgs(pr, p.Arguments)
	if why != "" {
		fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: "+why))
		return
	}
	fn := "prompt_" + pr.Name
	switch {
	case pr.Problem != "":
		fail(wire.Errorf(wire.CodeInternal, "Cannot get prompt "+pr.Name+": "+pr.Problem))
		return
	case !s.opt.Snapshot().HasFunction(fn):
		fail(wire.Errorf(wire.CodeInternal, "Cannot get prompt "+pr.Name+": the server script defines no function "+fn))
		return
	}
	cfg := cat.Config
	f := funcCall{fn: fn, argv: []string{string(args)}, timeout: pr.Timeout}
	if req.Era == transport.Modern {
		mc, e := newMRTR(s.states, req.Msg.Params, "prompts/get", pr.Name, args, req.Meta.Caps)
		if e != nil {
			fail(e)
			return
		}
		f.mrtr = mc
	}
	c.startFunc(req, cfg, f, func(oc supervisor.Outcome) transport.Response {
		if r, ok := f.mrtr.answer(id, oc, cfg, "prompt "+pr.Name); ok {
			return r
		}
		if failed(oc) {
			return funcFailed(id, fn, oc)
		}
		b, why := s.promptMessages(fn, pr.Description, oc)
		if why != "" {
			return transport.Response{ID: id, Err: wire.Errorf(wire.CodeInternal, "Cannot get prompt "+pr.Name+": "+why)}
		}
		if req.Era == transport.Modern {
			b.insertMembers(membersOf(modernMembers(nil, cfg.ServerInfo(), nil)))
		}
		return transport.Response{ID: id, Body: b}
	})
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
	open := func(role, typ string) {
		if n > 0 {
			b.json(",")
		}
		n++
		b.json(`{"role":`)
		b.str(role)
		b.json(`,"content":{"type":"` + typ + `",`)
	}
	for _, it := range oc.Items {
		role := or(it.Role, "user")
		if role != "user" && role != "assistant" {
			return nil, "mcp_message role " + strconv.Quote(role) + " is neither user nor assistant"
		}
		switch it.Kind {
		case "text":
			open(role, "text")
			b.json(`"text":`)
			b.str(it.Text)
			b.json("}}")
		case "image", "audio":
			open(role, it.Kind)
			b.json(`"data":`)
			b.base64(it.Data)
			b.json(`,"mimeType":`)
			b.str(it.MIME)
			b.json("}}")
		case "resource":
			open(role, "resource")
			b.json(`"resource":{"uri":`)
			b.str(it.URI)
			b.json(`,"mimeType":`)
			b.str(it.MIME)
			b.json(`,"text":`)
			b.str(it.Text)
			b.json("}}}")
		default:
			s.log.Warn("content ignored", zap.String("function", fn), zap.String("problem", it.Kind+" is not prompt message content"))
		}
	}
	if text := trimNewlines(oc.Output); text != "" || n == 0 {
		open("user", "text")
		b.json(`"text":`)
		b.str(text)
		b.json("}}")
	}
	b.json("]")
	b.json("}") // its own part: insertMembers adds before it
	return &b, ""
}

// completionMax is how many values one completion result may carry (the
// schema's maxItems).
const completionMax = 100

// complete answers completion/complete: complete_NAME runs, for the
// prompt or resource template the ref names, with the argument's name and
// value and the other arguments already chosen (context.arguments, {}
// when none) as a JSON object; each line it prints is a value. The first
// 100 are returned, total counts them all. Without a complete_NAME
// function the answer has no values.
func (c *session) complete(req *transport.Request, cat *catalog.Catalog) {
	s := c.srv
	id := req.Msg.ID
	fail := func(e *wire.Error) { req.Out.Respond(transport.Response{ID: id, Err: e}) }
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
	if wire.FirstByte(req.Msg.Params) != '{' || json.Unmarshal(req.Msg.Params, &p) != nil || p.Argument.Name == nil || p.Argument.Value == nil {
		fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: ref and argument {name, value} are required"))
		return
	}
	name, timeout, werr := completionTarget(cat, p.Ref.Type, p.Ref.Name, p.Ref.URI)
	if werr != nil {
		fail(werr)
		return
	}
	for _, v := range []string{*p.Argument.Name, *p.Argument.Value} {
		if strings.IndexByte(v, 0) >= 0 {
			fail(wire.Errorf(wire.CodeInvalidParams, "Invalid params: argument holds a NUL character"))
			return
		}
	}
	ctxArgs := p.Context.Arguments
	if wire.FirstByte(ctxArgs) != '{' {
		ctxArgs = json.RawMessage(`{}`)
	}
	cfg := cat.Config
	respond := func(values []string, total int, more bool) transport.Response {
		res := object(field{"completion", object(
			field{"values", wire.Marshal(values)},
			field{"total", json.RawMessage(strconv.Itoa(total))},
			field{"hasMore", json.RawMessage(boolText(more))},
		)})
		if req.Era == transport.Modern {
			res = modernResult(res, cfg.ServerInfo(), nil)
		}
		return transport.Response{ID: id, Result: res}
	}
	fn := "complete_" + name
	if !s.opt.Snapshot().HasFunction(fn) {
		req.Out.Respond(respond([]string{}, 0, false))
		return
	}
	argv := []string{*p.Argument.Name, *p.Argument.Value, string(wire.Compact(ctxArgs))}
	c.startFunc(req, cfg, funcCall{fn: fn, argv: argv, timeout: timeout}, func(oc supervisor.Outcome) transport.Response {
		if failed(oc) {
			return funcFailed(id, fn, oc)
		}
		values, total := completionValues(asString(oc.Output))
		// Output past the cap was not read: there are more values than
		// total counts.
		return respond(values, total, total > len(values) || oc.Truncated > 0)
	})
}

// completionTarget is the prompt or resource template a completion/complete
// ref names: its name (complete_NAME) and timeout.
func completionTarget(cat *catalog.Catalog, typ, name, uri string) (string, time.Duration, *wire.Error) {
	switch typ {
	case "ref/prompt":
		pr := cat.Prompts.Lookup(name)
		if pr == nil {
			return "", 0, wire.Errorf(wire.CodeInvalidParams, "Prompt not found: "+name)
		}
		return pr.Name, pr.Timeout, nil
	case "ref/resource":
		t := cat.Resources.TemplateFor(uri)
		if t == nil {
			return "", 0, wire.Errorf(wire.CodeInvalidParams, "Resource template not found: "+uri)
		}
		return t.Name, t.Timeout, nil
	}
	return "", 0, wire.Errorf(wire.CodeInvalidParams, "Invalid params: ref.type must be ref/prompt or ref/resource")
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
