package catalog

import (
	"bytes"
	"encoding/json"
	"regexp"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/sandbox"
	"github.com/mcp-bashd/mcp-bashd/schema"
)

// SettingsKey is the key of a tools.json entry that holds mcp-bashd's own
// per-tool settings. It is never sent to clients. Shape:
//
//	"x-mcp-bashd": {"timeout": "30s", "requiresClientCapabilities": {...},
//	                "task": "optional", "taskTtl": "1h",
//	                "limits": {...}, "filesystem": {...}, "network": false}
//
// (the timeout a Go duration or a number of seconds; the sandbox keys are
// package sandbox's, see sandbox.Spec; task and taskTtl: see TaskSupport).
const SettingsKey = "x-mcp-bashd"

// ValidName is what a tool name must look like to name a bash function
// tool_<name> (the SDK's rule).
var ValidName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Tool is one declared tool: a tools.json entry or a line of a tools
// directory's `EXE list`. Immutable once built.
type Tool struct {
	Name      string
	HasSchema bool // inputSchema present and not null
	Schema    *schema.Schema
	SchemaErr error // the inputSchema does not compile; the text is user-facing
	Timeout   time.Duration
	Output    *schema.Schema  // compiled outputSchema; nil when none (or it does not compile)
	Requires  json.RawMessage // client capabilities the tool needs, an object; nil for none
	Exe       string          // a tools-directory executable; "" for a bash function
	// ParamHeaders maps top-level argument names to the HTTP header names
	// their schema assigns with "x-mcp-header" (Mcp-Param-<Name>).
	ParamHeaders map[string]string
	// Sandbox is the tool's limits, filesystem and network keys (nil: none
	// declared); SandboxErr says why they are unusable (the tool's calls
	// are then refused: a limit must never be silently dropped).
	Sandbox    *sandbox.Spec
	SandboxErr error
	// TaskSupport is whether the tool runs as a task (rpc/mcp/tasks.go):
	// "optional", "required" or "forbidden" from x-mcp-bashd's "task" or,
	// when that is absent, the entry's own execution.taskSupport; "" when
	// neither says.
	TaskSupport string
	// TaskTTL is how long a finished task's result is kept (x-mcp-bashd's
	// "taskTtl"); 0: the server's default.
	TaskTTL time.Duration
	// TaskAfterInput (x-mcp-bashd "taskAfterInput": true): in 2026-07-28
	// the tool gathers its input synchronously (input_required rounds) and
	// becomes a task on the retry that brings the answers.
	TaskAfterInput bool
}

// TaskCapable reports whether the tool may run as a task.
func (t *Tool) TaskCapable() bool { return t.TaskSupport == "optional" || t.TaskSupport == "required" }

// ToolsFile is one parse of tools.json. Errors are recorded rather than
// returned: the server keeps serving and each request reports what
// applies to it.
type ToolsFile struct {
	Path     string
	Err      error // missing, unparseable or not one object
	Unusable bool  // "tools" holds entries that are not objects ({"tools":[1]})
	Order    []*Tool
	byName   map[string][]*Tool
	// List is the tools/list result, settings keys removed.
	List json.RawMessage
	// Cache is the file's own top-level ttlMs and cacheScope, each nil
	// when absent or unusable (the 2026 SDK's tools file may carry them).
	Cache CacheHints
	// Tasks: some tool may run as a task, so the server advertises tasks.
	Tasks bool
}

// Declared returns the entries naming name (possibly several).
func (f *ToolsFile) Declared(name string) []*Tool { return f.byName[name] }

// LoadTools parses tools.json and compiles every schema once.
func LoadTools(path string) *ToolsFile {
	f := &ToolsFile{Path: path, byName: map[string][]*Tool{}}
	fields, err := readObjectFile(path)
	if err != nil {
		f.Err = err
		return f
	}
	var tools json.RawMessage
	for _, m := range fields {
		switch m.Key { // the last one wins, as in jq
		case "tools":
			tools = m.Val
		case "ttlMs":
			f.Cache.TTL = validTTL(m.Val)
		case "cacheScope":
			f.Cache.Scope = validScope(m.Val)
		}
	}
	items, err := toolItems(tools)
	if err != nil {
		f.Err = err
		return f
	}
	public := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		switch wire.FirstByte(it) {
		case 'n':
			public = append(public, it)
			continue
		case '{':
		default:
			f.Unusable = true
			public = append(public, it)
			continue
		}
		t, pub := ParseTool(it)
		public = append(public, pub)
		if t != nil {
			f.Tasks = f.Tasks || t.TaskCapable()
			f.Order = append(f.Order, t)
			f.byName[t.Name] = append(f.byName[t.Name], t)
		}
	}
	f.List = listResult(public)
	return f
}

// toolItems are the entries of "tools" as the SDK's `.tools[]?` yields
// them: an array's items, an object's values, nothing for anything else.
func toolItems(tools json.RawMessage) ([]json.RawMessage, error) {
	var items []json.RawMessage
	switch wire.FirstByte(tools) {
	case '[':
		if err := json.Unmarshal(tools, &items); err != nil {
			return nil, err
		}
	case '{':
		ms, err := wire.SplitObject(tools)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			items = append(items, m.Val)
		}
	}
	return items, nil
}

func listResult(entries []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, p := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// ParseTool reads one tool entry; it returns the entry (nil when it has no
// string name) and its public JSON with the settings key removed.
func ParseTool(raw json.RawMessage) (*Tool, json.RawMessage) {
	ms, err := wire.SplitObject(raw)
	if err != nil {
		return nil, raw
	}
	t := &Tool{}
	var named, hasExecution bool
	var input, output json.RawMessage
	public := make([]wire.Member, 0, len(ms)+1)
	for _, m := range ms {
		switch m.Key {
		case SettingsKey:
			t.Timeout, t.Requires = parseSettings(m.Val)
			t.Sandbox, t.SandboxErr = sandbox.ParseSettings(m.Val)
			t.TaskSupport, t.TaskTTL, t.TaskAfterInput = parseTaskSettings(m.Val)
			continue
		case "execution":
			hasExecution = true
		case "name":
			named = json.Unmarshal(m.Val, &t.Name) == nil
		case "inputSchema":
			t.HasSchema = wire.FirstByte(m.Val) != 'n'
			input = m.Val
		case "outputSchema":
			output = m.Val
		}
		public = append(public, m)
	}
	if t.TaskSupport == "" {
		t.TaskSupport = executionTaskSupport(ms)
	} else if !hasExecution {
		// Clients learn it from tools/list (2025-11-25's ToolExecution).
		public = append(public, wire.Member{Key: "execution", Val: wire.Object(wire.Member{Key: "taskSupport", Val: wire.Quote(t.TaskSupport)})})
	}
	pub := wire.Object(public...)
	if !named {
		return nil, pub
	}
	t.ParamHeaders = paramHeaders(input)
	// Compiled once the name is known: keys may come in any order.
	if t.HasSchema {
		t.Schema, t.SchemaErr = schema.Compile(t.Name, input)
	}
	if wire.FirstByte(output) == '{' {
		// An outputSchema is mcp-bashd's own addition: one that is not
		// JSON Schema as written is not used at all, as before.
		if out, err := schema.Compile(t.Name, output); err == nil && out.Ignored() == nil {
			t.Output = out
		}
	}
	return t, pub
}

func parseSettings(raw json.RawMessage) (time.Duration, json.RawMessage) {
	var p struct {
		Timeout  json.RawMessage `json:"timeout"`
		Requires json.RawMessage `json:"requiresClientCapabilities"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return 0, nil
	}
	var requires json.RawMessage
	if wire.FirstByte(p.Requires) == '{' {
		requires = p.Requires
	}
	var secs float64
	if json.Unmarshal(p.Timeout, &secs) == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second)), requires
	}
	var s string
	if json.Unmarshal(p.Timeout, &s) == nil {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d, requires
		}
	}
	return 0, requires
}

// parseTaskSettings reads x-mcp-bashd's "task" (one of the ToolExecution
// values), "taskTtl" (a Go duration or a number of seconds) and
// "taskAfterInput".
func parseTaskSettings(raw json.RawMessage) (string, time.Duration, bool) {
	var p struct {
		Task       json.RawMessage `json:"task"`
		TTL        json.RawMessage `json:"taskTtl"`
		AfterInput bool            `json:"taskAfterInput"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return "", 0, false
	}
	var support string
	_ = json.Unmarshal(p.Task, &support)
	switch support {
	case "optional", "required", "forbidden":
	default:
		support = ""
	}
	var ttl time.Duration
	var secs float64
	var str string
	if json.Unmarshal(p.TTL, &secs) == nil && secs > 0 {
		ttl = time.Duration(secs * float64(time.Second))
	} else if json.Unmarshal(p.TTL, &str) == nil {
		if d, err := time.ParseDuration(str); err == nil && d > 0 {
			ttl = d
		}
	}
	return support, ttl, p.AfterInput
}

// executionTaskSupport is the entry's own execution.taskSupport, "" when
// it has none.
func executionTaskSupport(ms []wire.Member) string {
	for _, m := range ms {
		if m.Key != "execution" {
			continue
		}
		var e struct {
			TaskSupport string `json:"taskSupport"`
		}
		if json.Unmarshal(m.Val, &e) == nil {
			switch e.TaskSupport {
			case "optional", "required", "forbidden":
				return e.TaskSupport
			}
		}
	}
	return ""
}

func paramHeaders(schema json.RawMessage) map[string]string {
	var sc struct {
		Properties map[string]struct {
			Header string `json:"x-mcp-header"`
		} `json:"properties"`
	}
	if wire.FirstByte(schema) != '{' || json.Unmarshal(schema, &sc) != nil {
		return nil
	}
	var m map[string]string
	for name, p := range sc.Properties {
		if p.Header != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = p.Header
		}
	}
	return m
}
