// Package uritemplate matches URIs against RFC 6570 URI templates of
// levels 1 to 3, the inverse of expansion: given a resources/read URI and a
// declared resourceTemplates entry, it says whether the template could have
// produced the URI and with which variable values.
//
// A template is a string of literals and expressions ({var}, {+var},
// {#var}, {.var}, {/var}, {;var}, {?var}, {&var}, each with one or more
// comma-separated variables). Level 4 modifiers (prefix ":N" and explode
// "*") are refused by Parse: their inverse is ambiguous, and a server that
// declares them should learn so from `mcp-bashd check`, not from a read that
// never matches.
//
// Matching is one anchored regular expression per template (RE2: linear in
// the URI, no backtracking blow-up). Expansion can be ambiguous to invert;
// the rules that settle it:
//
//   - simple and label values stop at every reserved character, so
//     {id} in test://template/{id}/data never spans a "/";
//   - reserved ({+var}) values may hold reserved characters but stop at "?"
//     and "#", so {+path}{?q} splits at the query; a fragment ({#var})
//     runs to the end;
//   - the first variable of a simple or reserved expression must be
//     non-empty; the others, and every variable of the prefixed operators,
//     may be left out, as expansion leaves out undefined variables;
//   - query variables ({?a,b}{&c}) are matched by name in any order, and a
//     query parameter the template does not name is ignored;
//   - values are percent-decoded.
//
// It imports only the standard library.
package uritemplate

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Template is a parsed URI template. Immutable.
type Template struct {
	raw   string
	re    *regexp.Regexp
	slots []slot // what each capture group of re holds, in order
	names []string
	// query are the variables of every ? and & expression: {?a}{&b} is
	// one query string, captured whole by the first.
	query []string
}

// slot is one capture group: a variable's value, or (name == "") the whole
// text of a query or path-parameter expression to split by name.
type slot struct {
	name  string
	op    byte
	query []string // the variables of a ; expression
}

// Names are the template's variables in order of first appearance.
func (t *Template) Names() []string { return append([]string(nil), t.names...) }

// String is the template as written.
func (t *Template) String() string { return t.raw }

// Parse reads a template of levels 1 to 3.
func Parse(raw string) (*Template, error) {
	t := &Template{raw: raw}
	var re strings.Builder
	re.WriteString("^")
	seen := map[string]bool{}
	rest := raw
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("unmatched '}' at offset %d", len(raw)-len(rest)+open)
		}
		re.WriteString(regexp.QuoteMeta(rest[:open]))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed '{' at offset %d", len(raw)-len(rest)+open)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		op, vars, err := parseExpr(expr)
		if err != nil {
			return nil, fmt.Errorf("expression {%s}: %w", expr, err)
		}
		for _, v := range vars {
			if !seen[v] {
				seen[v] = true
				t.names = append(t.names, v)
			}
		}
		t.slots = appendExpr(&re, t.slots, op, vars)
		if op == '?' || op == '&' {
			t.query = append(t.query, vars...)
		}
	}
	re.WriteString("$")
	var err error
	if t.re, err = regexp.Compile(re.String()); err != nil {
		return nil, fmt.Errorf("cannot be matched: %w", err)
	}
	return t, nil
}

// varName is RFC 6570's varname: varchars (ALPHA, DIGIT, "_", pct-encoded)
// with dots between them.
var varName = regexp.MustCompile(`^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$`)

func parseExpr(expr string) (byte, []string, error) {
	if expr == "" {
		return 0, nil, errors.New("empty")
	}
	var op byte
	switch expr[0] {
	case '+', '#', '.', '/', ';', '?', '&':
		op, expr = expr[0], expr[1:]
	case '=', ',', '!', '@', '|':
		return 0, nil, fmt.Errorf("operator %q is reserved for future extensions", expr[0])
	}
	vars := strings.Split(expr, ",")
	for _, v := range vars {
		switch {
		case strings.ContainsAny(v, ":*"):
			return 0, nil, fmt.Errorf("variable %q uses a level 4 modifier (prefix or explode), which cannot be matched", v)
		case !varName.MatchString(v):
			return 0, nil, fmt.Errorf("variable name %q is not valid", v)
		}
	}
	return op, vars, nil
}

// Character classes of a value. Simple values are unreserved characters
// and percent-encodings (anything else a client sent unencoded, except
// the delimiters, is taken too); reserved values may also hold reserved
// characters, but never "?" or "#", where a query or fragment starts.
const (
	simpleValue   = `[^/?#\[\]@!$&'()*+,;=]`
	labelValue    = `[^/?#\[\]@!$&'()*+,;=.]`
	reservedValue = `[^?#]`
	queryText     = `[^#]*`
)

func appendExpr(re *strings.Builder, slots []slot, op byte, vars []string) []slot {
	group := func(class string, nonEmpty bool) string {
		if nonEmpty {
			return "(" + class + "+)"
		}
		return "(" + class + "*)"
	}
	switch op {
	case 0, '+':
		class, sep := simpleValue, ","
		if op == '+' {
			// Between several reserved values a comma separates; one may
			// hold commas.
			class = reservedValue
			if len(vars) > 1 {
				class = `[^?#,]`
			}
		}
		for i, v := range vars {
			if i == 0 {
				re.WriteString(group(class, true))
			} else {
				re.WriteString("(?:" + regexp.QuoteMeta(sep) + group(class, false) + ")?")
			}
			slots = append(slots, slot{name: v, op: op})
		}
	case '#':
		// A fragment runs to the end: its values may hold "?" too.
		class := `[^#]`
		if len(vars) > 1 {
			class = `[^#,]`
		}
		re.WriteString("(?:#")
		for i, v := range vars {
			if i == 0 {
				re.WriteString(group(class, false))
			} else {
				re.WriteString("(?:," + group(class, false) + ")?")
			}
			slots = append(slots, slot{name: v, op: op})
		}
		re.WriteString(")?")
	case '.', '/':
		class := simpleValue
		if op == '.' {
			class = labelValue
		}
		for _, v := range vars {
			re.WriteString("(?:" + regexp.QuoteMeta(string(op)) + group(class, false) + ")?")
			slots = append(slots, slot{name: v, op: op})
		}
	case ';':
		// ;x=1;y or ;x=1 — split by name afterwards.
		re.WriteString(`((?:;[^/?#;]*)*)`)
		slots = append(slots, slot{op: op, query: vars})
	case '?', '&':
		re.WriteString("(?:" + regexp.QuoteMeta(string(op)) + "(" + queryText + "))?")
		slots = append(slots, slot{op: op, query: vars})
	}
	return slots
}

// Match reports whether the template could have produced uri, and the
// variables' values (percent-decoded) when it could. A variable the URI
// leaves out is absent from the map.
func (t *Template) Match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatchIndex(uri)
	if m == nil {
		return nil, false
	}
	vals := map[string]string{}
	for i, s := range t.slots {
		lo, hi := m[2*(i+1)], m[2*(i+1)+1]
		if lo < 0 {
			continue // an optional part the URI leaves out
		}
		text := uri[lo:hi]
		if s.name != "" {
			v, ok := unescape(text)
			if !ok {
				return nil, false
			}
			if _, dup := vals[s.name]; !dup {
				vals[s.name] = v
			}
			continue
		}
		sep, names := "&", t.query
		if s.op == ';' {
			sep, text, names = ";", strings.TrimPrefix(text, ";"), s.query
		}
		for _, pair := range strings.Split(text, sep) {
			if pair == "" {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			for _, name := range names {
				if k != name {
					continue
				}
				dv, ok := unescape(v)
				if !ok {
					return nil, false
				}
				if _, dup := vals[name]; !dup {
					vals[name] = dv
				}
			}
		}
	}
	return vals, true
}

// unescape percent-decodes a value; false when it holds a bad escape.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	v, err := url.PathUnescape(s)
	return v, err == nil
}
