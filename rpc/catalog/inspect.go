package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"

	"github.com/mcp-bashd/mcp-bashd/sandbox"
	"github.com/mcp-bashd/mcp-bashd/schema"
)

// ToolInfo describes one tools.json entry for people (mcp-bashd tools,
// mcp-bashd check).
type ToolInfo struct {
	Name        string
	Description string
	Line        int // line of the entry's name in the file (0: unknown)
	HasSchema   bool
	SchemaErr   error
	SandboxErr  error            // x-mcp-bashd's limits, filesystem or network are unusable
	Sandbox     *sandbox.Spec    // the limits it declares (nil: none, or unusable)
	Ignored     []schema.Ignored // inputSchema keywords not enforced as written
	Args        []ArgInfo
	ValidName   bool   // a name a bash function can carry
	InputType   string // the inputSchema's top-level type ("" when it names none)
}

// ArgInfo is one property of an inputSchema.
type ArgInfo struct {
	Name, Type, Description string
	Required                bool
	Enum                    []string // the allowed values, as JSON text
}

// InspectTools reads a tools file the way the server does and describes
// each entry. The error names the file (and the line of a syntax error).
func InspectTools(path string) ([]ToolInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := LoadTools(path)
	if c.Err != nil {
		return nil, c.Err
	}
	if c.Unusable {
		return nil, fmt.Errorf("\"tools\" holds entries that are not objects")
	}
	var out []ToolInfo
	seen := map[string]int{}
	for _, t := range c.Order {
		ti := ToolInfo{Name: t.Name, HasSchema: t.HasSchema, SchemaErr: t.SchemaErr, SandboxErr: t.SandboxErr, Sandbox: t.Sandbox, ValidName: ValidName.MatchString(t.Name)}
		if t.Schema != nil {
			ti.Ignored = t.Schema.Ignored()
		}
		ti.Line = lineOf(data, t.Name, seen[t.Name])
		seen[t.Name]++
		out = append(out, ti)
	}
	// Descriptions and arguments come from the raw entries.
	var raw struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(data, &raw)
	var entries []rawEntry
	if json.Unmarshal(raw.Tools, &entries) != nil {
		// tools as an object map: its values are the entries.
		var m map[string]json.RawMessage
		if json.Unmarshal(raw.Tools, &m) == nil {
			vals := make([]json.RawMessage, 0, len(m))
			for _, v := range m {
				vals = append(vals, v)
			}
			b, _ := json.Marshal(vals)
			_ = json.Unmarshal(b, &entries)
		}
	}
	for i := range out {
		for _, e := range entries {
			if e.Name == out[i].Name {
				describe(&out[i], e)
				break
			}
		}
	}
	return out, nil
}

// rawEntry is what tools and call show of a tools.json entry.
type rawEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema struct {
		Type       any `json:"type"`
		Properties map[string]struct {
			Type        any               `json:"type"`
			Description string            `json:"description"`
			Enum        []json.RawMessage `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	} `json:"inputSchema"`
}

// describe fills ti's description and arguments from its raw entry:
// required arguments first, then by name.
func describe(ti *ToolInfo, e rawEntry) {
	ti.Description = e.Description
	if e.InputSchema.Type != nil {
		ti.InputType = typeName(e.InputSchema.Type)
	}
	req := map[string]bool{}
	for _, r := range e.InputSchema.Required {
		req[r] = true
	}
	for name, p := range e.InputSchema.Properties {
		a := ArgInfo{Name: name, Type: typeName(p.Type), Description: p.Description, Required: req[name]}
		for _, v := range p.Enum {
			a.Enum = append(a.Enum, string(v))
		}
		ti.Args = append(ti.Args, a)
	}
	sort.Slice(ti.Args, func(a, b int) bool {
		if ti.Args[a].Required != ti.Args[b].Required {
			return ti.Args[a].Required
		}
		return ti.Args[a].Name < ti.Args[b].Name
	})
}

func typeName(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		var b bytes.Buffer
		for i, x := range v {
			if i > 0 {
				b.WriteString("|")
			}
			fmt.Fprint(&b, x)
		}
		return b.String()
	}
	return "any"
}

var nameKeyRE = regexp.MustCompile(`"name"\s*:\s*("(?:[^"\\]|\\.)*")`)

// lineOf finds the line of the nth (from 0) `"name": "<name>"` member.
func lineOf(data []byte, name string, nth int) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		for _, m := range nameKeyRE.FindAllSubmatch(line, -1) {
			var v string
			if json.Unmarshal(m[1], &v) == nil && v == name {
				if nth == 0 {
					return i + 1
				}
				nth--
			}
		}
	}
	return 0
}
