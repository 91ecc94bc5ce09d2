// Package schema compiles each MCP tool's inputSchema once, at load time, and
// checks a tools/call's raw arguments against it, answering a rejection with
// the exact text the bash SDK (shopwareLabs/bash-mcp-sdk) would have put in
// its isError result. Users of that SDK compare those texts byte for byte in
// their own tests, so the wording is a contract, not a courtesy.
//
// # What it owns
//
//   - Compile: one inputSchema → *Schema, or *Error whose text is what each
//     call to the tool should be answered with ("Cannot validate arguments
//     for T: its inputSchema does not compile: ...").
//   - (*Schema).Validate: raw arguments → nil or *Error with the full text.
//   - How the SDK's jq program quoted values in those texts: tojson,
//     tostring and join over values read and printed by internal/jq
//     (members in first-seen order, jq's string escapes and UTF-8 repair,
//     the decNumber number rendering), with numbers as the SDK's second jq
//     pass printed them (1e1000000000 → 1.7976931348623157E+308). The
//     wording was checked against jq 1.7.1 running the SDK's own validator
//     program; the printing rules are checked against jq in internal/jq.
//
// Looking a tool up in tools.json, and the texts for a missing, duplicated
// or unreadable entry, belong to the caller; so does the JSON-RPC error for
// a malformed request.
//
// # Validity versus wording
//
// Validity is decided by santhosh-tekuri/jsonschema/v6 under full JSON
// Schema: 2020-12 unless "$schema" names draft-04/06/07 or 2019-09. Only when
// v6 rejects is a message built, in this order:
//
//  1. Arguments that are not a JSON object: "Invalid arguments: expected a
//     JSON object, got <jq type>." (checked before the schema, never coerced).
//  2. The SDK's own categories, read from the top level of the schema as the
//     SDK reads them, most fundamental only, offenders sorted by key and
//     joined with "; ":
//     "Missing required parameter(s): a, b." (schema's required order);
//     "Unknown parameter(s): x. Allowed parameters: a, b.";
//     "Invalid type(s): p expected integer or string, got number
//     (non-integer) (5.5).";
//     "Invalid value(s): p=\"ABC\" does not match pattern ^[a-z]+$.";
//     "Out-of-range value(s): p=0 below minimum 1." (also "above maximum",
//     "not above exclusiveMinimum", "not below exclusiveMaximum");
//     "Invalid array item(s): p[1] expected string, got number (5)." and
//     "p[1]=\"z\" (allowed: a, b, c).";
//     "Invalid value(s): p=\"x/y\" (allowed: a/b, c/d)." (enum).
//  3. Anything else v6 found (nested objects, minLength, format, oneOf, a
//     $ref target, ...): "Invalid argument(s): " + one line per violation,
//     sorted by instance path and joined with "; ", + "." Each line has the
//     SDK's shape: a path ("config.items[2].name", "arguments" for the whole
//     object), then what was expected and what was given, e.g.
//     `config.name="" shorter than minLength 1`. anyOf/oneOf stay one line
//     listing their alternatives' reasons separated by " | ".
//
// Arguments that cannot be evaluated get the SDK's evaluation-failure text,
// "Cannot validate arguments for T: they could not be evaluated against its
// schema.": not JSON; nested deeper than 10000 levels (encoding/json's own
// limit); a number literal with more than 10000 digits or an exponent beyond
// ±10000 (math/big, used for every exact decision here and in v6, is slow
// on those and v6 panics on exponents past 1e6); or, defensively, a panic
// anywhere in validation. A refusal, never a silent pass.
//
// # Deliberate differences from the SDK
//
//   - Integers are decided exactly from the literal (math/big), never via
//     float64: 4503599627370496.5 and 1.5e-400 are not integers; 1.0, 1e2,
//     1.5e3 are. The SDK accepts 1.5e-400 (its own "KNOWN GAP" test).
//   - A keyword whose value is not JSON Schema (an empty or non-string
//     `type` list, a non-number bound, draft-04's boolean exclusiveMinimum
//     without a draft-04 "$schema", a `minLength` of "3", ...) is left out
//     and listed by Schema.Ignored, as the SDK left the forms it knew
//     unenforced (malformed.go): a schema that worked under the SDK keeps
//     working. A `type` naming no JSON type ("int") is left out too, where
//     the SDK rejected every value. With "$schema" set to draft-04 the
//     boolean form is valid, enforced and worded "p=0 not above
//     exclusiveMinimum 0" (the `minimum` literal is the bound).
//   - A pattern that does not compile (see pattern below) refuses the
//     strings it applies to with the evaluation-failure text, as the SDK's
//     failing jq test() did; other values are unaffected.
//   - What is valid JSON is encoding/json's decision, as everywhere in the
//     daemon: a high surrogate escape without its low half ("\ud800") reads
//     as U+FFFD, as encoding/json reads it, where the SDK's jq failed.
//   - pattern uses Go's RE2 (v6's default), not jq's Oniguruma: lookaround
//     and backreferences do not compile, so such a pattern cannot be
//     evaluated (above).
//   - A key matching `patternProperties` is not "unknown" even with
//     additionalProperties:false (the SDK ignores patternProperties); the
//     SDK's jq `index` also treats an array value as "in" an enum when it is
//     a contiguous run of the enum — v6 does not, so such a value is named.
//   - The number limits above refuse arguments the SDK would have accepted
//     and echoed (jq's decNumber copes with 1e999999999); a schema holding
//     such a literal fails Compile.
//   - An enum with an object or array member makes the SDK's jq `join` fail
//     (its evaluation-failure text); here the member is printed as tojson.
//   - format is asserted (Compiler.AssertFormat) in every draft: authors who
//     write "format": "email" mean it, and 2020-12 would otherwise treat it
//     as an annotation only.
//
// # Invariants
//
//   - A message only ever names real JSON Schema violations: the SDK-style
//     checks read the compiled schema for what applies (draft rules, $ref
//     hiding siblings before 2019-09, prefixItems) and the document as
//     written only for how to print it (type order, bound and enum literals).
//   - Numbers are echoed from the client's literal through jq's rendering,
//     never through float64.
//   - Nothing is fetched or read while compiling: $ref and "$schema" may name
//     only the inputSchema itself or a metaschema v6 embeds; anything else
//     fails Compile naming the URL.
//
// # Concurrency
//
// A *Schema is immutable after Compile; Validate allocates all of its state
// per call, and v6's compiled schemas are safe for concurrent validation, so
// any number of goroutines may share one *Schema.
//
// It imports internal/jq only; never rpc/ or the supervisor.
package schema
