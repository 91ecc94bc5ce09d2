package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// Error is a rejection whose Message is the complete text of the isError
// result (or, from Compile, of every call to the tool). It carries no prefix
// of its own: the SDK's users compare the text byte for byte.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }

// Schema is one tool's compiled inputSchema. It is immutable after Compile
// and therefore safe for concurrent Validate calls.
type Schema struct {
	tool     string
	compiled *jsonschema.Schema
	doc      *jq.Value // the inputSchema as written: literals and member order
	ignored  []Ignored // keywords left out as malformed (malformed.go)
}

// baseURL names the in-memory resource. It has a scheme of its own so that v6
// never mistakes it for a file path (which it would make absolute against the
// working directory) and so that a relative $ref resolves to a URL the
// refusing loader reports verbatim.
const baseURL = "mcp-bashd:///inputSchema.json"

// refuseLoader is the only loader the compiler gets: a schema is compiled
// from tools.json alone, and a $ref or $schema naming anything else must fail
// at load time rather than fetch from the network or read a local file.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) {
	return nil, errors.New("loading schemas from outside the inputSchema is disabled")
}

// Compile compiles one tool's inputSchema. Without "$schema" the dialect is
// JSON Schema 2020-12; "$schema" selects draft-04/06/07/2019-09 as v6
// supports them. A keyword whose value is malformed is left out and listed
// by Ignored (malformed.go). A schema that still does not compile returns
// *Error naming the problem, worded as the text its calls should be
// answered with.
func Compile(tool string, inputSchema json.RawMessage) (*Schema, error) {
	fail := func(format string, args ...any) (*Schema, error) {
		return nil, &Error{Message: "Cannot validate arguments for " + tool + ": " + fmt.Sprintf(format, args...)}
	}
	trimmed := strings.TrimSpace(string(inputSchema))
	if trimmed == "" || trimmed == "null" {
		return fail("it declares no inputSchema.")
	}
	doc, err := parseJSON(inputSchema)
	if err != nil {
		return fail("its inputSchema is not valid JSON: %v.", err)
	}
	if lit, bad := oversizedNumber(doc); bad {
		return fail("its inputSchema does not compile: the number %s is outside the supported range (at most %d digits, exponent within ±%d).",
			truncate(lit, 40), maxNumberDigits, maxNumberExp)
	}
	// Keywords whose values are malformed are left out, as the SDK left
	// them unenforced (malformed.go); what is left must compile.
	compiled, ignored, err := compileLenient(toAny(doc))
	if err != nil {
		return fail("its inputSchema does not compile: %s.", compileText(err))
	}
	return &Schema{tool: tool, compiled: compiled, doc: doc, ignored: ignored}, nil
}

// Validate checks the raw arguments JSON of one tools/call (what the client
// sent as params.arguments, or `{}` when it sent none; an empty slice is
// taken as that absent case). It returns nil when the arguments are valid
// and *Error otherwise. Validity is v6's verdict under full JSON Schema; the
// wording is the bash SDK's wherever its validator would have spoken.
func (s *Schema) Validate(args json.RawMessage) (result error) {
	// The SDK's answer when its validator could not evaluate the input: an
	// undecodable or too-deep document, a number past the exact-arithmetic
	// limits, or (defensively) a panic inside v6. Never a silent pass.
	cannot := &Error{Message: "Cannot validate arguments for " + s.tool + ": they could not be evaluated against its schema."}
	defer func() {
		if recover() != nil {
			result = cannot
		}
	}()
	if len(args) == 0 {
		args = []byte("{}")
	}
	n, err := parseJSON(args)
	if err != nil {
		return cannot
	}
	if n.Kind != jq.KindObject {
		// Checked before the schema: MCP arguments are an object, and a
		// schema that happened to accept a scalar must not coerce one in.
		return &Error{Message: "Invalid arguments: expected a JSON object, got " + n.Type() + "."}
	}
	if _, bad := oversizedNumber(n); bad {
		return cannot
	}
	err = s.compiled.Validate(toAny(n))
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return cannot
	}
	if msg := s.sdkMessage(n); msg != "" {
		return &Error{Message: msg}
	}
	return &Error{Message: s.fallbackMessage(verr, n)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// compileText turns a v6 compile error into one line. Metaschema failures are
// flattened to "<schema pointer>: <reason>" leaves; other errors keep v6's
// text with the synthetic base URL removed, so a message points into the
// inputSchema ("#/$defs/x") instead of at a URL nobody wrote.
func compileText(err error) string {
	var sve *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &verr) {
		var lines []string
		collectCompileLeaves(verr, &lines)
		lines = slices.Compact(lines)
		if len(lines) > 0 {
			return strings.Join(lines, "; ")
		}
	}
	return strings.ReplaceAll(err.Error(), baseURL, "")
}

func collectCompileLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectCompileLeaves(c, out)
		}
		return
	}
	ptr := ""
	for _, tok := range e.InstanceLocation {
		ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	if ptr == "" {
		ptr = "/"
	}
	*out = append(*out, "at "+ptr+": "+e.ErrorKind.LocalizedString(printer))
}

// schemaNode maps a v6 schema location back to the inputSchema as written, so
// a message can quote a bound or an enum exactly as the author wrote it.
// Locations inside an embedded resource with its own $id are not mapped.
func (s *Schema) schemaNode(location string) *jq.Value {
	ptr, ok := strings.CutPrefix(location, baseURL+"#")
	if !ok {
		return nil
	}
	n := s.doc
	if ptr == "" {
		return n
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.Kind {
		case jq.KindObject:
			n = n.Get(tok)
		case jq.KindArray:
			i, ok := parseIndex(tok)
			if !ok || i >= len(n.Elems) {
				return nil
			}
			n = n.Elems[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}
