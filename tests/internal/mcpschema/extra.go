package mcpschema

// Checks that go beyond the official schemas. The MCP schemas are open
// (extra members are always allowed) and some MUSTs in the spec text have
// no schema form at all; these checks close the gaps that would let real
// server defects through. Every error produced here names the rule it
// enforces and says it is not a schema rule, so a failure is never mistaken
// for a schema violation.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// onlyMembers rejects top-level members outside the JSON-RPC 2.0 set. The
// schemas allow anything extra; a server that leaks e.g. a "debug" member
// into its envelope has a bug even if clients ignore it.
func onlyMembers(obj map[string]any, allowed ...string) error {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("unexpected top-level member %q; allowed here: %s (not a schema rule; JSON-RPC 2.0 envelope)",
				k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "number"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orUnknown(method string) string {
	if method == "" {
		return "unknown request"
	}
	return method
}

// pickByResultType chooses the result definition in revisions whose results
// carry resultType (2026-07-28). There tools/call may answer with
// CallToolResult or InputRequiredResult, and the schema says so with an
// anyOf. But InputRequiredResult requires nothing except a string
// resultType, so the anyOf would accept ANY object with a resultType: a
// CallToolResult with a broken content array would pass via the other
// branch. Dispatching on resultType, as the spec tells clients to, keeps the
// check strict. The schema also types resultType as a plain string, so the
// two legal values are enforced here.
func pickByResultType(cands []string, result any) (string, error) {
	i := slices.IndexFunc(cands, func(c string) bool { return c != "InputRequiredResult" })
	if i < 0 {
		return "", errors.New("no non-InputRequiredResult candidate") // cannot happen with the shipped schemas
	}
	complete := cands[i]
	m, _ := result.(map[string]any)
	rt, ok := m["resultType"].(string)
	if !ok {
		return complete, nil // missing or non-string: the schema reports it
	}
	switch rt {
	case "complete":
		return complete, nil
	case "input_required":
		if !slices.Contains(cands, "InputRequiredResult") {
			return "", errors.New(`resultType "input_required" is not allowed for this method (its *ResultResponse has no InputRequiredResult)`)
		}
		_, a := m["inputRequests"]
		_, b := m["requestState"]
		if !a && !b {
			return "", errors.New("InputRequiredResult needs inputRequests or requestState (spec MUST the schema does not express)")
		}
		return "InputRequiredResult", nil
	}
	return "", fmt.Errorf(`resultType %q is neither "complete" nor "input_required" (spec rule; the schema types it only as string)`, rt)
}

// metaLabel / metaKey encode the _meta key naming rule (introduced in
// 2025-06-18, written out in the 2026-07-28 MetaObject description but never
// as a schema pattern): optional prefix of dot-separated labels (letter
// first, letter or digit last, hyphens inside) ending in "/", then a name
// that is empty or starts and ends alphanumeric with [-_.] inside.
const metaLabel = `[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?`

var metaKey = regexp.MustCompile(`^(?:` + metaLabel + `(?:\.` + metaLabel + `)*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)

// checkMetaKeys checks the keys of a protocol-level _meta (result._meta,
// params._meta). Nested _meta inside tool output is tool data and not
// checked.
func (r *rev) checkMetaKeys(where string, v any) error {
	if r.name < "2025-06-18" { // revision names are dates, so they sort
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil // absent, or a non-object the schema already rejected
	}
	for _, k := range sortedKeys(m) {
		if !metaKey.MatchString(k) {
			return fmt.Errorf("%s._meta key %q breaks the _meta naming rules (spec rule the schema does not express)", where, k)
		}
	}
	return nil
}

// standardCodes are the JSON-RPC 2.0 pre-defined error codes.
var standardCodes = []int64{-32700, -32600, -32601, -32602, -32603}

// checkErrorCode enforces which reserved codes may appear. JSON-RPC 2.0
// reserves -32768..-32000; of that, -32099..-32000 is free for
// implementation-defined server errors, the rest is undefined. 2026-07-28
// narrows it: -32000..-32019 are legacy and SHOULD NOT be used by new code,
// -32020..-32099 belong to the spec, and application errors go outside the
// whole range. mcp-bashd is new code, so a SHOULD NOT counts as a defect.
func (r *rev) checkErrorCode(code int64) error {
	known := slices.Contains(standardCodes, code)
	_, env := r.errEnv[code]
	_, obj := r.errObj[code]
	if known || env || obj {
		return nil
	}
	lo, hi := int64(-32768), int64(-32100)
	if r.name >= "2026-07-28" {
		hi = -32000
	}
	if code >= lo && code <= hi {
		return fmt.Errorf("%s: error code %d is reserved and not defined (not a schema rule; JSON-RPC 2.0 / MCP error code policy)", r.name, code)
	}
	return nil
}

// checkToolSchemas compiles each tool's inputSchema and outputSchema as a
// JSON Schema (2020-12 unless the schema names another dialect via
// $schema). The MCP schema only checks that they are objects with
// type:"object"; a schema that is not valid JSON Schema (say
// "required": "x") passes it but breaks every client that validates
// arguments. Remote $refs fail too: clients MUST NOT fetch them, so a
// server must not depend on them.
func checkToolSchemas(tools any) error {
	list, _ := tools.([]any)
	for i, t := range list {
		name, _ := dig(t, "name").(string)
		for _, field := range []string{"inputSchema", "outputSchema"} {
			s, ok := dig(t, field).(map[string]any)
			if !ok {
				continue // absent, or rejected by the MCP schema already
			}
			c := jsonschema.NewCompiler()
			c.UseLoader(refuseLoader{})
			c.DefaultDraft(jsonschema.Draft2020)
			const url = baseURL + "tool.json"
			if err := c.AddResource(url, s); err != nil {
				return fmt.Errorf("tools[%d] (%q).%s: %w", i, name, field, err)
			}
			if _, err := c.Compile(url); err != nil {
				return fmt.Errorf("tools[%d] (%q).%s is not a usable JSON Schema (not an MCP-schema rule): %w", i, name, field, err)
			}
		}
	}
	return nil
}

// duplicateKey returns the first object key that occurs twice in one
// object, or "". encoding/json keeps the last copy, other parsers the
// first, so a duplicate means two clients may read two different messages.
func duplicateKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys   map[string]bool // nil for arrays
		expKey bool            // in an object, the next token is a key or '}'
	}
	var stack []*frame
	// valueEnded marks that a member value finished, so the enclosing object
	// expects a key again.
	valueEnded := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "" // end of input; syntax errors are reported elsewhere
		}
		if n := len(stack); n > 0 && stack[n-1].expKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueEnded()
				continue
			}
			k, _ := tok.(string)
			if stack[n-1].keys[k] {
				return k
			}
			stack[n-1].keys[k] = true
			stack[n-1].expKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, expKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		valueEnded()
	}
}
