package schema

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Malformed keywords.
//
// The bash SDK read a few keywords and skipped a value it could not use: an
// empty or non-string `type` list, a bound that is not a number (so also
// draft-04's boolean `exclusiveMinimum`), and everything it never read at
// all. A server whose tools worked under it must keep working here, where
// v6 refuses to compile a schema holding any keyword whose value is not
// JSON Schema, and every call to the tool would fail. So Compile leaves out
// exactly those keywords — the metaschema, through v6, says which — and
// records each as Ignored, for the load-time log and `mcp-bashd check`:
//
//   - a keyword whose value is malformed is removed from what is compiled
//     (for a list of subschemas — allOf, anyOf, oneOf, prefixItems, an
//     array `items` — holding a malformed member, the whole list: keeping
//     it with the member dropped or made `true` would change what the
//     list means);
//   - a malformed member of a map of subschemas (properties,
//     patternProperties, $defs, definitions, dependentSchemas,
//     dependencies) becomes `true`: the name stays declared, unconstrained;
//   - under `not`, `oneOf` or `if`, where a looser subschema can make the
//     whole stricter, the outermost of those keywords is left out instead;
//   - a patternProperties name that is not a regular expression is removed;
//   - a list of names given twice (`required`, a `type` list) is kept, each
//     name once: the SDK enforced it as it was.
//
// `pattern` is the exception. The SDK did not skip a pattern it could not
// use: jq's test() failed, and so did the validation of every call that
// gave that property a string ("…could not be evaluated against its
// schema."). A pattern this validator cannot compile (RE2 has no
// lookaround or backreferences, which jq's Oniguruma had) may well guard
// something, so dropping it would wave strings past a check the author
// relied on. Such a pattern (or one that is not a string, null and false
// aside) is compiled as an unevaluablePattern: a string it applies to makes
// Validate answer that evaluation-failure text, as the SDK did; values it
// does not apply to are unaffected.
//
// The original document stays what messages quote (Schema.doc): positions
// in it are unchanged, as nothing is renamed or moved.

// Ignored is one keyword of an inputSchema that is not enforced as written.
type Ignored struct {
	// Pointer is where the keyword is in the inputSchema, as a JSON
	// pointer: "/properties/n/type".
	Pointer string
	// Reason says what is wrong with its value.
	Reason string
	// Refuses is set for a pattern that cannot be evaluated: a string it
	// applies to is refused instead of being checked.
	Refuses bool
	// Deduped is set for a list that names something twice: it is
	// enforced, each name once.
	Deduped bool
	// UnknownType is a `type` naming no JSON type (a typo: "strin"), with
	// the name meant when one is close: `check` makes it an error.
	UnknownType, Meant string
}

func (i Ignored) String() string {
	if i.Refuses {
		return "pattern " + i.Pointer + " cannot be evaluated (" + i.Reason + "): a string it applies to is refused"
	}
	if i.Deduped {
		return i.Pointer + " is malformed (" + i.Reason + "): it is enforced with each item once"
	}
	if i.UnknownType != "" {
		msg := i.Pointer + " is malformed (" + strconv.Quote(i.UnknownType) + " is not a JSON type"
		if i.Meant != "" {
			msg += "; did you mean " + strconv.Quote(i.Meant) + "?"
		}
		return msg + ") and is not enforced"
	}
	return i.Pointer + " is malformed (" + i.Reason + ") and is not enforced"
}

// Ignored lists the keywords of the inputSchema that are not enforced as
// written, sorted by pointer; nil when there are none.
func (s *Schema) Ignored() []Ignored { return s.ignored }

// maxFixRounds bounds the compile attempts: v6 reports every malformed
// keyword it finds at once, so a second round is rare and a third rarer.
const maxFixRounds = 8

// compileLenient compiles doc, leaving out what is malformed (see above).
// The error is the last compile error when something else is wrong (an
// unknown "$schema", a $ref that cannot be resolved) or the fixes run out.
func compileLenient(doc any) (*jsonschema.Schema, []Ignored, error) {
	var ign []Ignored
	unevaluablePatterns(doc, nil, &ign)
	for round := 0; ; round++ {
		compiled, err := compileDoc(doc)
		if err == nil {
			// v6 reports in no fixed order; the log and check do not vary.
			slices.SortStableFunc(ign, func(a, b Ignored) int { return strings.Compare(a.Pointer, b.Pointer) })
			return compiled, ign, nil
		}
		var sve *jsonschema.SchemaValidationError
		var verr *jsonschema.ValidationError
		if round == maxFixRounds || !errors.As(err, &sve) || !errors.As(sve.Err, &verr) {
			return nil, nil, err
		}
		fixed := fixMalformed(doc, verr, &ign)
		if fixed == 0 {
			return nil, nil, err
		}
	}
}

// compileDoc is one attempt with a fresh compiler (a failed one keeps its
// resource).
func compileDoc(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Authors who write "format" mean it; 2020-12 would otherwise treat it as
	// an annotation only.
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	c.UseRegexpEngine(regexpEngine)
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(baseURL)
}

// unevaluablePrefix marks, in the document given to v6, a pattern that
// cannot be evaluated; NUL keeps it from being a pattern anyone wrote.
const unevaluablePrefix = "\x00mcp-bashd unevaluable pattern "

// regexpEngine is v6's own (Go's regexp), except for the marked patterns.
func regexpEngine(s string) (jsonschema.Regexp, error) {
	if strings.HasPrefix(s, unevaluablePrefix) {
		return unevaluablePattern{}, nil
	}
	return regexp.Compile(s)
}

// errUnevaluable is what an unevaluablePattern panics with; Validate
// recovers every panic into the SDK's evaluation-failure text.
var errUnevaluable = errors.New("a pattern of the schema cannot be evaluated")

// unevaluablePattern stands for a pattern that could not be compiled. v6
// gives a Regexp no way to fail, and a string it applies to must neither
// pass nor fail: it aborts the validation instead.
type unevaluablePattern struct{}

func (unevaluablePattern) String() string          { return "(a pattern that cannot be evaluated)" }
func (unevaluablePattern) MatchString(string) bool { panic(errUnevaluable) }

// unevaluablePatterns marks, in every subschema, a pattern that is not a
// regular expression Go can compile (null and false are left to the
// metaschema, which drops them: the SDK skipped those), and removes a
// patternProperties name that is not one (v6 reports those through
// propertyNames, without saying where).
func unevaluablePatterns(node any, path []string, ign *[]Ignored) {
	eachSubschema(node, path, func(obj map[string]any, at []string) {
		if pp, ok := obj["patternProperties"].(map[string]any); ok {
			for _, name := range sortedNames(pp) {
				if _, err := regexp.Compile(name); err != nil {
					delete(pp, name)
					*ign = append(*ign, Ignored{Pointer: pointer(append(slices.Clip(at), "patternProperties", name)), Reason: "not a regular expression: " + err.Error()})
				}
			}
		}
		p, ok := obj["pattern"]
		if !ok || p == nil || p == false {
			return
		}
		reason := "not a string"
		if s, isStr := p.(string); isStr {
			if _, err := regexp.Compile(s); err == nil {
				return
			} else {
				reason = err.Error()
			}
		}
		obj["pattern"] = unevaluablePrefix + strconv.Itoa(len(*ign))
		*ign = append(*ign, Ignored{Pointer: pointer(append(slices.Clip(at), "pattern")), Reason: reason, Refuses: true})
	})
}

// The keywords whose values hold subschemas, by shape.
var (
	schemaMaps = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
		"dependentSchemas": true, "dependencies": true}
	schemaLists   = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	schemaSingles = map[string]bool{"additionalProperties": true, "additionalItems": true, "not": true, "if": true,
		"then": true, "else": true, "contains": true, "propertyNames": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true}
)

// eachSubschema calls f for every schema object in the tree, the root
// first, in a stable order.
func eachSubschema(node any, path []string, f func(obj map[string]any, path []string)) {
	obj, ok := node.(map[string]any)
	if !ok {
		return
	}
	f(obj, path)
	for _, kw := range sortedNames(obj) {
		at := append(slices.Clip(path), kw)
		switch v := obj[kw].(type) {
		case map[string]any:
			if schemaMaps[kw] {
				for _, name := range sortedNames(v) {
					eachSubschema(v[name], append(slices.Clip(at), name), f)
				}
			} else if schemaSingles[kw] || kw == "items" {
				eachSubschema(v, at, f)
			}
		case []any:
			if schemaLists[kw] || kw == "items" {
				for i, e := range v {
					eachSubschema(e, append(slices.Clip(at), strconv.Itoa(i)), f)
				}
			}
		}
	}
}

// fixMalformed leaves out what each metaschema violation in verr points at
// and reports how many things it changed.
func fixMalformed(doc any, verr *jsonschema.ValidationError, ign *[]Ignored) int {
	reasons := map[string][]string{}
	var order []string
	var actions = map[string]fixAction{}
	for _, l := range metaLeaves(verr, false, nil) {
		loc := l.InstanceLocation
		// A keyword that needs another beside it (draft-04: exclusiveMinimum
		// needs minimum) is reported at its schema: it is the one to leave out.
		switch k := l.ErrorKind.(type) {
		case *kind.Dependency:
			loc = append(slices.Clip(loc), k.Prop)
		case *kind.DependentRequired:
			loc = append(slices.Clip(loc), k.Prop)
		}
		act, ok := locate(doc, loc)
		if !ok {
			continue
		}
		if _, dup := l.ErrorKind.(*kind.UniqueItems); dup && act.drop && len(act.at) == len(loc) {
			// A list of names given twice (required, a type list): the SDK
			// used it as it was, so it stays, once each.
			act = fixAction{at: act.at, dedupe: true}
		}
		key := pointer(act.at)
		if prev, seen := actions[key]; !seen {
			order = append(order, key)
			actions[key] = act
		} else if act.dedupe && !prev.dedupe {
			// One of the alternatives a list may take fails only for
			// the repeat (a `type` list): repairing that is enough.
			actions[key] = act
		}
		if r := l.ErrorKind.LocalizedString(printer); !slices.Contains(reasons[key], r) {
			reasons[key] = append(reasons[key], r)
		}
	}
	n := 0
	for _, key := range order {
		unknown, meant := unknownType(doc, actions[key].at)
		if actions[key].apply(doc) {
			*ign = append(*ign, Ignored{Pointer: key, Reason: strings.Join(reasons[key], "; "), Deduped: actions[key].dedupe, UnknownType: unknown, Meant: meant})
			n++
		}
	}
	return n
}

// metaLeaves are the violations at the bottom of v6's tree, except those
// under propertyNames, whose instance location v6 does not keep
// (unevaluablePatterns handles the one such case a metaschema has).
func metaLeaves(e *jsonschema.ValidationError, under bool, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if _, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		under = true
	}
	if len(e.Causes) == 0 {
		if !under {
			out = append(out, e)
		}
		return out
	}
	for _, c := range e.Causes {
		out = metaLeaves(c, under, out)
	}
	return out
}

// fixAction is one change to the document: remove the keyword at at, keep
// only the first of equal items of the list at at, or put `true` in place
// of the subschema at at.
type fixAction struct {
	at     []string
	drop   bool
	dedupe bool
}

// locate follows a violation's location (a path into the schema document)
// and says what to leave out: the keyword it is in, or the subschema it
// names (see the rules at the top of this file) — unless that lies under
// `not`, `oneOf` or `if`, where leaving something out of a subschema can
// make the whole stricter (`not: {}` refuses everything; a `oneOf` member
// grown looser may now match beside another): then the outermost of those
// keywords is left out. false when it points at the root or at nothing
// (already removed this round).
func locate(doc any, tokens []string) (fixAction, bool) {
	var guard *fixAction
	found := func(a fixAction, ok bool) (fixAction, bool) {
		if ok && guard != nil {
			return *guard, true
		}
		return a, ok
	}
	node := doc
	for i := 0; ; {
		obj, ok := node.(map[string]any)
		if !ok || i == len(tokens) {
			// A subschema that is itself malformed: only a map member
			// gets here (see below), and becomes true.
			return found(fixAction{at: tokens[:i]}, i > 0)
		}
		kw := tokens[i]
		val, ok := obj[kw]
		if !ok {
			return fixAction{}, false
		}
		keyword := fixAction{at: tokens[:i+1], drop: true}
		next, step := descend(kw, val, tokens[i+1:])
		switch {
		case step < 0:
			return fixAction{}, false
		case step == 0:
			return found(keyword, true)
		}
		if guard == nil && inverting[kw] {
			guard = &keyword
		}
		node, i = next, i+step
	}
}

// inverting are the keywords under which a looser subschema can make the
// schema stricter.
var inverting = map[string]bool{"not": true, "oneOf": true, "if": true}

// descend steps from keyword kw, whose value is val, into the subschema
// the rest of the path names: it returns that subschema and how many path
// tokens the step took; 0 when the path ends in kw's value (kw itself is to
// be left out); -1 when the path names nothing there.
func descend(kw string, val any, rest []string) (any, int) {
	switch v := val.(type) {
	case map[string]any:
		switch {
		case schemaMaps[kw] && len(rest) > 0:
			member, ok := v[rest[0]]
			if !ok {
				return nil, -1
			}
			if _, isObj := member.(map[string]any); !isObj && kw == "dependencies" {
				if _, isBool := member.(bool); !isBool {
					return nil, 0 // a list of names gone wrong
				}
			}
			return member, 2
		case (schemaSingles[kw] || kw == "items") && len(rest) > 0:
			return v, 1
		}
	case []any:
		if (schemaLists[kw] || kw == "items") && len(rest) > 1 {
			idx, err := strconv.Atoi(rest[0])
			if err != nil || idx < 0 || idx >= len(v) {
				return nil, -1
			}
			if _, isObj := v[idx].(map[string]any); isObj {
				return v[idx], 2
			}
		}
	}
	return nil, 0
}

// apply makes the change; false when its place is gone already.
func (a fixAction) apply(doc any) bool {
	if len(a.at) == 0 {
		return false
	}
	parent := doc
	for _, tok := range a.at[:len(a.at)-1] {
		switch p := parent.(type) {
		case map[string]any:
			parent = p[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(p) {
				return false
			}
			parent = p[i]
		default:
			return false
		}
	}
	last := a.at[len(a.at)-1]
	obj, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := obj[last]; !ok {
		return false
	}
	switch {
	case a.dedupe:
		list, ok := obj[last].([]any)
		if !ok {
			return false
		}
		obj[last] = dedupe(list)
	case a.drop:
		delete(obj, last)
	default:
		obj[last] = true
	}
	return true
}

// dedupe keeps the first of each run of equal items (JSON equality, as
// uniqueItems means it).
func dedupe(list []any) []any {
	var out []any
	for _, v := range list {
		if !slices.ContainsFunc(out, func(o any) bool { return jsonEqual(o, v) }) {
			out = append(out, v)
		}
	}
	return out
}

// jsonEqual compares two decoded documents (json.Number numbers compared
// by their text, which suffices for the lists dedupe sees: names).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqual)
	}
	return a == b
}

// pointer renders path tokens as a JSON pointer ("" for the root).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// jsonTypes are JSON Schema's type names.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// unknownType is, for a `type` keyword at `at`, its first name that is no
// JSON type, and the type name closest to it (within two edits; "" if
// none is).
func unknownType(doc any, at []string) (string, string) {
	if len(at) == 0 || at[len(at)-1] != "type" {
		return "", ""
	}
	v := doc
	for _, t := range at {
		m, ok := v.(map[string]any)
		if !ok {
			return "", ""
		}
		v = m[t]
	}
	names, _ := v.([]any)
	if s, ok := v.(string); ok {
		names = []any{s}
	}
	for _, n := range names {
		s, ok := n.(string)
		if !ok || slices.Contains(jsonTypes, s) {
			continue
		}
		best, dist := "", 3
		for _, t := range jsonTypes {
			d := editDistance(strings.ToLower(s), t)
			if len(s) >= 3 && strings.HasPrefix(t, strings.ToLower(s)) {
				d = 0 // "int", "bool", "str"
			}
			if d < dist {
				best, dist = t, d
			}
		}
		return s, best
	}
	return "", ""
}

// editDistance is the Levenshtein distance of two short words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
