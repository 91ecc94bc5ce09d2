package catalog

import (
	"encoding/json"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// What resources.json and prompts.json add to a Source (catalog.go keeps
// their stamps and calls these).

// logDeclarations logs what is unusable in a catalog's resources.json and
// prompts.json.
func logDeclarations(log *zap.Logger, c *Catalog) {
	if f := c.Resources; f.Err != nil {
		log.Error("resources list unreadable", zap.String("path", f.Path), zap.Error(f.Err))
	} else {
		for _, p := range f.Problems {
			log.Warn("resources list entry unusable", zap.String("path", f.Path), zap.String("problem", p))
		}
		for _, r := range f.Resources {
			if r.Problem != "" {
				log.Warn("resource cannot be read", zap.String("path", f.Path), zap.String("problem", r.Problem))
			}
		}
		for _, t := range f.Templates {
			if t.Problem != "" {
				log.Warn("resource template cannot be read", zap.String("path", f.Path), zap.String("problem", t.Problem))
			}
		}
	}
	if f := c.Prompts; f.Err != nil {
		log.Error("prompts list unreadable", zap.String("path", f.Path), zap.Error(f.Err))
	} else {
		for _, p := range f.Problems {
			log.Warn("prompts list entry unusable", zap.String("path", f.Path), zap.String("problem", p))
		}
		for _, p := range f.Prompts {
			if p.Problem != "" {
				log.Warn("prompt cannot be served", zap.String("path", f.Path), zap.String("problem", p.Problem))
			}
		}
	}
}

// publishDeclarations reads resources.json and prompts.json again into
// next when their stamps changed since c. A file that breaks keeps its
// last good parse serving (a half-saved edit must not take the server
// down); one that is removed is gone.
func (s *Source) publishDeclarations(c, next *Catalog, st stamps) {
	changed := false
	if st.resources != c.st.resources {
		next.Resources = keepGood(s.log, c.Resources, LoadResources(s.opt.ResourcesFile), c.Resources.Err,
			func(f *ResourcesFile) error { return f.Err },
			"resources list changed but is unusable; the last good one keeps serving", s.opt.ResourcesFile)
		next.st.resources, changed = st.resources, true
	}
	if st.prompts != c.st.prompts {
		next.Prompts = keepGood(s.log, c.Prompts, LoadPrompts(s.opt.PromptsFile), c.Prompts.Err,
			func(f *PromptsFile) error { return f.Err },
			"prompts list changed but is unusable; the last good one keeps serving", s.opt.PromptsFile)
		next.st.prompts, changed = st.prompts, true
	}
	if changed {
		logDeclarations(s.log, next)
	}
}

// Declarations is the catalog with config.json, resources.json and
// prompts.json seen as they are now: a stat of each, and a parse of what
// changed. Like Config, it never lists the tools directory, so the
// connection's reader may call it (initialize, server/discover, the
// resources and prompts methods).
func (s *Source) Declarations() *Catalog {
	c := s.cur.Load()
	st := c.st
	st.config, st.resources, st.prompts = StampOf(s.opt.ConfigFile), StampOf(s.opt.ResourcesFile), StampOf(s.opt.PromptsFile)
	if st == c.st {
		return c
	}
	return s.publish(c, st, nil)
}

// Offers reports whether the server offers resources or prompts: kind is
// "resources" or "prompts", offered when its declaration file exists (even
// a broken one: its requests then say why it cannot be used) or
// config.json declares the capability itself (the SDK-era way to answer
// empty lists).
func (c *Catalog) Offers(kind string) bool {
	switch kind {
	case "resources":
		if !c.Resources.Missing {
			return true
		}
	case "prompts":
		if !c.Prompts.Missing {
			return true
		}
	case "completions":
		if !c.Resources.Missing || !c.Prompts.Missing {
			return true
		}
	}
	return c.Config.Declares(kind)
}

// Capabilities is what initialize and server/discover declare: caps (the
// capabilities as config.json writes them) plus, for each declaration
// file that exists and that config.json does not declare itself,
// resources ({subscribe, listChanged}: mcp_resource_updated and the
// reload watcher deliver both), prompts ({listChanged}) and completions
// (completion/complete answers for every prompt and template). A server
// without the files declares exactly what it declared before they existed;
// capabilities that are not an object are left as written.
func (c *Catalog) Capabilities(caps json.RawMessage) json.RawMessage {
	ms, err := wire.SplitObject(caps)
	if err != nil || wire.FirstByte(caps) != '{' {
		return caps
	}
	has := map[string]bool{}
	for _, m := range ms {
		has[m.Key] = true
	}
	add := func(key, val string, when bool) {
		if when && !has[key] {
			ms = append(ms, wire.Member{Key: key, Val: json.RawMessage(val)})
		}
	}
	add("resources", `{"subscribe":true,"listChanged":true}`, !c.Resources.Missing)
	add("prompts", `{"listChanged":true}`, !c.Prompts.Missing)
	add("completions", `{}`, !c.Resources.Missing || !c.Prompts.Missing)
	if len(ms) == len(has) {
		return caps
	}
	return wire.Object(ms...)
}

// ListChanged reports whether the server tells clients that kind's list
// changed ("tools", "resources", "prompts"): its declared capability has
// listChanged true.
func (c *Catalog) ListChanged(kind string) bool {
	var caps map[string]struct {
		ListChanged bool `json:"listChanged"`
	}
	_ = json.Unmarshal(c.Capabilities(c.Config.Capabilities()), &caps)
	return caps[kind].ListChanged
}

// Subscribes reports whether the declared resources capability offers
// subscribe.
func (c *Catalog) Subscribes() bool {
	var caps struct {
		Resources struct {
			Subscribe bool `json:"subscribe"`
		} `json:"resources"`
	}
	return json.Unmarshal(c.Capabilities(c.Config.Capabilities()), &caps) == nil && caps.Resources.Subscribe
}
