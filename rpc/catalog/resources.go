package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/mcp-bashd/mcp-bashd/internal/uritemplate"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// ResourcesFile is one parse of resources.json, beside tools.json:
//
//	{"resources": [{"uri": "notes://all", "name": "all", "mimeType": "text/plain", …}],
//	 "resourceTemplates": [{"uriTemplate": "notes://{id}", "name": "note", …}]}
//
// Each entry has the fields the MCP spec gives a Resource or a
// ResourceTemplate, published as written (the settings key removed), and
// is served by the bash function resource_<name>. The file is optional: a
// server without it offers no resources and declares no resources
// capability, as before it existed.
type ResourcesFile struct {
	Path    string
	Missing bool  // no file: no resources
	Err     error // the file exists but does not hold one JSON object
	// Resources and Templates are the usable entries, in order.
	Resources []*Resource
	Templates []*ResourceTemplate
	// Problems are entries left out of the lists, and why.
	Problems []string
	// List and TemplateList are the resources/list and
	// resources/templates/list results.
	List, TemplateList json.RawMessage
	byURI              map[string]*Resource
}

// Resource is a static resource: one URI, read by resource_<Name>.
type Resource struct {
	Name, URI string
	MIME      string // the declared mimeType; "" when none
	Timeout   time.Duration
	// Problem, when set, says why the entry cannot be read (its name is
	// not a bash function suffix); it is still listed, as declared.
	Problem string
}

// ResourceTemplate is a family of URIs (RFC 6570), read by resource_<Name>
// with the matched variables.
type ResourceTemplate struct {
	Name, URITemplate string
	MIME              string
	Timeout           time.Duration
	Template          *uritemplate.Template // nil when Problem says it does not parse
	Problem           string
}

// LoadResources parses resources.json.
func LoadResources(path string) *ResourcesFile {
	f := &ResourcesFile{Path: path, byURI: map[string]*Resource{}}
	ms, err := readObjectFile(path)
	if errors.Is(err, fs.ErrNotExist) || path == "" {
		f.Missing = true
	} else if err != nil {
		f.Err = err
	}
	var resources, templates []json.RawMessage
	for _, m := range ms {
		switch m.Key {
		case "resources":
			resources = entries(m.Val, "resources", &f.Problems)
		case "resourceTemplates":
			templates = entries(m.Val, "resourceTemplates", &f.Problems)
		}
	}
	var pub []json.RawMessage
	for i, raw := range resources {
		r, p, why := parseResource(raw)
		if why != "" {
			f.Problems = append(f.Problems, fmt.Sprintf("resources[%d]: %s; left out", i, why))
			continue
		}
		if f.byURI[r.URI] != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("resources[%d]: uri %q is declared more than once; left out", i, r.URI))
			continue
		}
		f.byURI[r.URI] = r
		f.Resources = append(f.Resources, r)
		pub = append(pub, p)
	}
	f.List = listOf("resources", pub)
	pub = nil
	for i, raw := range templates {
		t, p, why := parseTemplate(raw)
		if why != "" {
			f.Problems = append(f.Problems, fmt.Sprintf("resourceTemplates[%d]: %s; left out", i, why))
			continue
		}
		f.Templates = append(f.Templates, t)
		pub = append(pub, p)
	}
	f.TemplateList = listOf("resourceTemplates", pub)
	return f
}

// entries are the items of an array member; anything else is a problem.
func entries(val json.RawMessage, key string, problems *[]string) []json.RawMessage {
	var items []json.RawMessage
	if wire.FirstByte(val) != '[' || json.Unmarshal(val, &items) != nil {
		*problems = append(*problems, key+" is not an array; ignored")
		return nil
	}
	return items
}

// declEntry is what every declared resource, template and prompt shares:
// a string name, string fields by key, the settings, and its public JSON.
type declEntry struct {
	name    string
	strs    map[string]string
	timeout time.Duration
	public  json.RawMessage
}

// parseEntry reads one declaration object; why says what makes it
// unusable ("" when it is usable). required are string fields it must have.
func parseEntry(raw json.RawMessage, required ...string) (declEntry, string) {
	var d declEntry
	ms, err := wire.SplitObject(raw)
	if wire.FirstByte(raw) != '{' || err != nil {
		return d, "not a JSON object"
	}
	d.strs = map[string]string{}
	public := make([]wire.Member, 0, len(ms))
	for _, m := range ms {
		if m.Key == SettingsKey {
			d.timeout, _ = parseSettings(m.Val)
			continue
		}
		var s string
		if json.Unmarshal(m.Val, &s) == nil {
			d.strs[m.Key] = s
		}
		public = append(public, m)
	}
	for _, k := range required {
		if _, ok := d.strs[k]; !ok {
			return d, "no string " + k
		}
	}
	d.name = d.strs["name"]
	d.public = wire.Object(public...)
	return d, ""
}

func parseResource(raw json.RawMessage) (*Resource, json.RawMessage, string) {
	d, why := parseEntry(raw, "uri", "name")
	if why != "" {
		return nil, nil, why
	}
	r := &Resource{Name: d.name, URI: d.strs["uri"], MIME: d.strs["mimeType"], Timeout: d.timeout}
	if !ValidName.MatchString(r.Name) {
		r.Problem = fmt.Sprintf("resource name %q is not a valid bash function suffix ([a-zA-Z_][a-zA-Z0-9_]*), so no resource_ function can serve it", r.Name)
	}
	return r, d.public, ""
}

func parseTemplate(raw json.RawMessage) (*ResourceTemplate, json.RawMessage, string) {
	d, why := parseEntry(raw, "uriTemplate", "name")
	if why != "" {
		return nil, nil, why
	}
	t := &ResourceTemplate{Name: d.name, URITemplate: d.strs["uriTemplate"], MIME: d.strs["mimeType"], Timeout: d.timeout}
	var err error
	switch t.Template, err = uritemplate.Parse(t.URITemplate); {
	case err != nil:
		t.Problem = fmt.Sprintf("uriTemplate %q: %v", t.URITemplate, err)
	case !ValidName.MatchString(t.Name):
		t.Problem = fmt.Sprintf("resource template name %q is not a valid bash function suffix ([a-zA-Z_][a-zA-Z0-9_]*), so no resource_ function can serve it", t.Name)
	}
	return t, d.public, ""
}

// listOf is {"KEY":[entries…]}.
func listOf(key string, entries []json.RawMessage) json.RawMessage {
	b := []byte(`{"` + key + `":[`)
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// Target is what serves one resources/read: the declaration that matched
// its URI and, for a template, the variables.
type Target struct {
	Name    string
	MIME    string
	Timeout time.Duration
	Vars    map[string]string // nil for a static resource
	Problem string            // why it cannot be served ("" when it can)
}

// Find is the declaration that serves uri: a static resource whose uri is
// exactly uri, else the first template (in declaration order) that
// matches it. false when none does.
func (f *ResourcesFile) Find(uri string) (Target, bool) {
	if r := f.byURI[uri]; r != nil {
		return Target{Name: r.Name, MIME: r.MIME, Timeout: r.Timeout, Problem: r.Problem}, true
	}
	for _, t := range f.Templates {
		if t.Template == nil {
			continue
		}
		if vars, ok := t.Template.Match(uri); ok {
			return Target{Name: t.Name, MIME: t.MIME, Timeout: t.Timeout, Vars: vars, Problem: t.Problem}, true
		}
	}
	return Target{}, false
}

// TemplateFor is the template declared with exactly uriTemplate (what a
// completion/complete ref/resource names), or nil.
func (f *ResourcesFile) TemplateFor(uriTemplate string) *ResourceTemplate {
	for _, t := range f.Templates {
		if t.URITemplate == uriTemplate {
			return t
		}
	}
	return nil
}
