package schema

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// printer renders v6's own English text for the rare kinds worded below only
// generically. A message.Printer is safe for concurrent use.
var printer = message.NewPrinter(language.English)

// seg is one step of an instance path: an object key or an array index.
// Whether a v6 token like "1" is an index depends on the instance, so paths
// are resolved against the arguments rather than guessed from the token.
type seg struct {
	key   string
	idx   int
	isIdx bool
}

type leaf struct {
	path []seg
	text string
}

// fallbackMessage words a rejection the SDK would not have caught (a nested
// object, minLength, format, oneOf, ...) from v6's error tree: one line per
// leaf in the SDK's spirit (path, what was expected, what was given), sorted
// by path for a stable text, joined with "; " like the SDK's entries.
func (s *Schema) fallbackMessage(verr *jsonschema.ValidationError, args *jq.Value) string {
	texts := s.leafTexts([]*jsonschema.ValidationError{verr}, args)
	if len(texts) == 0 {
		return "Invalid argument(s): the arguments do not match the tool's inputSchema."
	}
	return "Invalid argument(s): " + strings.Join(texts, "; ") + "."
}

func (s *Schema) leafTexts(errs []*jsonschema.ValidationError, args *jq.Value) []string {
	var leaves []leaf
	for _, e := range errs {
		s.collect(e, args, &leaves)
	}
	slices.SortStableFunc(leaves, func(a, b leaf) int {
		if c := slices.CompareFunc(a.path, b.path, compareSeg); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	})
	texts := make([]string, 0, len(leaves))
	for _, l := range leaves {
		texts = append(texts, l.text)
	}
	return slices.Compact(texts)
}

func compareSeg(a, b seg) int {
	if a.isIdx && b.isIdx {
		return cmp.Compare(a.idx, b.idx)
	}
	return strings.Compare(a.key, b.key)
}

// collect descends through v6's grouping kinds (the root, several errors at
// one location, a $ref, allOf), whose causes are each a violation in their
// own right. anyOf/oneOf stay one leaf: their causes are alternatives, and
// listing them as separate defects would misstate what the caller must fix.
func (s *Schema) collect(e *jsonschema.ValidationError, args *jq.Value, out *[]leaf) {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				s.collect(c, args, out)
			}
			return
		}
	case *kind.AnyOf:
		*out = append(*out, s.alternatives(e, args, "anyOf"))
		return
	case *kind.OneOf:
		if k.Subschemas == nil {
			*out = append(*out, s.alternatives(e, args, "oneOf"))
			return
		}
	}
	path, v := resolve(args, e.InstanceLocation)
	*out = append(*out, leaf{path, s.leafText(e, path, v)})
}

func (s *Schema) alternatives(e *jsonschema.ValidationError, args *jq.Value, kw string) leaf {
	path, _ := resolve(args, e.InstanceLocation)
	alts := make([]string, 0, len(e.Causes))
	for _, c := range e.Causes {
		alts = append(alts, strings.Join(s.leafTexts([]*jsonschema.ValidationError{c}, args), ", "))
	}
	text := subject(path) + verb(path, " matches") + " none of the " + kw + " alternatives"
	if len(alts) > 0 {
		text += " (" + strings.Join(alts, " | ") + ")"
	}
	return leaf{path, text}
}

// leafText is one violation, phrased like the SDK's entries where a
// counterpart exists ("p expected integer, got string (\"5\")", "p=0 below
// minimum 1", "p=\"x\" (allowed: a, b)") and in the same shape otherwise.
func (s *Schema) leafText(e *jsonschema.ValidationError, path []seg, v *jq.Value) string {
	p := subject(path)
	pv := p + "=" + tojson(v)
	raw := s.schemaNode(e.SchemaURL)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		names := typeNames(raw.Get("type"))
		if len(names) == 0 {
			names = k.Want
		}
		return p + " expected " + strings.Join(names, " or ") + ", got " + typeLabel(names, v) + " (" + tojson(v) + ")"
	case *kind.Enum:
		return p + `="` + tostring(v) + `" (allowed: ` + joinJQ(orNode(raw.Get("enum"), k.Want), ", ") + ")"
	case *kind.Const:
		c := raw.Get("const")
		if c == nil {
			c = anyToNode(k.Want)
		}
		return p + `="` + tostring(v) + `" (allowed: ` + joinJQ(&jq.Value{Kind: jq.KindArray, Elems: []*jq.Value{c}}, ", ") + ")"
	case *kind.Pattern:
		return pv + " does not match pattern " + k.Want
	case *kind.Minimum:
		return pv + " below minimum " + boundText(k.Want, raw.Get("minimum"))
	case *kind.Maximum:
		return pv + " above maximum " + boundText(k.Want, raw.Get("maximum"))
	case *kind.ExclusiveMinimum:
		return pv + " not above exclusiveMinimum " + boundText(k.Want, numberOr(raw.Get("exclusiveMinimum"), raw.Get("minimum")))
	case *kind.ExclusiveMaximum:
		return pv + " not below exclusiveMaximum " + boundText(k.Want, numberOr(raw.Get("exclusiveMaximum"), raw.Get("maximum")))
	case *kind.MultipleOf:
		return pv + " not a multiple of " + boundText(k.Want, raw.Get("multipleOf"))
	case *kind.MinLength:
		return pv + " shorter than minLength " + strconv.Itoa(k.Want)
	case *kind.MaxLength:
		return pv + " longer than maxLength " + strconv.Itoa(k.Want)
	case *kind.Format:
		return pv + " is not a valid " + k.Want
	case *kind.Required:
		return "missing required parameter(s): " + childPaths(path, k.Missing, false)
	case *kind.AdditionalProperties:
		return "unknown parameter(s): " + childPaths(path, k.Properties, true)
	case *kind.DependentRequired:
		return "missing parameter(s) " + childPaths(path, k.Missing, false) + " required when " + childPaths(path, []string{k.Prop}, false) + " is present"
	case *kind.Dependency:
		return "missing parameter(s) " + childPaths(path, k.Missing, false) + " required when " + childPaths(path, []string{k.Prop}, false) + " is present"
	case *kind.PropertyNames:
		return childPaths(path, []string{k.Property}, false) + " is not an allowed parameter name"
	case *kind.MinProperties:
		return p + verb(path, " has ") + strconv.Itoa(k.Got) + " parameter(s), fewer than minProperties " + strconv.Itoa(k.Want)
	case *kind.MaxProperties:
		return p + verb(path, " has ") + strconv.Itoa(k.Got) + " parameter(s), more than maxProperties " + strconv.Itoa(k.Want)
	case *kind.MinItems:
		return p + " has " + strconv.Itoa(k.Got) + " item(s), fewer than minItems " + strconv.Itoa(k.Want)
	case *kind.MaxItems:
		return p + " has " + strconv.Itoa(k.Got) + " item(s), more than maxItems " + strconv.Itoa(k.Want)
	case *kind.UniqueItems:
		return p + "[" + strconv.Itoa(k.Duplicates[0]) + "] and " + p + "[" + strconv.Itoa(k.Duplicates[1]) + "] are equal (uniqueItems)"
	case *kind.AdditionalItems:
		return p + " has " + strconv.Itoa(k.Count) + " item(s) beyond those declared (additionalItems)"
	case *kind.Contains:
		return p + " has no item matching contains"
	case *kind.MinContains:
		return p + " has " + strconv.Itoa(len(k.Got)) + " item(s) matching contains, fewer than minContains " + strconv.Itoa(k.Want)
	case *kind.MaxContains:
		return p + " has " + strconv.Itoa(len(k.Got)) + " item(s) matching contains, more than maxContains " + strconv.Itoa(k.Want)
	case *kind.FalseSchema:
		return p + verb(path, " is") + " not allowed"
	case *kind.Not:
		if len(path) == 0 {
			return p + " match the schema under not"
		}
		return pv + " matches the schema under not"
	case *kind.OneOf:
		return p + verb(path, " matches") + " more than one oneOf alternative (" + strconv.Itoa(k.Subschemas[0]) + " and " + strconv.Itoa(k.Subschemas[1]) + ")"
	}
	return p + ": " + e.ErrorKind.LocalizedString(printer)
}

// resolve turns v6's instance tokens into typed path segments and the value
// they reach. v6 only reports locations that exist, so a miss cannot happen;
// it yields a null value rather than a panic all the same.
func resolve(args *jq.Value, tokens []string) ([]seg, *jq.Value) {
	path := make([]seg, 0, len(tokens))
	cur := args
	for _, tok := range tokens {
		if cur != nil && cur.Kind == jq.KindArray {
			if i, ok := parseIndex(tok); ok && i < len(cur.Elems) {
				path = append(path, seg{idx: i, isIdx: true})
				cur = cur.Elems[i]
				continue
			}
		}
		path = append(path, seg{key: tok})
		cur = cur.Get(tok)
	}
	if cur == nil {
		cur = &jq.Value{Kind: jq.KindNull}
	}
	return path, cur
}

// verb agrees a verb with the subject: "arguments" is plural.
func verb(path []seg, v string) string {
	if len(path) > 0 {
		return v
	}
	switch v {
	case " matches":
		return " match"
	case " has ":
		return " have "
	case " is":
		return " are"
	}
	return v
}

func parseIndex(tok string) (int, bool) {
	i, err := strconv.Atoi(tok)
	return i, err == nil && i >= 0 && strconv.Itoa(i) == tok
}

// subject names a location: "arguments" for the whole object, otherwise a
// path like the SDK's "tags[1]", extended with ".key" for nested objects and
// ["key"] for a key that would not read unambiguously after a dot.
func subject(path []seg) string {
	if len(path) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for i, sg := range path {
		switch {
		case sg.isIdx:
			b.WriteString("[" + strconv.Itoa(sg.idx) + "]")
		case simpleKey(sg.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(sg.key)
		default:
			b.WriteByte('[')
			b.Write(jq.AppendString(nil, sg.key))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func simpleKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// childPaths names properties of the object at path, e.g. "config.a, config.b".
// v6 builds some name lists from map iteration, so those are sorted.
func childPaths(path []seg, names []string, sorted bool) string {
	if sorted {
		names = slices.Sorted(slices.Values(names))
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = subject(append(slices.Clip(path), seg{key: n}))
	}
	return strings.Join(out, ", ")
}

// orNode prefers the enum as written; v6's decoded copy has lost member order
// inside objects, so it is only the fallback.
func orNode(n *jq.Value, values []any) *jq.Value {
	if n != nil && n.Kind == jq.KindArray {
		return n
	}
	return anyToNode(values)
}

// anyToNode converts a decoded value back to a jq value, with object keys
// sorted so the text is at least deterministic.
func anyToNode(v any) *jq.Value {
	switch t := v.(type) {
	case bool:
		if t {
			return &jq.Value{Kind: jq.KindTrue}
		}
		return &jq.Value{Kind: jq.KindFalse}
	case json.Number:
		return &jq.Value{Kind: jq.KindNumber, Text: string(t)}
	case string:
		return &jq.Value{Kind: jq.KindString, Text: t}
	case []any:
		n := &jq.Value{Kind: jq.KindArray}
		for _, e := range t {
			n.Elems = append(n.Elems, anyToNode(e))
		}
		return n
	case map[string]any:
		n := &jq.Value{Kind: jq.KindObject}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			n.Keys = append(n.Keys, k)
			n.Elems = append(n.Elems, anyToNode(t[k]))
		}
		return n
	}
	return &jq.Value{Kind: jq.KindNull}
}
