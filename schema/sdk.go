package schema

import (
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// sdkMessage words a rejection the way the bash SDK's validator does
// (shopwareLabs/bash-mcp-sdk, lib/mcpserver_core.sh), or returns "" when none
// of the SDK's checks applies and the caller must fall back to v6's error tree.
//
// The SDK reads only the top level: `required`, `additionalProperties:false`,
// and each property's `type`, `pattern`, range bounds, `items.type`/
// `items.enum` and `enum`. It reports only the most fundamental category that
// has an offender, in the order missing > unknown > type > pattern > range >
// items > enum, naming every offender of that category.
//
// Each check here reads the compiled schema for *what applies* (so draft
// rules such as draft-04's boolean exclusiveMinimum, or $ref hiding its
// siblings before 2019-09, are v6's) and the document as written for *how to
// print it* (declared type order, bound and enum literals). Every check is a
// real JSON Schema violation, so a message never names a value v6 accepted.
func (s *Schema) sdkMessage(args *jq.Value) string {
	root, raw := s.compiled, s.doc
	if root.Bool != nil || raw.Kind != jq.KindObject || hidesSiblings(root) {
		return ""
	}

	var missing []string
	for _, r := range root.Required { // declared order, as the SDK prints it
		if args.Get(r) == nil {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return "Missing required parameter(s): " + strings.Join(missing, ", ") + "."
	}

	present := sortedKeys(args) // the SDK iterates `$args | keys`
	if ap, ok := root.AdditionalProperties.(bool); ok && !ap {
		var unknown []string
		for _, p := range present {
			if root.Properties[p] == nil && !matchesPatternProperty(root, p) {
				unknown = append(unknown, p)
			}
		}
		if len(unknown) > 0 {
			allowed := raw.Get("properties")
			names := []string{}
			if allowed != nil && allowed.Kind == jq.KindObject {
				names = sortedKeys(allowed)
			}
			return "Unknown parameter(s): " + strings.Join(unknown, ", ") +
				". Allowed parameters: " + strings.Join(names, ", ") + "."
		}
	}

	var types, patterns, ranges, items, enums []string
	rawProps := raw.Get("properties")
	for _, p := range present {
		ps, pr, v := root.Properties[p], rawProps.Get(p), args.Get(p)
		if ps == nil || ps.Bool != nil || pr == nil || hidesSiblings(ps) {
			continue
		}
		if t := typeEntry(ps, pr, v); t != "" {
			types = append(types, p+t)
		}
		if ps.Pattern != nil && v.Kind == jq.KindString && !ps.Pattern.MatchString(v.Text) {
			patterns = append(patterns, p+"="+tojson(v)+" does not match pattern "+ps.Pattern.String())
		}
		for _, r := range rangeEntries(ps, pr, v) {
			ranges = append(ranges, p+"="+tojson(v)+" "+r)
		}
		items = append(items, itemEntries(p, ps, pr, v)...)
		if ps.Enum != nil && !member(pr.Get("enum"), v) {
			enums = append(enums, p+`="`+tostring(v)+`" (allowed: `+joinJQ(pr.Get("enum"), ", ")+")")
		}
	}
	for _, c := range []struct {
		prefix  string
		entries []string
	}{
		{"Invalid type(s): ", types},
		{"Invalid value(s): ", patterns},
		{"Out-of-range value(s): ", ranges},
		{"Invalid array item(s): ", items},
		{"Invalid value(s): ", enums},
	} {
		if len(c.entries) > 0 {
			return c.prefix + strings.Join(c.entries, "; ") + "."
		}
	}
	return ""
}

// hidesSiblings reports a $ref whose sibling keywords the draft ignores
// (draft-07 and earlier). Reading those siblings would report violations of
// keywords v6 never applied.
func hidesSiblings(s *jsonschema.Schema) bool {
	return s.Ref != nil && s.DraftVersion < 2019
}

func matchesPatternProperty(s *jsonschema.Schema, name string) bool {
	for re := range s.PatternProperties {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// typeEntry returns " expected <types>, got <label> (<value>)" when v fails
// the declared type, else "". The names come from the document so a union
// prints in the order it was declared ("integer or string").
func typeEntry(s *jsonschema.Schema, raw, v *jq.Value) string {
	if s.Types == nil || s.Types.IsEmpty() {
		return ""
	}
	names := typeNames(raw.Get("type"))
	if len(names) == 0 {
		return "" // v6 compiled a type the document does not spell: say nothing rather than guess
	}
	for _, name := range names {
		if typeMatches(name, v) {
			return ""
		}
	}
	return " expected " + strings.Join(names, " or ") + ", got " + typeLabel(names, v) + " (" + tojson(v) + ")"
}

func typeNames(t *jq.Value) []string {
	switch {
	case t == nil:
		return nil
	case t.Kind == jq.KindString:
		return []string{t.Text}
	case t.Kind == jq.KindArray:
		names := make([]string, 0, len(t.Elems))
		for _, e := range t.Elems {
			names = append(names, e.Text)
		}
		return names
	}
	return nil
}

func typeMatches(name string, v *jq.Value) bool {
	if name == "integer" {
		return isInteger(v)
	}
	return v.Type() == name
}

// typeLabel is the SDK's "got" word: a number that failed a declaration
// offering integer but not number is necessarily fractional, and says so.
func typeLabel(names []string, v *jq.Value) string {
	if v.Kind == jq.KindNumber && slices.Contains(names, "integer") && !slices.Contains(names, "number") {
		return "number (non-integer)"
	}
	return v.Type()
}

// rangeEntries checks the four bounds in the SDK's order. Under draft-04 v6
// compiles `"minimum": 0, "exclusiveMinimum": true` into an exclusive
// minimum of 0, so it is reported as "not above exclusiveMinimum 0" quoting
// the `minimum` literal; the SDK itself left that form unenforced.
func rangeEntries(s *jsonschema.Schema, raw, v *jq.Value) []string {
	val, ok := rat(v)
	if !ok {
		return nil // bounds apply to numbers only; never coerce a boolean
	}
	var out []string
	check := func(bound *big.Rat, failed func(c int) bool, rel string, lit *jq.Value) {
		if bound != nil && failed(val.Cmp(bound)) {
			out = append(out, rel+" "+boundText(bound, lit))
		}
	}
	check(s.Minimum, func(c int) bool { return c < 0 }, "below minimum", raw.Get("minimum"))
	check(s.Maximum, func(c int) bool { return c > 0 }, "above maximum", raw.Get("maximum"))
	check(s.ExclusiveMinimum, func(c int) bool { return c <= 0 }, "not above exclusiveMinimum",
		numberOr(raw.Get("exclusiveMinimum"), raw.Get("minimum")))
	check(s.ExclusiveMaximum, func(c int) bool { return c >= 0 }, "not below exclusiveMaximum",
		numberOr(raw.Get("exclusiveMaximum"), raw.Get("maximum")))
	return out
}

func numberOr(n, alt *jq.Value) *jq.Value {
	if n != nil && n.Kind == jq.KindNumber {
		return n
	}
	return alt
}

// boundText prints a bound as the SDK does (jq's rendering of the schema
// literal); ratText covers a bound whose literal could not be located.
func boundText(bound *big.Rat, lit *jq.Value) string {
	if lit != nil && lit.Kind == jq.KindNumber {
		return jqNumber(lit.Text)
	}
	return ratText(bound)
}

// ratText renders an exact value without float rounding. Values from JSON
// literals have power-of-ten denominators, so the decimal expansion is finite.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	for prec := 1; prec <= 1000; prec++ {
		s := r.FloatString(prec)
		if back, ok := new(big.Rat).SetString(s); ok && back.Cmp(r) == 0 {
			return jqNumber(s)
		}
	}
	return r.RatString()
}

// itemEntries checks `items.type` then `items.enum` per element, one entry
// per offending element. Only an object-form `items` that applies to the
// element is read: 2020-12 starts it after `prefixItems`; an older tuple-form
// `items` is left to the fallback, as the SDK cannot read it either.
func itemEntries(p string, s *jsonschema.Schema, raw, v *jq.Value) []string {
	if v.Kind != jq.KindArray {
		return nil
	}
	rawItems := raw.Get("items")
	if rawItems == nil || rawItems.Kind != jq.KindObject {
		return nil
	}
	var is *jsonschema.Schema
	start := 0
	if s.DraftVersion >= 2020 {
		is, start = s.Items2020, len(s.PrefixItems)
	} else {
		is, _ = s.Items.(*jsonschema.Schema)
	}
	if is == nil || is.Bool != nil || hidesSiblings(is) {
		return nil
	}
	var out []string
	for i := start; i < len(v.Elems); i++ {
		ev := v.Elems[i]
		at := p + "[" + strconv.Itoa(i) + "]"
		if t := typeEntry(is, rawItems, ev); t != "" {
			out = append(out, at+t)
		} else if is.Enum != nil && !member(rawItems.Get("enum"), ev) {
			out = append(out, at+"="+tojson(ev)+" (allowed: "+joinJQ(rawItems.Get("enum"), ", ")+")")
		}
	}
	return out
}

func member(enum, v *jq.Value) bool {
	if enum == nil || enum.Kind != jq.KindArray {
		return true // nothing enforceable was declared
	}
	for _, e := range enum.Elems {
		if equal(e, v) {
			return true
		}
	}
	return false
}
