package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// Texts checked against the SDK's own validator program run by jq 1.7.1:
// jq's number rendering, string escapes, member order, join of a mixed enum.
func TestJQRenderingInMessages(t *testing.T) {
	typed := batsFixtures["typed"]
	for _, tc := range []struct{ schema, args, want string }{
		{typed, `{"name":"a\u007f\"\\\n\t\u0001é😀\u2028<>&"}`, "Invalid value(s): name=\"a\\u007f\\\"\\\\\\n\\t\\u0001é😀\u2028<>&\" does not match pattern ^[a-z]+$."},
		{typed, `{"name":1e2}`, "Invalid type(s): name expected string, got number (1E+2)."},
		{typed, `{"name":-0}`, "Invalid type(s): name expected string, got number (-0)."},
		{typed, `{"name":0.00}`, "Invalid type(s): name expected string, got number (0.00)."},
		{typed, `{"name":1e-7}`, "Invalid type(s): name expected string, got number (1E-7)."},
		{typed, `{"name":100e-2}`, "Invalid type(s): name expected string, got number (1.00)."},
		{typed, `{"name":12345678901234567890123456789}`, "Invalid type(s): name expected string, got number (12345678901234567890123456789)."},
		{typed, `{"name":-1e10000}`, "Invalid type(s): name expected string, got number (-1E+10000)."},
		{typed, `{"name":0e5}`, "Invalid type(s): name expected string, got number (0E+5)."},
		{typed, `{"name":1.23e-5}`, "Invalid type(s): name expected string, got number (0.0000123)."},
		{typed, `{"name":[1.0,{"x":1e2,"y":"\u0000"}]}`, `Invalid type(s): name expected string, got array ([1.0,{"x":1E+2,"y":"\u0000"}]).`},
		{batsFixtures["union"], `{"count":{"b":1,"a":1.0e1,"b":2}}`, `Invalid type(s): count expected integer or string, got object ({"b":2,"a":10}).`},
		{`{"properties":{"e":{"enum":[1,"x",null,true,2.50]}}}`, `{"e":"y"}`, `Invalid value(s): e="y" (allowed: 1, x, , true, 2.50).`},
		{`{"properties":{"e":{"enum":[1,"x",null,true,2.50]}}}`, `{"e":3}`, `Invalid value(s): e="3" (allowed: 1, x, , true, 2.50).`},
		{`{"properties":{"e":{"enum":[1,"x",null,true,2.50]}}}`, `{"e":{"a":1}}`, `Invalid value(s): e="{"a":1}" (allowed: 1, x, , true, 2.50).`},
		{`{"properties":{"e":{"enum":[1,"x",null,true,2.50]}}}`, `{"e":"a\"b\nc"}`, "Invalid value(s): e=\"a\"b\nc\" (allowed: 1, x, , true, 2.50)."},
		{`{"properties":{"e":{"enum":[1,"x",null,true,2.50]}}}`, `{"e":2.5}`, ""},
		{`{"properties":{"t":{"type":"array","items":{"enum":[1,2]}}}}`, `{"t":[3,"x",1.0]}`, `Invalid array item(s): t[0]=3 (allowed: 1, 2); t[1]="x" (allowed: 1, 2).`},
		{batsFixtures["strict"], `{"number":5,"pr":1}`, "Unknown parameter(s): pr. Allowed parameters: mode, number, repo."},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"é":1,"Z":2,"a":3,"B":4,"aa":5}`, "Unknown parameter(s): B, Z, aa, é. Allowed parameters: a."},
		{`{"type":"object","additionalProperties":false}`, `{"x":1,"b":2}`, "Unknown parameter(s): b, x. Allowed parameters: ."},
		{`{"properties":{"e":{"enum":[]}}}`, `{"e":1}`, `Invalid value(s): e="1" (allowed: ).`},
		{`{"properties":{"x":{"minimum":1e2}}}`, `{"x":5}`, "Out-of-range value(s): x=5 below minimum 1E+2."},
		{`{"properties":{"x":{"maximum":0.50}}}`, `{"x":0.6}`, "Out-of-range value(s): x=0.6 above maximum 0.50."},
		{`{"properties":{"x":{"maximum":0.50,"minimum":1}}}`, `{"x":0.7}`, "Out-of-range value(s): x=0.7 below minimum 1; x=0.7 above maximum 0.50."},
		{batsFixtures["ranged"], `{"limit":1e400}`, "Out-of-range value(s): limit=1E+400 above maximum 50."},
		{batsFixtures["ranged"], `{"limit":"x","score":"y","above":-1,"name":5}`, `Invalid type(s): limit expected integer, got string ("x"); name expected string, got number (5); score expected number, got string ("y").`},
		{batsFixtures["ranged"], `{"tags":[1,"a",null,{}],"mode":"q"}`, "Invalid array item(s): tags[0] expected string, got number (1); tags[2] expected string, got null (null); tags[3] expected string, got object ({})."},
		{`{"properties":{"x":{"type":["number","string"],"minimum":3}}}`, `{"x":true}`, "Invalid type(s): x expected number or string, got boolean (true)."},
		{`{"properties":{"x":{"type":["integer","null"]}}}`, `{"x":0.5}`, "Invalid type(s): x expected integer or null, got number (non-integer) (0.5)."},
		{`{"required":["b","a","c"],"properties":{"a":{}}}`, `{"a":1}`, "Missing required parameter(s): b, c."},
		{`{"properties":{"t":{"type":"array","items":{"type":"integer","enum":[1,2]}}}}`, `{"t":[1.5,3,"x"]}`, `Invalid array item(s): t[0] expected integer, got number (non-integer) (1.5); t[1]=3 (allowed: 1, 2); t[2] expected integer, got string ("x").`},
	} {
		assertText(t, mustCompile(t, tc.schema).Validate(json.RawMessage(tc.args)), tc.want)
	}
}

// Integers are decided from the literal, exactly. A float64 would accept
// 4503599627370496.5 (it rounds to 2^52) and 1.5e-400 (it underflows to 0).
func TestExactIntegers(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"n":{"type":"integer"}}}`)
	for _, lit := range []string{"0", "-0", "1.0", "1e2", "1.5e3", "1E+2", "4503599627370496", "9007199254740993",
		"1e400", "12345678901234567890123456789", "100e-2", "0.0e5", "-5.000", "2.5e1"} {
		assertText(t, s.Validate(json.RawMessage(`{"n":`+lit+`}`)), "")
	}
	for lit, shown := range map[string]string{
		"4503599627370496.5": "4503599627370496.5", "1.5e-400": "1.5E-400", "0.5": "0.5", "1e-1": "0.1",
		"1.25e1": "12.5", "9007199254740993.1": "9007199254740993.1", "5e-324": "5E-324", "-0.1": "-0.1",
		"123456789012345678901234567890.5": "123456789012345678901234567890.5",
	} {
		assertText(t, s.Validate(json.RawMessage(`{"n":`+lit+`}`)),
			"Invalid type(s): n expected integer, got number (non-integer) ("+shown+").")
	}
}

// Violations the SDK never looked at are still rejected (v6 decides) and are
// worded in the SDK's shape.
func TestFallbackMessages(t *testing.T) {
	for _, tc := range []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"config":{"type":"object","required":["name","id"],"properties":{"name":{"type":"string","minLength":1},"n":{"type":"integer","minimum":1e2}},"additionalProperties":false}}}`,
			`{"config":{"name":"","n":5,"zz":1,"aa":2}}`,
			`Invalid argument(s): missing required parameter(s): config.id; unknown parameter(s): config.aa, config.zz; config.n=5 below minimum 1E+2; config.name="" shorter than minLength 1.`},
		{`{"type":"object","properties":{"email":{"type":"string","format":"email"}}}`, `{"email":"nope"}`, `Invalid argument(s): email="nope" is not a valid email.`},
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"v":true}`,
			`Invalid argument(s): v matches none of the oneOf alternatives (v expected string, got boolean (true) | v expected integer, got boolean (true)).`},
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"number"},{"type":"integer"}]}}}`, `{"v":1}`, `Invalid argument(s): v matches more than one oneOf alternative (0 and 1).`},
		{`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`, `{}`,
			`Invalid argument(s): arguments match none of the anyOf alternatives (missing required parameter(s): a | missing required parameter(s): b).`},
		{`{"type":"object","properties":{"m":{"const":"x"}}}`, `{"m":"y"}`, `Invalid argument(s): m="y" (allowed: x).`},
		{`{"type":"object","properties":{"t":{"type":"array","items":{"type":"object","properties":{"k":{"enum":[1,2]}}},"uniqueItems":true,"maxItems":2}}}`, `{"t":[{"k":3},{"k":3},{"k":1}]}`,
			`Invalid argument(s): t has 3 item(s), more than maxItems 2; t[0] and t[1] are equal (uniqueItems); t[0].k="3" (allowed: 1, 2); t[1].k="3" (allowed: 1, 2).`},
		{`{"type":"object","$defs":{"pos":{"type":"integer","exclusiveMinimum":0}},"properties":{"n":{"$ref":"#/$defs/pos"}}}`, `{"n":0}`, `Invalid argument(s): n=0 not above exclusiveMinimum 0.`},
		// draft-07 ignores $ref's siblings, so the sibling `required` is not named.
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"o":{"type":"object","required":["x"]}},"$ref":"#/definitions/o","required":["y"]}`, `{}`, `Invalid argument(s): missing required parameter(s): x.`},
		{`{"type":"object","properties":{"a":false}}`, `{"a":1}`, `Invalid argument(s): a is not allowed.`},
		{`{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`, `{"a":"s"}`, `Invalid argument(s): a="s" matches the schema under not.`},
		// A patternProperties key is not "unknown"; the real defect is named.
		{`{"type":"object","patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false,"properties":{"n":{"type":"string","minLength":3}}}`, `{"x-a":"ok","n":"ab"}`, `Invalid argument(s): n="ab" shorter than minLength 3.`},
		{`{"type":"object","properties":{"a b":{"type":"object","properties":{"1":{"type":"string"}}}}}`, `{"a b":{"1":2}}`, `Invalid argument(s): ["a b"].1 expected string, got number (2).`},
		{`{"type":"object","dependentRequired":{"a":["b"]}}`, `{"a":1}`, `Invalid argument(s): missing parameter(s) b required when a is present.`},
		{`{"type":"object","propertyNames":{"maxLength":2}}`, `{"abc":1}`, `Invalid argument(s): abc is not an allowed parameter name.`},
		{`{"type":"object","minProperties":2}`, `{"a":1}`, `Invalid argument(s): arguments have 1 parameter(s), fewer than minProperties 2.`},
		{`{"type":"object","properties":{"n":{"type":"number","multipleOf":0.5}}}`, `{"n":0.3}`, `Invalid argument(s): n=0.3 not a multiple of 0.5.`},
		{`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`, `{"a":1}`, `Invalid argument(s): missing required parameter(s): b.`},
		{`{"type":"object","properties":{"t":{"type":"array","contains":{"type":"string"}}}}`, `{"t":[1]}`, `Invalid argument(s): t has no item matching contains.`},
		// 2020-12 items start after prefixItems, so index 1 is the offender.
		{`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}}}`, `{"t":[1,"a"]}`, `Invalid array item(s): t[1] expected integer, got string ("a").`},
		{`{"type":"object","properties":{"s":{"type":"string","maxLength":2}}}`, `{"s":"ééé"}`, `Invalid argument(s): s="ééé" longer than maxLength 2.`},
	} {
		assertText(t, mustCompile(t, tc.schema).Validate(json.RawMessage(tc.args)), tc.want)
	}
}

// Numbers past 10000 digits or an exponent beyond ±10000 are refused: exact
// arithmetic on them is slow in math/big and v6 panics on some of them. The
// SDK (jq's decNumber) would have echoed them; see doc.go.
func TestOversizedNumbers(t *testing.T) {
	cannot := "Cannot validate arguments for t: they could not be evaluated against its schema."
	for _, schema := range []string{batsFixtures["ranged"], batsFixtures["loose"]} {
		s := mustCompile(t, schema)
		for _, lit := range []string{"1e99999999", "-1e10001", "1e-10001", "1E+999999", strings.Repeat("7", 10001), "0." + strings.Repeat("0", 10000) + "1"} {
			for _, args := range []string{`{"score":` + lit + `}`, `{"limit":` + lit + `}`, `{"tags":[` + lit + `]}`, `{"x":{"y":` + lit + `}}`} {
				start := time.Now()
				if errText(s.Validate(json.RawMessage(args))) != cannot {
					t.Errorf("%.60s: %.200s", args, errText(s.Validate(json.RawMessage(args))))
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("%.40s took %v", args, d)
				}
			}
		}
		assertText(t, s.Validate(json.RawMessage(`{"score":1e10000,"untyped":`+strings.Repeat("9", 10000)+`}`)), "")
	}
	_, err := Compile("t", json.RawMessage(`{"properties":{"x":{"minimum":1e99999999}}}`))
	assertText(t, err, "Cannot validate arguments for t: its inputSchema does not compile: the number 1e99999999 is outside the supported range (at most 10000 digits, exponent within ±10000).")
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`null`, "Cannot validate arguments for t: it declares no inputSchema."},
		{``, "Cannot validate arguments for t: it declares no inputSchema."},
		{`{"type":`, "Cannot validate arguments for t: its inputSchema is not valid JSON: unexpected EOF."},
		{`[1]`, "Cannot validate arguments for t: its inputSchema does not compile: at /: got array, want boolean or object."},
		{`{"$ref":"https://example.com/x.json"}`, `Cannot validate arguments for t: its inputSchema does not compile: failing loading "https://example.com/x.json": loading schemas from outside the inputSchema is disabled.`},
		{`{"$schema":"https://example.com/meta"}`, `Cannot validate arguments for t: its inputSchema does not compile: failing loading "https://example.com/meta": loading schemas from outside the inputSchema is disabled.`},
		{`{"$ref":"#/$defs/missing"}`, `Cannot validate arguments for t: its inputSchema does not compile: json-pointer in "#/$defs/missing" not found.`},
	} {
		_, err := Compile("t", json.RawMessage(tc.src))
		var e *Error
		if !errors.As(err, &e) || e.Message != tc.want {
			t.Errorf("Compile(%s)\n got: %v\nwant: %s", tc.src, err, tc.want)
		}
	}
	// A relative $ref resolves against an in-memory name, never the disk.
	if _, err := Compile("t", json.RawMessage(`{"$ref":"other.json"}`)); err == nil || !strings.Contains(err.Error(), "is disabled") {
		t.Errorf("relative $ref: %v", err)
	}
	// Older dialects compile when declared.
	for _, d := range []string{"http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2020-12/schema"} {
		mustCompile(t, `{"$schema":"`+d+`","type":"object"}`)
	}
}

func TestEmptyArgumentsMeanAbsent(t *testing.T) {
	s := mustCompile(t, batsFixtures["strict"])
	assertText(t, s.Validate(nil), "Missing required parameter(s): number.")
	assertText(t, mustCompile(t, batsFixtures["loose"]).Validate(nil), "")
	assertText(t, s.Validate(json.RawMessage(" ")), "Cannot validate arguments for t: they could not be evaluated against its schema.")
	assertText(t, s.Validate(json.RawMessage(`{"number":"5"} {}`)), "Cannot validate arguments for t: they could not be evaluated against its schema.")
}

// 100,000 levels is past encoding/json's 10000-level limit: the call is
// refused with the SDK's evaluation-failure text, without a stack overflow.
func TestDeepNesting(t *testing.T) {
	s := mustCompile(t, batsFixtures["loose"])
	const depth = 100000
	for _, open := range []string{"[", `{"a":`} {
		closeTok := "]"
		if open != "[" {
			closeTok = "}"
		}
		doc := `{"a":` + strings.Repeat(open, depth) + "1" + strings.Repeat(closeTok, depth) + "}"
		assertText(t, s.Validate(json.RawMessage(doc)), "Cannot validate arguments for t: they could not be evaluated against its schema.")
	}
	// Just inside the limit, a recursive schema walks all the way down and
	// names the offending leaf by its full path.
	rec := mustCompile(t, `{"type":"object","$defs":{"n":{"type":["array","integer"],"items":{"$ref":"#/$defs/n"}}},"properties":{"x":{"$ref":"#/$defs/n"}}}`)
	const inner = 9000
	doc := `{"x":` + strings.Repeat("[", inner) + `"s"` + strings.Repeat("]", inner) + "}"
	err := rec.Validate(json.RawMessage(doc))
	want := "Invalid argument(s): x" + strings.Repeat("[0]", inner) + ` expected array or integer, got string ("s").`
	assertText(t, err, want)
}

func TestTenMiBString(t *testing.T) {
	big := strings.Repeat("a", 10<<20)
	start := time.Now()
	assertText(t, mustCompile(t, batsFixtures["typed"]).Validate(json.RawMessage(`{"name":"`+big+`"}`)), "")
	upper := strings.ToUpper(big)
	assertText(t, mustCompile(t, batsFixtures["typed"]).Validate(json.RawMessage(`{"name":"`+upper+`"}`)),
		`Invalid value(s): name="`+upper+`" does not match pattern ^[a-z]+$.`)
	assertText(t, mustCompile(t, `{"type":"object","properties":{"s":{"type":"string","maxLength":5}}}`).Validate(json.RawMessage(`{"s":"`+big+`"}`)),
		`Invalid argument(s): s="`+big+`" longer than maxLength 5.`)
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("10 MiB arguments took %v", d)
	}
}

// One *Schema shared by many goroutines gives every goroutine the same
// answers as a sequential run (and -race sees no shared mutable state).
func TestConcurrentValidate(t *testing.T) {
	schemas := map[string]*Schema{}
	for tool, src := range batsFixtures {
		schemas[tool] = mustCompile(t, src)
	}
	want := make([]string, len(batsCases))
	for i, tc := range batsCases {
		want[i] = errText(schemas[tc.tool].Validate(json.RawMessage(tc.args)))
	}
	fallback := mustCompile(t, `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer","minimum":3}]},"e":{"format":"email"}}}`)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for round := 0; round < 20; round++ {
				for i := range batsCases {
					tc := batsCases[(i+g)%len(batsCases)]
					if got := errText(schemas[tc.tool].Validate(json.RawMessage(tc.args))); got != want[(i+g)%len(batsCases)] {
						errs <- tc.name + ": " + got
						return
					}
				}
				if fallback.Validate(json.RawMessage(`{"v":1,"e":"x"}`)) == nil {
					errs <- "fallback accepted invalid arguments"
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzValidate drives arbitrary bytes through every fixture: no panic, a
// deterministic answer, *Error on rejection with a message of a known shape,
// and the JSON decision agreeing with encoding/json.
func FuzzValidate(f *testing.F) {
	for _, tc := range batsCases {
		f.Add(tc.args)
	}
	for _, seed := range []string{`{"config":{"a":[1,{"b":null}]}}`, `{"count":1e999999999}`, `{"name":"\ud800"}`, `{"a":1,"a":2}`, `[`, `{"tags":[[],{}]}`} {
		f.Add(seed)
	}
	schemas := []*Schema{}
	for _, src := range batsFixtures {
		schemas = append(schemas, mustCompile(f, src))
	}
	schemas = append(schemas, mustCompile(f, `{"type":"object","properties":{"config":{"type":"object","required":["a"],"properties":{"a":{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"object","additionalProperties":false}]}}}}},"additionalProperties":{"type":"string","minLength":2}}`))
	prefixes := []string{"Missing required parameter(s): ", "Unknown parameter(s): ", "Invalid type(s): ", "Invalid value(s): ",
		"Out-of-range value(s): ", "Invalid array item(s): ", "Invalid argument(s): ", "Invalid arguments: expected a JSON object, got ",
		"Cannot validate arguments for t: they could not be evaluated against its schema."}
	f.Fuzz(func(t *testing.T, args string) {
		if args == "" {
			args = "{}"
		}
		n, perr := parseJSON([]byte(args))
		if (perr == nil) != json.Valid([]byte(args)) {
			t.Fatalf("parseJSON(%q) = %v, encoding/json disagrees", args, perr)
		}
		refused := perr != nil
		if perr == nil && n.Kind == jq.KindObject {
			_, refused = oversizedNumber(n)
		}
		for _, s := range schemas {
			err := s.Validate(json.RawMessage(args))
			if errText(err) != errText(s.Validate(json.RawMessage(args))) {
				t.Fatalf("non-deterministic answer for %q", args)
			}
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not *Error", err)
			}
			known := false
			for _, p := range prefixes {
				known = known || strings.HasPrefix(e.Message, p)
			}
			if !known || !strings.HasSuffix(e.Message, ".") {
				t.Fatalf("unexpected message shape %q for %q", e.Message, args)
			}
			if strings.HasPrefix(e.Message, "Cannot validate") != refused {
				t.Fatalf("evaluation verdict %q for %q", e.Message, args)
			}
		}
	})
}
