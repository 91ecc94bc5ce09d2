package schema

import (
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
func (s *Schema) sdkMessage(args *node) string {
	root, raw := s.compiled, s.doc
	if root.Bool != nil || raw.kind != kindObject || hidesSiblings(root) {
		return ""
	}

	var missing []string
	for _, r := range root.Required { // declared order, as the SDK prints it
		if args.get(r) == nil {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return "Missing required parameter(s): " + strings.Join(missing, ", ") + "."
	}

	present := args.sortedKeys() // the SDK iterates `$args | keys`
	if ap, ok := root.AdditionalProperties.(bool); ok && !ap {
		var unknown []string
		for _, p := range present {
			if root.Properties[p] == nil && !matchesPatternProperty(root, p) {
				unknown = append(unknown, p)
			}
		}
		if len(unknown) > 0 {
			allowed := raw.get("properties")
			names := []string{}
			if allowed != nil && allowed.kind == kindObject {
				names = allowed.sortedKeys()
			}
			return "Unknown parameter(s): " + strings.Join(unknown, ", ") +
				". Allowed parameters: " + strings.Join(names, ", ") + "."
		}
	}

	var types, patterns, ranges, items, enums []string
	rawProps := raw.get("properties")
	for _, p := range present {
		ps, pr, v := root.Properties[p], rawProps.get(p), args.get(p)
		if ps == nil || ps.Bool != nil || pr == nil || hidesSiblings(ps) {
			continue
		}
		if t := typeEntry(ps, pr, v); t != "" {
			types = append(types, p+t)
		}
		if ps.Pattern != nil && v.kind == kindString && !ps.Pattern.MatchString(v.str) {
			patterns = append(patterns, p+"="+v.tojson()+" does not match pattern "+ps.Pattern.String())
		}
		for _, r := range rangeEntries(ps, pr, v) {
			ranges = append(ranges, p+"="+v.tojson()+" "+r)
		}
		items = append(items, itemEntries(p, ps, pr, v)...)
		if ps.Enum != nil && !member(pr.get("enum"), v) {
			enums = append(enums, p+`="`+v.tostring()+`" (allowed: `+joinJQ(pr.get("enum"), ", ")+")")
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
func typeEntry(s *jsonschema.Schema, raw, v *node) string {
	if s.Types == nil || s.Types.IsEmpty() {
		return ""
	}
	names := typeNames(raw.get("type"))
	if len(names) == 0 {
		return "" // v6 compiled a type the document does not spell: say nothing rather than guess
	}
	for _, name := range names {
		if typeMatches(name, v) {
			return ""
		}
	}
	return " expected " + strings.Join(names, " or ") + ", got " + typeLabel(names, v) + " (" + v.tojson() + ")"
}

func typeNames(t *node) []string {
	switch {
	case t == nil:
		return nil
	case t.kind == kindString:
		return []string{t.str}
	case t.kind == kindArray:
		names := make([]string, 0, len(t.elems))
		for _, e := range t.elems {
			names = append(names, e.str)
		}
		return names
	}
	return nil
}

func typeMatches(name string, v *node) bool {
	if name == "integer" {
		return v.isInteger()
	}
	return v.kind.String() == name
}

// typeLabel is the SDK's "got" word: a number that failed a declaration
// offering integer but not number is necessarily fractional, and says so.
func typeLabel(names []string, v *node) string {
	if v.kind == kindNumber && slices.Contains(names, "integer") && !slices.Contains(names, "number") {
		return "number (non-integer)"
	}
	return v.kind.String()
}

// rangeEntries checks the four bounds in the SDK's order. Under draft-04 v6
// compiles `"minimum": 0, "exclusiveMinimum": true` into an exclusive
// minimum of 0, so it is reported as "not above exclusiveMinimum 0" quoting
// the `minimum` literal; the SDK itself left that form unenforced.
func rangeEntries(s *jsonschema.Schema, raw, v *node) []string {
	val, ok := v.rat()
	if !ok {
		return nil // bounds apply to numbers only; never coerce a boolean
	}
	var out []string
	check := func(bound *big.Rat, failed func(c int) bool, rel string, lit *node) {
		if bound != nil && failed(val.Cmp(bound)) {
			out = append(out, rel+" "+boundText(bound, lit))
		}
	}
	check(s.Minimum, func(c int) bool { return c < 0 }, "below minimum", raw.get("minimum"))
	check(s.Maximum, func(c int) bool { return c > 0 }, "above maximum", raw.get("maximum"))
	check(s.ExclusiveMinimum, func(c int) bool { return c <= 0 }, "not above exclusiveMinimum",
		numberOr(raw.get("exclusiveMinimum"), raw.get("minimum")))
	check(s.ExclusiveMaximum, func(c int) bool { return c >= 0 }, "not below exclusiveMaximum",
		numberOr(raw.get("exclusiveMaximum"), raw.get("maximum")))
	return out
}

func numberOr(n, alt *node) *node {
	if n != nil && n.kind == kindNumber {
		return n
	}
	return alt
}

// boundText prints a bound as the SDK does (jq's rendering of the schema
// literal); ratText covers a bound whose literal could not be located.
func boundText(bound *big.Rat, lit *node) string {
	if lit != nil && lit.kind == kindNumber {
		return jqNumber(lit.str)
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
func itemEntries(p string, s *jsonschema.Schema, raw, v *node) []string {
	if v.kind != kindArray {
		return nil
	}
	rawItems := raw.get("items")
	if rawItems == nil || rawItems.kind != kindObject {
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
	for i := start; i < len(v.elems); i++ {
		ev := v.elems[i]
		at := p + "[" + strconv.Itoa(i) + "]"
		if t := typeEntry(is, rawItems, ev); t != "" {
			out = append(out, at+t)
		} else if is.Enum != nil && !member(rawItems.get("enum"), ev) {
			out = append(out, at+"="+ev.tojson()+" (allowed: "+joinJQ(rawItems.get("enum"), ", ")+")")
		}
	}
	return out
}

func member(enum, v *node) bool {
	if enum == nil || enum.kind != kindArray {
		return true // nothing enforceable was declared
	}
	for _, e := range enum.elems {
		if e.equal(v) {
			return true
		}
	}
	return false
}
