// Package mcpschema validates what mcp-bashd writes on the wire against the
// official MCP JSON schemas, one revision at a time.
//
// The schema files under schemas/ are byte-for-byte copies of
// schema/<rev>/schema.json from modelcontextprotocol/modelcontextprotocol
// (see the sha256 test). They are embedded so tests need no network and no
// path to the repo root.
//
// Which definition a message must match is derived from each schema itself
// (ClientRequest, ServerNotification, ServerRequest, the *ResultResponse and
// *Error definitions) instead of a hand-written table, so a revision's
// quirks (no ping in 2026-07-28, JSONRPCError vs JSONRPCErrorResponse, ...)
// come from the spec, not from us.
//
// The official schemas are deliberately open (no additionalProperties:false
// anywhere) and leave some spec rules unexpressed, so Check adds a few
// checks of its own on top; each says in its error message that it is not
// a schema rule. See extra.go.
package mcpschema

import (
	"bytes"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// Revisions known to Check, oldest first.
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// Revisions returns the protocol revisions Check knows, oldest first.
func Revisions() []string { return slices.Clone(revisions) }

// baseURL names the embedded resources. The .invalid TLD guarantees the
// name can never resolve, and the refusing loader below makes sure nothing
// is ever fetched anyway.
const baseURL = "https://mcp-bashd.invalid/mcpschema/"

// rev is one revision's schema plus everything derived from it. Derivation
// happens once (init); compilation of each needed definition happens lazily
// under mu, because jsonschema.Compiler is not safe for concurrent use.
// Compiled *jsonschema.Schema values are immutable and validated
// concurrently without locking.
type rev struct {
	name    string
	fileURL string
	defsKey string // "definitions" (draft-07) or "$defs" (2020-12)
	draft   string // the file's $schema, reused for synthetic schemas
	defs    map[string]any

	// Derived from the schema (see derive).
	results     map[string][]string // client request method → possible result defs
	notifs      map[string]string   // server notification method → def
	serverReqs  map[string]string   // server→client request method → def
	errEnv      map[int64]string    // error code → def of the whole error message
	errObj      map[int64]string    // error code → def of the error object
	resultEnv   string              // JSONRPCResponse or JSONRPCResultResponse
	errorEnv    string              // JSONRPCError or JSONRPCErrorResponse
	batch       string              // JSONRPCBatchResponse, only in 2025-03-26
	resultTyped bool                // results require resultType (2026-07-28)
	idOptional  bool                // error responses may omit id (2025-11-25+)

	once     sync.Once
	initErr  error
	mu       sync.Mutex
	comp     *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

var (
	revsMu sync.Mutex
	revs   = map[string]*rev{}
)

func lookup(name string) (*rev, error) {
	if !slices.Contains(revisions, name) {
		return nil, fmt.Errorf("mcpschema: unknown protocol revision %q (known: %s)",
			name, strings.Join(revisions, ", "))
	}
	revsMu.Lock()
	r, ok := revs[name]
	if !ok {
		r = &rev{name: name}
		revs[name] = r
	}
	revsMu.Unlock()
	r.once.Do(r.load)
	return r, r.initErr
}

// refuseLoader makes any $ref outside the embedded files an error instead of
// a network or file-system read.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("refusing to load %s: only embedded schemas are used", url)
}

// byteFormat implements OpenAPI's "byte" format (base64), which MCP uses
// for image/audio data and blob contents. The library does not know it and
// would otherwise silently accept anything.
var byteFormat = &jsonschema.Format{Name: "byte", Validate: func(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return fmt.Errorf("not standard base64: %v", err)
	}
	return nil
}}

func (r *rev) load() {
	file := "schema-" + r.name + ".json"
	b, err := schemaFS.ReadFile("schemas/" + file)
	if err != nil {
		r.initErr = err
		return
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		r.initErr = fmt.Errorf("%s: %w", file, err)
		return
	}
	top, _ := doc.(map[string]any)
	r.draft, _ = top["$schema"].(string)
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := top[k].(map[string]any); ok {
			r.defsKey, r.defs = k, d
		}
	}
	if r.defs == nil || r.draft == "" {
		r.initErr = fmt.Errorf("%s: no $schema or no definitions", file)
		return
	}
	r.fileURL = baseURL + file
	r.comp = jsonschema.NewCompiler()
	r.comp.UseLoader(refuseLoader{})
	// Formats are assertions in draft-07 but only annotations in 2020-12 by
	// default; assert them everywhere so "uri" and "byte" mean the same in
	// every revision.
	r.comp.AssertFormat()
	r.comp.RegisterFormat(byteFormat)
	if err := r.comp.AddResource(r.fileURL, doc); err != nil {
		r.initErr = err
		return
	}
	r.compiled = map[string]*jsonschema.Schema{}
	r.initErr = r.derive()
}

func (r *rev) ref(def string) map[string]any {
	return map[string]any{"$ref": r.fileURL + "#/" + r.defsKey + "/" + def}
}

func (r *rev) has(def string) bool { _, ok := r.defs[def]; return ok }

// refName returns the definition name of a local {"$ref": "#/.../Name"}.
func refName(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["$ref"].(string)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// dig walks nested objects by key.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// unionMethods maps method const → member def for a union such as
// ClientRequest or ServerNotification (anyOf of $refs).
func (r *rev) unionMethods(union string) map[string]string {
	out := map[string]string{}
	members, _ := dig(r.defs, union, "anyOf").([]any)
	for _, m := range members {
		name := refName(m)
		if method, ok := dig(r.defs, name, "properties", "method", "const").(string); ok {
			out[method] = name
		}
	}
	return out
}

func constCode(v any) (int64, bool) {
	n, ok := v.(interface{ Int64() (int64, error) })
	if !ok {
		return 0, false
	}
	c, err := n.Int64()
	return c, err == nil
}

// TaskAugmented is the method to pass to Check for the answer to a
// task-augmented tools/call in a revision with tasks (CreateTaskResult).
const TaskAugmented = "tools/call (task)"

func (r *rev) derive() error {
	r.resultEnv, r.errorEnv = "JSONRPCResponse", "JSONRPCError"
	if r.has("JSONRPCResultResponse") {
		// From 2025-11-25 JSONRPCResponse is the union of both kinds.
		r.resultEnv = "JSONRPCResultResponse"
	}
	if r.has("JSONRPCErrorResponse") {
		r.errorEnv = "JSONRPCErrorResponse"
	}
	if r.has("JSONRPCBatchResponse") {
		r.batch = "JSONRPCBatchResponse"
	}
	req, _ := dig(r.defs, r.errorEnv, "required").([]any)
	r.idOptional = !slices.Contains(req, any("id"))
	req, _ = dig(r.defs, "Result", "required").([]any)
	r.resultTyped = slices.Contains(req, any("resultType"))

	// The result of request XRequest is, in order of preference: what
	// XResultResponse.result says (2026-07-28 spells these out, including
	// the InputRequiredResult alternative), XResult, or EmptyResult (ping,
	// logging/setLevel, resources/subscribe have no result type of their own).
	r.results = map[string][]string{}
	for method, reqDef := range r.unionMethods("ClientRequest") {
		base := strings.TrimSuffix(reqDef, "Request")
		var cands []string
		if res := dig(r.defs, base+"ResultResponse", "properties", "result"); res != nil {
			if n := refName(res); n != "" {
				cands = []string{n}
			}
			alts, _ := dig(res, "anyOf").([]any)
			for _, a := range alts {
				cands = append(cands, refName(a))
			}
		} else if r.has(base + "Result") {
			cands = []string{base + "Result"}
		} else {
			cands = []string{"EmptyResult"}
		}
		for _, c := range cands {
			if !r.has(c) {
				return fmt.Errorf("%s: %s: derived result %q is not defined", r.name, method, c)
			}
		}
		r.results[method] = cands
	}
	if r.has("CreateTaskResult") {
		// A task-augmented tools/call (2025-11-25's experimental tasks) is
		// answered with CreateTaskResult; callers name it this way.
		r.results[TaskAugmented] = []string{"CreateTaskResult"}
	}
	r.notifs = r.unionMethods("ServerNotification")
	r.serverReqs = r.unionMethods("ServerRequest")

	// Error definitions carry their code as a const, either on the error
	// object (ParseError & co., 2026-07-28) or inside error.allOf on a whole
	// message (UnsupportedProtocolVersionError, URLElicitationRequiredError).
	r.errEnv, r.errObj = map[int64]string{}, map[int64]string{}
	for name := range r.defs {
		if c, ok := constCode(dig(r.defs, name, "properties", "code", "const")); ok {
			r.errObj[c] = name
		}
		parts, _ := dig(r.defs, name, "properties", "error", "allOf").([]any)
		for _, p := range parts {
			if c, ok := constCode(dig(p, "properties", "code", "const")); ok {
				r.errEnv[c] = name
			}
		}
	}
	if len(r.results) == 0 || len(r.notifs) == 0 {
		return fmt.Errorf("%s: could not derive request/notification tables", r.name)
	}
	return nil
}

// schema compiles (once) a synthetic schema that is the conjunction of the
// given parts. Composing with allOf, rather than validating the envelope
// and the payload separately, keeps error locations relative to the whole
// message ("/result/content/0/type").
func (r *rev) schema(key string, parts ...map[string]any) (*jsonschema.Schema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.compiled[key]; ok {
		return s, nil
	}
	all := make([]any, len(parts))
	for i, p := range parts {
		all[i] = p
	}
	url := baseURL + "check/" + r.name + "/" + strings.NewReplacer("/", "_", ":", "_").Replace(key) + ".json"
	if err := r.comp.AddResource(url, map[string]any{"$schema": r.draft, "allOf": all}); err != nil {
		return nil, err
	}
	s, err := r.comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", key, err)
	}
	r.compiled[key] = s
	return s, nil
}

func (r *rev) validate(what string, msg any, key string, parts ...map[string]any) error {
	s, err := r.schema(key, parts...)
	if err != nil {
		return err
	}
	if err := s.Validate(msg); err != nil {
		return fmt.Errorf("%s %s: %w", r.name, what, err)
	}
	return nil
}

// Check validates one JSON-RPC message line that a server sent, for the
// negotiated protocol revision.
//
// method is the method of the request a response answers. For a result it
// selects the result type (initialize → InitializeResult, tools/list →
// ListToolsResult, tools/call → CallToolResult, ping → EmptyResult,
// server/discover → DiscoverResult, ...); "" means unknown and checks only
// the envelope and the generic Result. A method the revision does not have
// (ping or initialize in 2026-07-28) is an error. For errors, notifications
// and server-to-client requests method is ignored: the error code and the
// message's own method pick the definition.
//
// line may end in one "\n"; any other raw CR/LF is a framing error (stdio
// carries exactly one message per line). Pretty-printed HTTP bodies must be
// compacted first. In 2025-03-26 a line may also be a batch (JSON array) of
// responses; each element is then checked with method "".
func Check(revision, method string, line []byte) error {
	r, err := lookup(revision)
	if err != nil {
		return err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		return fmt.Errorf("raw %q at byte %d: a stdio message must be one line (not a schema rule; MCP stdio framing)", line[i], i)
	}
	if !utf8.Valid(line) {
		// encoding/json would silently turn bad bytes into U+FFFD.
		return errors.New("message is not valid UTF-8 (not a schema rule; MCP messages are UTF-8)")
	}
	msg, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if dup := duplicateKey(line); dup != "" {
		return fmt.Errorf("duplicate object key %q (not a schema rule; receivers disagree on which copy wins)", dup)
	}
	if arr, ok := msg.([]any); ok {
		return r.checkBatch(arr)
	}
	return r.checkMessage(method, msg)
}

func (r *rev) checkBatch(arr []any) error {
	if r.batch == "" {
		return fmt.Errorf("%s: a JSON array (batch) is not allowed in this revision", r.name)
	}
	if len(arr) == 0 {
		return errors.New("empty batch response (not a schema rule; JSON-RPC 2.0 forbids an empty array)")
	}
	// A member the server could not read is answered with "id": null
	// (JSON-RPC 2.0), which no MCP schema allows: the array is validated
	// with a placeholder there, and checkMessage below holds each such
	// element to the same rule as a lone error (-32700/-32600 only).
	placeheld := make([]any, len(arr))
	for i, el := range arr {
		placeheld[i] = el
		if obj, ok := el.(map[string]any); ok && obj["error"] != nil {
			if id, present := obj["id"]; present && id == nil {
				cp := make(map[string]any, len(obj))
				for k, v := range obj {
					cp[k] = v
				}
				cp["id"] = 0
				placeheld[i] = cp
			}
		}
	}
	if err := r.validate("batch", placeheld, "batch", r.ref(r.batch)); err != nil {
		return err
	}
	for i, el := range arr {
		if err := r.checkMessage("", el); err != nil {
			return fmt.Errorf("batch element %d: %w", i, err)
		}
	}
	return nil
}

func (r *rev) checkMessage(method string, msg any) error {
	obj, ok := msg.(map[string]any)
	if !ok {
		return fmt.Errorf("message is a JSON %s, not an object", jsonKind(msg))
	}
	_, hasMethod := obj["method"]
	_, hasID := obj["id"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasMethod && (hasResult || hasError):
		return errors.New("message has both method and result/error (not a schema rule; JSON-RPC 2.0)")
	case hasResult && hasError:
		return errors.New("response has both result and error (not a schema rule; JSON-RPC 2.0 forbids it)")
	case hasMethod && hasID:
		if err := onlyMembers(obj, "jsonrpc", "id", "method", "params"); err != nil {
			return err
		}
		return r.checkServerRequest(obj)
	case hasMethod:
		if err := onlyMembers(obj, "jsonrpc", "method", "params"); err != nil {
			return err
		}
		return r.checkNotification(obj)
	case hasResult:
		if err := onlyMembers(obj, "jsonrpc", "id", "result"); err != nil {
			return err
		}
		return r.checkResult(method, obj)
	case hasError:
		if err := onlyMembers(obj, "jsonrpc", "id", "error"); err != nil {
			return err
		}
		return r.checkError(obj)
	}
	return errors.New("message has neither method, result nor error")
}

func (r *rev) checkResult(method string, obj map[string]any) error {
	cands := []string{"Result"}
	if method == TaskAugmented && r.resultTyped && !r.has("CreateTaskResult") {
		// 2026-07-28's tasks extension (SEP-2663) is not in the core
		// schema: its CreateTaskResult is checked as a Result whose
		// resultType is "task" (an extension value the core types only as
		// a string).
		if rt := dig(obj, "result", "resultType"); rt != "task" {
			return fmt.Errorf("%s task-creating result: resultType is %v, want \"task\"", r.name, rt)
		}
		return r.validate("task-creating result", obj, "result:Result", r.ref(r.resultEnv),
			map[string]any{"properties": map[string]any{"result": r.ref("Result")}})
	}
	if method != "" {
		var ok bool
		if cands, ok = r.results[method]; !ok {
			return fmt.Errorf("%s has no client request %q, so no result for it can be valid (known: %s)",
				r.name, method, strings.Join(sortedKeys(r.results), ", "))
		}
	} else if r.resultTyped {
		cands = []string{"Result", "InputRequiredResult"}
	}
	def := cands[0]
	if r.resultTyped {
		var err error
		if def, err = pickByResultType(cands, dig(obj, "result")); err != nil {
			return fmt.Errorf("%s %s result: %w", r.name, orUnknown(method), err)
		}
	}
	what := fmt.Sprintf("result of %s (%s)", orUnknown(method), def)
	if err := r.validate(what, obj, "result:"+def, r.ref(r.resultEnv),
		map[string]any{"properties": map[string]any{"result": r.ref(def)}}); err != nil {
		return err
	}
	if err := r.checkMetaKeys("result", dig(obj, "result", "_meta")); err != nil {
		return err
	}
	if def == "ListToolsResult" {
		return checkToolSchemas(dig(obj, "result", "tools"))
	}
	return nil
}

func (r *rev) checkError(obj map[string]any) error {
	code, isInt := constCode(dig(obj, "error", "code"))
	if id, present := obj["id"]; present && id == nil {
		// JSON-RPC 2.0 requires "id": null when the request id could not be
		// read (parse error, invalid request), but no MCP schema allows null
		// ids. Accept null exactly there and validate the rest as if the id
		// were absent (2025-11-25+) or a placeholder (older schemas).
		if !isInt || (code != -32700 && code != -32600) {
			return fmt.Errorf("%s error response: \"id\": null is only allowed for -32700/-32600 (JSON-RPC 2.0)", r.name)
		}
		cp := make(map[string]any, len(obj))
		for k, v := range obj {
			cp[k] = v
		}
		if r.idOptional {
			delete(cp, "id")
		} else {
			cp["id"] = 0
		}
		obj = cp
	}
	parts := []map[string]any{r.ref(r.errorEnv)}
	key := "error"
	if def, ok := r.errEnv[code]; ok && isInt {
		parts, key = append(parts, r.ref(def)), "error:"+def
	} else if def, ok := r.errObj[code]; ok && isInt {
		parts = append(parts, map[string]any{"properties": map[string]any{"error": r.ref(def)}})
		key = "error:" + def
	}
	if err := r.validate("error response ("+key+")", obj, key, parts...); err != nil {
		return err
	}
	if isInt {
		return r.checkErrorCode(code)
	}
	return nil
}

func (r *rev) checkNotification(obj map[string]any) error {
	method, _ := obj["method"].(string)
	def, ok := r.notifs[method]
	if !ok {
		return fmt.Errorf("%s has no server notification %q (known: %s)",
			r.name, method, strings.Join(sortedKeys(r.notifs), ", "))
	}
	if err := r.validate("notification "+method, obj, "notif:"+def,
		r.ref("JSONRPCNotification"), r.ref(def)); err != nil {
		return err
	}
	return r.checkMetaKeys("params", dig(obj, "params", "_meta"))
}

func (r *rev) checkServerRequest(obj map[string]any) error {
	method, _ := obj["method"].(string)
	if len(r.serverReqs) == 0 {
		return fmt.Errorf("%s: servers never send requests in this revision (got %q)", r.name, method)
	}
	def, ok := r.serverReqs[method]
	if !ok {
		return fmt.Errorf("%s has no server-to-client request %q (known: %s)",
			r.name, method, strings.Join(sortedKeys(r.serverReqs), ", "))
	}
	if err := r.validate("server request "+method, obj, "request:"+def,
		r.ref("JSONRPCRequest"), r.ref(def)); err != nil {
		return err
	}
	return r.checkMetaKeys("params", dig(obj, "params", "_meta"))
}
