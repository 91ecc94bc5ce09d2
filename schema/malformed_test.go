package schema

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Issue 11 item 9: a keyword whose value is not JSON Schema is left out
// (not enforced) and listed by Ignored, instead of failing every call.
func TestMalformedKeywordsAreLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		ignored   []string // pointers, in order
		valid     []string // arguments that pass
		invalid   map[string]string
	}{
		{name: "nested schema the SDK never read", src: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":[],"minLength":"x"}}}}}`,
			ignored: []string{"/properties/a/properties/b/minLength", "/properties/a/properties/b/type"},
			valid:   []string{`{"a":{"b":1}}`, `{"a":{"b":""}}`},
			invalid: map[string]string{`{"a":5}`: "Invalid type(s): a expected object, got number (5)."}},
		{name: "a type naming no JSON type", src: `{"type":"object","properties":{"a":{"type":"int"}}}`,
			ignored: []string{"/properties/a/type"}, valid: []string{`{"a":"x"}`, `{"a":1}`}},
		{name: "a required list that is a string", src: `{"type":"object","required":"a"}`,
			ignored: []string{"/required"}, valid: []string{`{}`}},
		{name: "a property schema that is a number stays declared", src: `{"type":"object","properties":{"x":5,"n":{"type":"integer"}},"additionalProperties":false}`,
			ignored: []string{"/properties/x"}, valid: []string{`{"x":"anything"}`},
			invalid: map[string]string{
				`{"x":1,"y":2}`: "Unknown parameter(s): y. Allowed parameters: n, x.",
				`{"n":1.5}`:     "Invalid type(s): n expected integer, got number (non-integer) (1.5)."}},
		{name: "a list with a malformed member is left out whole", src: `{"type":"object","properties":{"a":{"anyOf":[5,{"type":"string"}]},"b":{"not":5}}}`,
			ignored: []string{"/properties/a/anyOf", "/properties/b/not"}, valid: []string{`{"a":1,"b":1}`}},
		{name: "under not, oneOf and if the applicator is left out", src: `{"type":"object","properties":{
			"n":{"not":{"type":[]}},"o":{"oneOf":[{"type":"string"},{"type":"string","minLength":"2"}]},
			"i":{"if":{"type":"string","pattern":null},"then":{"minLength":3}},"deep":{"allOf":[{"not":{"properties":{"x":{"type":[]}}}}]}}}`,
			ignored: []string{"/properties/deep/allOf/0/not", "/properties/i/if", "/properties/n/not", "/properties/o/oneOf"},
			valid:   []string{`{"n":1,"o":"s","i":"ab","deep":{"x":1}}`}},
		{name: "draft-04 exclusiveMinimum without its minimum", src: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"exclusiveMinimum":true,"maximum":3}}}`,
			ignored: []string{"/properties/a/exclusiveMinimum"}, valid: []string{`{"a":-100}`},
			invalid: map[string]string{`{"a":4}`: "Out-of-range value(s): a=4 above maximum 3."}},
		{name: "a patternProperties name that is not a regexp", src: `{"type":"object","patternProperties":{"(?=x)":{"type":"string"},"^n_":{"type":"integer"}}}`,
			ignored: []string{"/patternProperties/(?=x)"}, valid: []string{`{"x":1}`, `{"n_a":2}`},
			invalid: map[string]string{`{"n_a":"s"}`: "Invalid argument(s): n_a expected integer, got string (\"s\")."}},
		{name: "names given twice are enforced once each", src: `{"type":"object","required":["a","a","b"],"properties":{"t":{"type":["string","string"]}}}`,
			ignored: []string{"/properties/t/type", "/required"}, valid: []string{`{"a":1,"b":2,"t":"s"}`},
			invalid: map[string]string{
				`{"b":1}`:             "Missing required parameter(s): a.",
				`{"a":1,"b":2,"t":5}`: "Invalid type(s): t expected string or string, got number (5)."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.src)
			var got []string
			for _, i := range s.Ignored() {
				got = append(got, i.Pointer)
				if i.Reason == "" || !strings.HasPrefix(i.String(), i.Pointer+" is malformed (") {
					t.Errorf("ignored %+v reads %q", i, i.String())
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.ignored, " ") {
				t.Errorf("ignored %q, want %q", got, tc.ignored)
			}
			for _, a := range tc.valid {
				assertText(t, s.Validate(json.RawMessage(a)), "")
			}
			for a, want := range tc.invalid {
				assertText(t, s.Validate(json.RawMessage(a)), want)
			}
		})
	}
}

// A pattern that cannot be compiled is not dropped: a string it applies to
// is refused as the SDK's failing jq test() refused it, whatever else is
// wrong; a value it does not apply to is unaffected.
func TestUnevaluablePatternRefusesWhatItApplies(t *testing.T) {
	const cannot = "Cannot validate arguments for t: they could not be evaluated against its schema."
	s := mustCompile(t, `{"type":"object","required":["need"],"properties":{
		"look":{"type":"string","pattern":"^(?!-)[a-z-]+$"},
		"num":{"pattern":5},
		"nested":{"type":"object","properties":{"deep":{"pattern":"(a)\\1"}}},
		"off":{"type":"string","pattern":null},
		"need":{}}}`)
	var refuses []string
	for _, i := range s.Ignored() {
		if i.Refuses {
			refuses = append(refuses, i.Pointer)
			if !strings.Contains(i.String(), "cannot be evaluated") {
				t.Errorf("%q", i.String())
			}
		}
	}
	if want := "/properties/look/pattern /properties/nested/properties/deep/pattern /properties/num/pattern"; strings.Join(refuses, " ") != want {
		t.Errorf("refusing patterns %q, want %s", refuses, want)
	}
	for args, want := range map[string]string{
		`{"need":1}`:                          "",
		`{"need":1,"off":"-x"}`:               "", // null pattern: skipped, as the SDK skipped it
		`{"need":1,"look":"abc"}`:             cannot,
		`{"look":"abc"}`:                      cannot, // before "missing": the SDK's jq failed as a whole
		`{"need":1,"num":"s"}`:                cannot,
		`{"need":1,"num":7}`:                  "",
		`{"need":1,"look":7}`:                 "Invalid type(s): look expected string, got number (7).",
		`{"need":1,"nested":{"deep":"aa"}}`:   cannot,
		`{"need":1,"nested":{"other":"aa"}}`:  "",
		`{"need":1,"nested":{"deep":["aa"]}}`: "",
	} {
		assertText(t, s.Validate(json.RawMessage(args)), want)
	}
	// The refusal is per call: concurrent validations each get their own.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assertText(t, s.Validate(json.RawMessage(`{"need":1,"look":"abc"}`)), cannot)
			assertText(t, s.Validate(json.RawMessage(`{"need":1}`)), "")
		}()
	}
	wg.Wait()
}

// What is wrong beyond a keyword's value still fails the compile, as
// before: a reference that cannot be resolved, a root that is no schema.
func TestNotMalformedStillDoesNotCompile(t *testing.T) {
	for _, src := range []string{`{"type":"object","properties":{"a":{"$ref":"http://example.com/x"}}}`, `[1]`, `{"$ref":"#/$defs/missing"}`} {
		if _, err := Compile("t", json.RawMessage(src)); err == nil || !strings.Contains(err.Error(), "does not compile") {
			t.Errorf("Compile(%s): %v", src, err)
		}
	}
	// A well-formed schema lists nothing.
	if ign := mustCompile(t, `{"type":"object","properties":{"a":{"type":["string","null"],"minimum":1,"pattern":"^a"}}}`).Ignored(); ign != nil {
		t.Errorf("ignored %+v", ign)
	}
}
