package schema

import (
	"encoding/json"
	"testing"
)

// The fixtures of tests/mcp_argument_validation.bats in shopwareLabs/
// bash-mcp-sdk, as the SDK's tools.json declares them. "malformed" and
// "badrange" are absent: they are not JSON Schema (their malformed keywords
// are left out) and have their own test below.
var batsFixtures = map[string]string{
	"strict": `{"type":"object","required":["number"],"properties":{
		"number":{"type":"string"},
		"repo":{"type":"string","enum":["a/b","c/d"]},
		"mode":{"type":"string","enum":["development","production"]}},
		"additionalProperties":false}`,
	"loose": `{"type":"object","properties":{"a":{"type":"string"}}}`,
	"typed": `{"type":"object","required":["name"],"properties":{
		"name":{"type":"string","pattern":"^[a-z]+$"},
		"count":{"type":"integer"},
		"active":{"type":"boolean"},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]}}}}`,
	"union": `{"type":"object","properties":{
		"count":{"type":["integer","string"]},
		"choice":{"type":["string"],"enum":["a","b"]},
		"values":{"type":"array","items":{"type":["integer","string"]}}}}`,
	"ranged": `{"type":"object","properties":{
		"limit":{"type":"integer","minimum":1,"maximum":50},
		"score":{"type":"number","minimum":1},
		"above":{"type":"number","exclusiveMinimum":0},
		"below":{"type":"number","exclusiveMaximum":100},
		"untyped":{"minimum":3},
		"name":{"type":"string","pattern":"^[a-z]+$"},
		"tags":{"type":"array","items":{"type":"string"}},
		"mode":{"enum":["a","b"]}}}`,
	// Declared inside two of the bats tests rather than in setup().
	"counts": `{"type":"object","properties":{"values":{"type":"array","items":{"type":"integer"}}}}`,
	"colors": `{"type":"object","properties":{"values":{"type":"array","items":{"enum":["red","green","blue"]}}}}`,
	// tests/tool_declaration.bats, object-valued tools map case.
	"n": `{"type":"object","required":["n"]}`,
}

// One row per validation assertion in mcp_argument_validation.bats (the
// revision that added the 2^52 cases). want is the full text the SDK's jq
// program produces for the input, read off lib/mcpserver_core.sh; the bats
// file itself asserts a --partial of most of them. "" means the call passes.
var batsCases = []struct {
	name, tool, args, want string
}{
	{"missing required field fails with its name", "strict", `{"repo": "a/b"}`, "Missing required parameter(s): number."},
	{"unknown field fails and lists allowed parameters", "strict", `{"number": "5", "pr": 339}`, "Unknown parameter(s): pr. Allowed parameters: mode, number, repo."},
	{"valid arguments pass", "strict", `{"number": "5", "repo": "a/b"}`, ""},
	{"unknown field allowed when additionalProperties is unset", "loose", `{"a": "x", "anything": "y"}`, ""},
	{"value outside the declared enum", "strict", `{"number": "5", "repo": "x/y"}`, `Invalid value(s): repo="x/y" (allowed: a/b, c/d).`},
	{"two invalid enum values in one message", "strict", `{"number": "5", "repo": "x/y", "mode": "staging"}`, `Invalid value(s): mode="staging" (allowed: development, production); repo="x/y" (allowed: a/b, c/d).`},
	{"non-string against a string enum fails on type", "strict", `{"number": "5", "mode": 5}`, "Invalid type(s): mode expected string, got number (5)."},
	{"enum property absent passes", "strict", `{"number": "5"}`, ""},
	{"property with no enum is unaffected", "loose", `{"a": "anything-at-all"}`, ""},
	{"missing required precedes invalid enum", "strict", `{"repo": "x/y"}`, "Missing required parameter(s): number."},
	{"valid typed arguments pass", "typed", `{"name": "abc", "count": 5, "active": true, "tags": ["a", "b"]}`, ""},
	{"string where integer declared", "typed", `{"name": "abc", "count": "5"}`, `Invalid type(s): count expected integer, got string ("5").`},
	{"non-integer where integer declared", "typed", `{"name": "abc", "count": 5.5}`, "Invalid type(s): count expected integer, got number (non-integer) (5.5)."},
	{"whole-valued number satisfies integer", "typed", `{"name": "abc", "count": 5}`, ""},
	{"string where boolean declared", "typed", `{"name": "abc", "active": "true"}`, `Invalid type(s): active expected boolean, got string ("true").`},
	{"pattern violation names the pattern", "typed", `{"name": "ABC"}`, `Invalid value(s): name="ABC" does not match pattern ^[a-z]+$.`},
	{"pattern match passes", "typed", `{"name": "abc"}`, ""},
	{"array item of wrong type names the index", "typed", `{"name": "abc", "tags": ["a", 5]}`, "Invalid array item(s): tags[1] expected string, got number (5)."},
	{"array item outside item enum names the index", "typed", `{"name": "abc", "tags": ["a", "z"]}`, `Invalid array item(s): tags[1]="z" (allowed: a, b, c).`},
	{"every item matching passes", "typed", `{"name": "abc", "tags": ["a", "b", "c"]}`, ""},
	{"items declaring only type", "counts", `{"values": [1, "not-a-number"]}`, `Invalid array item(s): values[1] expected integer, got string ("not-a-number").`},
	{"items declaring only enum", "colors", `{"values": ["red", "purple"]}`, `Invalid array item(s): values[1]="purple" (allowed: red, green, blue).`},
	{"type precedes pattern", "typed", `{"name": "ABC", "count": "5"}`, `Invalid type(s): count expected integer, got string ("5").`},
	{"required precedes type", "typed", `{"count": "5"}`, "Missing required parameter(s): name."},
	{"number where string declared", "typed", `{"name": 12345}`, "Invalid type(s): name expected string, got number (12345)."},
	{"untyped tool constraints unaffected", "strict", `{"number": "5", "repo": "a/b", "mode": "production"}`, ""},
	{"union accepts integer member", "union", `{"count": 5}`, ""},
	{"union accepts string member", "union", `{"count": "5"}`, ""},
	{"object outside union", "union", `{"count": {"a": 1}}`, `Invalid type(s): count expected integer or string, got object ({"a":1}).`},
	{"array outside union", "union", `{"count": [1, 2, 3]}`, "Invalid type(s): count expected integer or string, got array ([1,2,3])."},
	{"null outside union", "union", `{"count": null}`, "Invalid type(s): count expected integer or string, got null (null)."},
	{"boolean outside union", "union", `{"count": true}`, "Invalid type(s): count expected integer or string, got boolean (true)."},
	{"non-integer against union offering integer", "union", `{"count": 5.5}`, "Invalid type(s): count expected integer or string, got number (non-integer) (5.5)."},
	{"single-member union fails on type not enum", "union", `{"choice": 7}`, "Invalid type(s): choice expected string, got number (7)."},
	{"union items accept every member", "union", `{"values": [1, "x"]}`, ""},
	{"item outside union items type", "union", `{"values": [1, true]}`, "Invalid array item(s): values[1] expected integer or string, got boolean (true)."},
	{"value equal to minimum", "ranged", `{"limit": 1}`, ""},
	{"value equal to maximum", "ranged", `{"limit": 50}`, ""},
	{"below minimum", "ranged", `{"limit": 0}`, "Out-of-range value(s): limit=0 below minimum 1."},
	{"above maximum", "ranged", `{"limit": 999}`, "Out-of-range value(s): limit=999 above maximum 50."},
	{"exclusiveMinimum rejects the bound", "ranged", `{"above": 0}`, "Out-of-range value(s): above=0 not above exclusiveMinimum 0."},
	{"exclusiveMinimum accepts above", "ranged", `{"above": 0.5}`, ""},
	{"exclusiveMaximum rejects the bound", "ranged", `{"below": 100}`, "Out-of-range value(s): below=100 not below exclusiveMaximum 100."},
	{"exclusiveMaximum accepts below", "ranged", `{"below": 99}`, ""},
	{"non-integer checked against bound", "ranged", `{"score": 0.5}`, "Out-of-range value(s): score=0.5 below minimum 1."},
	{"negative against minimum 1", "ranged", `{"limit": -1}`, "Out-of-range value(s): limit=-1 below minimum 1."},
	{"string with minimum unenforced", "ranged", `{"untyped": "ab"}`, ""},
	{"boolean with minimum unenforced", "ranged", `{"untyped": true}`, ""},
	{"untyped number still bounded", "ranged", `{"untyped": 2}`, "Out-of-range value(s): untyped=2 below minimum 3."},
	{"two out-of-range properties", "ranged", `{"above": 0, "limit": 999}`, "Out-of-range value(s): above=0 not above exclusiveMinimum 0; limit=999 above maximum 50."},
	{"type precedes range on the same value", "ranged", `{"limit": 0.5}`, "Invalid type(s): limit expected integer, got number (non-integer) (0.5)."},
	{"pattern precedes range", "ranged", `{"name": "ABC", "limit": 0}`, `Invalid value(s): name="ABC" does not match pattern ^[a-z]+$.`},
	{"range precedes items", "ranged", `{"limit": 0, "tags": [7]}`, "Out-of-range value(s): limit=0 below minimum 1."},
	{"range precedes enum", "ranged", `{"limit": 0, "mode": "z"}`, "Out-of-range value(s): limit=0 below minimum 1."},
	{"absent bounded property not reported", "ranged", `{"name": "abc"}`, ""},
	{"fraction at 2^52", "typed", `{"name": "abc", "count": 4503599627370496.5}`, "Invalid type(s): count expected integer, got number (non-integer) (4503599627370496.5)."},
	{"negative fraction at 2^52", "typed", `{"name": "abc", "count": -4503599627370496.5}`, "Invalid type(s): count expected integer, got number (non-integer) (-4503599627370496.5)."},
	{"whole value at 2^52", "typed", `{"name": "abc", "count": 4503599627370496}`, ""},
	{"odd whole value above 2^53", "typed", `{"name": "abc", "count": 9007199254740993}`, ""},
	{"small non-integer", "typed", `{"name": "abc", "count": 1.5}`, "Invalid type(s): count expected integer, got number (non-integer) (1.5)."},
	{"exponent-rendered fraction", "typed", `{"name": "abc", "count": 1.5e-7}`, "Invalid type(s): count expected integer, got number (non-integer) (1.5E-7)."},
	{"zero fraction is integer", "typed", `{"name": "abc", "count": 1.0}`, ""},
	{"exponent literal is integer", "typed", `{"name": "abc", "count": 1e2}`, ""},
	{"whole exponent literal is integer", "typed", `{"name": "abc", "count": 1.5e3}`, ""},
	{"fraction at 2^52 against union", "union", `{"count": 4503599627370496.5}`, "Invalid type(s): count expected integer or string, got number (non-integer) (4503599627370496.5)."},
	{"fractional element at 2^52", "counts", `{"values": [1, 4503599627370496.5]}`, "Invalid array item(s): values[1] expected integer, got number (non-integer) (4503599627370496.5)."},
	{"fractional element at 2^52 against union items", "union", `{"values": [1, 4503599627370496.5]}`, "Invalid array item(s): values[1] expected integer or string, got number (non-integer) (4503599627370496.5)."},
	{"fraction at 2^52 is a type defect not range", "ranged", `{"limit": 4503599627370496.5}`, "Invalid type(s): limit expected integer, got number (non-integer) (4503599627370496.5)."},
	{"e0 does not escape the fraction check", "typed", `{"name": "abc", "count": 4503599627370496.5e0}`, "Invalid type(s): count expected integer, got number (non-integer) (4503599627370496.5)."},
	// The SDK's KNOWN GAP test accepts this and says whoever closes the gap
	// inverts it; deciding integers exactly closes it.
	{"KNOWN GAP closed: fraction below smallest subnormal", "typed", `{"name": "abc", "count": 1.5e-400}`, "Invalid type(s): count expected integer, got number (non-integer) (1.5E-400)."},
	{"string in place of object", "strict", `"oops"`, "Invalid arguments: expected a JSON object, got string."},
	{"array in place of object", "strict", `[1,2]`, "Invalid arguments: expected a JSON object, got array."},
	{"null in place of object", "strict", `null`, "Invalid arguments: expected a JSON object, got null."},
	{"empty object checked against required", "strict", `{}`, "Missing required parameter(s): number."},
	{"arguments that are not JSON", "strict", `{not valid json`, "Cannot validate arguments for strict: they could not be evaluated against its schema."},
	// handle_tools_call wiring: the isError texts.
	{"call: invalid arguments", "strict", `{"repo":"a/b"}`, "Missing required parameter(s): number."},
	{"call: invalid enum", "strict", `{"number":"5","repo":"x/y"}`, `Invalid value(s): repo="x/y" (allowed: a/b, c/d).`},
	{"call: out of range", "ranged", `{"limit":999}`, "Out-of-range value(s): limit=999 above maximum 50."},
	{"call: valid", "strict", `{"number":"5"}`, ""},
	{"call: null arguments", "strict", `null`, "Invalid arguments: expected a JSON object, got null."},
	{"call: false arguments", "strict", `false`, "Invalid arguments: expected a JSON object, got boolean."},
	{"call: true arguments", "strict", `true`, "Invalid arguments: expected a JSON object, got boolean."},
	{"call: number arguments", "strict", `0`, "Invalid arguments: expected a JSON object, got number."},
	{"call: string arguments", "strict", `"oops"`, "Invalid arguments: expected a JSON object, got string."},
	{"call: array arguments", "strict", `[1,2]`, "Invalid arguments: expected a JSON object, got array."},
	{"call: no arguments key defaults to {}", "loose", `{}`, ""},
	{"declaration: object-valued tools map", "n", `{}`, "Missing required parameter(s): n."},
}

func TestBatsMirror(t *testing.T) {
	compiled := map[string]*Schema{}
	for tool, src := range batsFixtures {
		s, err := Compile(tool, json.RawMessage(src))
		if err != nil {
			t.Fatalf("Compile(%s): %v", tool, err)
		}
		compiled[tool] = s
	}
	for _, tc := range batsCases {
		t.Run(tc.name, func(t *testing.T) {
			assertText(t, compiled[tc.tool].Validate(json.RawMessage(tc.args)), tc.want)
		})
	}
}

// The "malformed" and "badrange" fixtures leave a type list or a bound
// unenforced in the SDK, and so here (issue 11 item 9): the tool compiles,
// the malformed keyword accepts every value, and Ignored names it.
func TestBatsLenientSchemasStayUnenforced(t *testing.T) {
	for _, tc := range []struct{ src, args, where string }{
		{`{"type":"object","properties":{"empty":{"type":[]}}}`, `{"empty": 5}`, "/properties/empty/type"},
		{`{"type":"object","properties":{"mixed":{"type":["string",7]}}}`, `{"mixed": 5}`, "/properties/mixed/type"},
		{`{"type":"object","properties":{"emptyitems":{"type":"array","items":{"type":[]}}}}`, `{"emptyitems": [1, "a", null]}`, "/properties/emptyitems/items/type"},
		{`{"type":"object","properties":{"stringbound":{"minimum":"3"}}}`, `{"stringbound": 1}`, "/properties/stringbound/minimum"},
		{`{"type":"object","properties":{"draft04":{"minimum":0,"exclusiveMinimum":true}}}`, `{"draft04": 0}`, "/properties/draft04/exclusiveMinimum"},
	} {
		s := mustCompile(t, tc.src)
		assertText(t, s.Validate(json.RawMessage(tc.args)), "")
		ign := s.Ignored()
		if len(ign) != 1 || ign[0].Pointer != tc.where || ign[0].Refuses || ign[0].Reason == "" {
			t.Errorf("%s: ignored %+v, want one at %s", tc.src, ign, tc.where)
		}
	}
	// What stays well-formed beside it is still enforced: the minimum of
	// the draft-04 case is 0.
	s := mustCompile(t, `{"type":"object","properties":{"draft04":{"minimum":0,"exclusiveMinimum":true}}}`)
	assertText(t, s.Validate(json.RawMessage(`{"draft04": -1}`)), "Out-of-range value(s): draft04=-1 below minimum 0.")
}

// The bats draft-04 case, with the dialect declared: v6 enforces the boolean
// modifier that the SDK left unenforced, and the wording is the SDK's range
// wording with the `minimum` literal as the exclusive bound.
func TestDraft04BooleanExclusiveMinimum(t *testing.T) {
	s := mustCompile(t, `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object",
		"properties":{"draft04":{"minimum":0,"exclusiveMinimum":true},"top":{"maximum":10,"exclusiveMaximum":true}}}`)
	assertText(t, s.Validate(json.RawMessage(`{"draft04": 0}`)), "Out-of-range value(s): draft04=0 not above exclusiveMinimum 0.")
	assertText(t, s.Validate(json.RawMessage(`{"draft04": 0.001}`)), "")
	assertText(t, s.Validate(json.RawMessage(`{"draft04": -1, "top": 10}`)),
		"Out-of-range value(s): draft04=-1 not above exclusiveMinimum 0; top=10 not below exclusiveMaximum 10.")
}

func mustCompile(t testing.TB, src string) *Schema {
	t.Helper()
	s, err := Compile("t", json.RawMessage(src))
	if err != nil {
		t.Fatalf("Compile(%s): %v", src, err)
	}
	return s
}

// assertText checks a Validate result against the exact text ("" = valid).
func assertText(t testing.TB, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("want valid, got %q", err.Error())
		}
		return
	}
	if err == nil {
		t.Fatalf("want %q, got valid", want)
	}
	if _, ok := err.(*Error); !ok {
		t.Fatalf("want *Error, got %T", err)
	}
	if err.Error() != want {
		t.Fatalf("text mismatch\n got: %s\nwant: %s", err.Error(), want)
	}
}
