package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// PromptsFile is one parse of prompts.json, beside tools.json:
//
//	{"prompts": [{"name": "summarize", "description": "…",
//	              "arguments": [{"name": "topic", "description": "…", "required": true}]}]}
//
// Each entry has the fields the MCP spec gives a Prompt, published as
// written (the settings key removed), and is served by the bash function
// prompt_<name>. The file is optional: without it the server offers no
// prompts and declares no prompts capability.
type PromptsFile struct {
	Path     string
	Missing  bool
	Err      error
	Prompts  []*Prompt
	Problems []string
	List     json.RawMessage // the prompts/list result
	byName   map[string]*Prompt
}

// Prompt is one declared prompt.
type Prompt struct {
	Name        string
	Description string
	Args        []PromptArg
	Timeout     time.Duration
	Problem     string // why it cannot be served ("" when it can)
}

// PromptArg is one declared argument.
type PromptArg struct {
	Name     string
	Required bool
}

// LoadPrompts parses prompts.json.
func LoadPrompts(path string) *PromptsFile {
	f := &PromptsFile{Path: path, byName: map[string]*Prompt{}}
	ms, err := readObjectFile(path)
	if errors.Is(err, fs.ErrNotExist) || path == "" {
		f.Missing = true
	} else if err != nil {
		f.Err = err
	}
	var items []json.RawMessage
	for _, m := range ms {
		if m.Key == "prompts" {
			items = entries(m.Val, "prompts", &f.Problems)
		}
	}
	var pub []json.RawMessage
	for i, raw := range items {
		p, public, why := parsePrompt(raw)
		if why == "" && f.byName[p.Name] != nil {
			why = fmt.Sprintf("prompt %q is declared more than once", p.Name)
		}
		if why != "" {
			f.Problems = append(f.Problems, fmt.Sprintf("prompts[%d]: %s; left out", i, why))
			continue
		}
		f.byName[p.Name] = p
		f.Prompts = append(f.Prompts, p)
		pub = append(pub, public)
	}
	f.List = listOf("prompts", pub)
	return f
}

func parsePrompt(raw json.RawMessage) (*Prompt, json.RawMessage, string) {
	d, why := parseEntry(raw, "name")
	if why != "" {
		return nil, nil, why
	}
	p := &Prompt{Name: d.name, Description: d.strs["description"], Timeout: d.timeout}
	ms, _ := wire.SplitObject(raw)
	for _, m := range ms {
		if m.Key != "arguments" {
			continue
		}
		var args []struct {
			Name     *string `json:"name"`
			Required bool    `json:"required"`
		}
		if json.Unmarshal(m.Val, &args) != nil {
			return nil, nil, "arguments is not an array of objects"
		}
		for j, a := range args {
			if a.Name == nil {
				return nil, nil, fmt.Sprintf("arguments[%d] has no string name", j)
			}
			p.Args = append(p.Args, PromptArg{Name: *a.Name, Required: a.Required})
		}
	}
	if !ValidName.MatchString(p.Name) {
		p.Problem = fmt.Sprintf("prompt name %q is not a valid bash function suffix ([a-zA-Z_][a-zA-Z0-9_]*), so no prompt_ function can serve it", p.Name)
	}
	return p, d.public, ""
}

// Lookup is the prompt declared as name, or nil.
func (f *PromptsFile) Lookup(name string) *Prompt { return f.byName[name] }
