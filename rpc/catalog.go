package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcp-bashd/mcp-bashd/schema"
)

// privateKey is the key of a tool entry in tools.json that belongs to
// mcp-bashd (per-tool settings such as a timeout). It is never sent to
// clients. Shape: "x-mcp-bashd": {"timeout": "30s"} (a Go duration or a
// number of seconds).
const privateKey = "x-mcp-bashd"

// tool is one entry of tools.json.
type tool struct {
	name      string
	hasSchema bool // inputSchema present and not null
	schema    *schema.Schema
	schemaErr error
	timeout   time.Duration
	output    *schema.Schema  // compiled outputSchema, nil when none (or it does not compile)
	requires  json.RawMessage // client capabilities the tool needs (x-mcp-bashd.requiresClientCapabilities)
	exe       string          // a --tools-dir executable; "" for a bash function
	// paramHeaders maps top-level argument names to the HTTP header names
	// their schema assigns with "x-mcp-header" (Mcp-Param-<Name>).
	paramHeaders map[string]string
}

// catalog is one parse of tools.json.
type catalog struct {
	path     string
	err      error // the file is missing, unparseable or not one object
	unusable bool  // "tools" holds entries that are not objects ({"tools":[1]})
	order    []*tool
	byName   map[string][]*tool
	list     json.RawMessage // the tools/list result, private keys removed
}

// declared returns the entries naming name (possibly several).
func (c *catalog) declared(name string) []*tool { return c.byName[name] }

// loadCatalog parses tools.json and compiles every schema once. Errors
// are recorded in the catalog rather than returned: the server keeps
// serving and each request reports what applies to it.
func loadCatalog(path string) *catalog {
	c := &catalog{path: path, byName: map[string][]*tool{}}
	fields, err := readObjectFile(path)
	if err != nil {
		c.err = err
		return c
	}
	var tools json.RawMessage
	for _, f := range fields {
		if f.key == "tools" {
			tools = f.val // last one wins, as in jq
		}
	}
	var items []json.RawMessage
	switch firstByte(tools) {
	case 0, 'n':
	case '[':
		if err := json.Unmarshal(tools, &items); err != nil {
			c.err = err
			return c
		}
	case '{':
		// jq's .tools[]? iterates an object's values too.
		kvs, err := splitObject(tools)
		if err != nil {
			c.err = err
			return c
		}
		for _, kv := range kvs {
			items = append(items, kv.val)
		}
	default:
		// A string or number: .tools[]? yields nothing; nothing is declared.
	}
	public := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		switch firstByte(it) {
		case 'n':
			public = append(public, it)
			continue
		case '{':
		default:
			c.unusable = true
			public = append(public, it)
			continue
		}
		t, pub := parseTool(it)
		public = append(public, pub)
		if t != nil {
			c.order = append(c.order, t)
			c.byName[t.name] = append(c.byName[t.name], t)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, p := range public {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteString(`]}`)
	c.list = b.Bytes()
	return c
}

// parseTool reads one tool entry; it returns the entry (nil when it has no
// string name) and its public JSON with private keys removed.
func parseTool(raw json.RawMessage) (*tool, json.RawMessage) {
	kvs, err := splitObject(raw)
	if err != nil {
		return nil, raw
	}
	t := &tool{}
	var named bool
	var input, output json.RawMessage
	var pub bytes.Buffer
	pub.WriteByte('{')
	n := 0
	for _, kv := range kvs {
		switch kv.key {
		case privateKey:
			t.timeout, t.requires = parsePrivate(kv.val)
			continue
		case "name":
			named = json.Unmarshal(kv.val, &t.name) == nil
		case "inputSchema":
			t.hasSchema = firstByte(kv.val) != 'n'
			input = kv.val
		case "outputSchema":
			output = kv.val
		}
		if n > 0 {
			pub.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(kv.key)
		pub.Write(k)
		pub.WriteByte(':')
		pub.Write(kv.val)
	}
	pub.WriteByte('}')
	if !named {
		return nil, pub.Bytes()
	}
	t.paramHeaders = paramHeaders(input)
	// Compiled once the name is known: keys may come in any order.
	if t.hasSchema {
		t.schema, t.schemaErr = schema.Compile(t.name, input)
	}
	if firstByte(output) == '{' {
		t.output, _ = schema.Compile(t.name, output)
	}
	return t, pub.Bytes()
}

func parsePrivate(raw json.RawMessage) (time.Duration, json.RawMessage) {
	var p struct {
		Timeout  json.RawMessage `json:"timeout"`
		Requires json.RawMessage `json:"requiresClientCapabilities"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return 0, nil
	}
	var requires json.RawMessage
	if firstByte(p.Requires) == '{' {
		requires = p.Requires
	}
	var secs float64
	if json.Unmarshal(p.Timeout, &secs) == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second)), requires
	}
	var s string
	if json.Unmarshal(p.Timeout, &s) == nil {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d, requires
		}
	}
	return 0, requires
}

// readObjectFile reads a file that must hold exactly one JSON object and
// returns its members in document order.
func readObjectFile(path string) ([]keyVal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := onlyObject(data)
	if err != nil {
		return nil, err
	}
	return splitObject(doc)
}

// onlyObject checks that data holds exactly one JSON document and that it
// is an object; it returns it compacted.
func onlyObject(data []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not valid JSON: %s", jsonErrorAt(data, err))
	}
	if dec.More() {
		return nil, errors.New("holds more than one JSON document")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("holds more than one JSON document")
	}
	if firstByte(doc) != '{' {
		return nil, errors.New("is not a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type keyVal struct {
	key string
	val json.RawMessage
}

// splitObject returns an object's members in document order with their
// raw values compacted.
func splitObject(raw json.RawMessage) ([]keyVal, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []keyVal
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return nil, err
		}
		out = append(out, keyVal{key, buf.Bytes()})
	}
	return out, nil
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// fileCache re-reads a file only when it changed (inode, size or mtime), so
// an edit to tools.json or config.json takes effect at the next request
// without paying a parse on every request.
type fileCache[T any] struct {
	mu    sync.Mutex
	path  string
	stamp FileStamp
	val   T
	load  func(path string) T
	// bad reports why a loaded value is unusable ("" when fine). A change
	// that breaks a file that was good is logged and the last good value
	// keeps serving: a half-saved edit must not take the server down.
	bad    func(T) error
	onBad  func(path string, err error)
	isGood bool
}

func newFileCache[T any](path string, load func(string) T, bad func(T) error, onBad func(string, error)) *fileCache[T] {
	c := &fileCache[T]{path: path, load: load, bad: bad, onBad: onBad}
	c.stamp = StampOf(path)
	c.val = load(path)
	c.isGood = bad(c.val) == nil
	return c
}

// get returns the current value, reloading when the file changed.
func (c *fileCache[T]) get() T {
	st := StampOf(c.path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if st != c.stamp {
		c.stamp = st
		v := c.load(c.path)
		if err := c.bad(v); err != nil && c.isGood {
			c.onBad(c.path, err)
			return c.val
		}
		c.val, c.isGood = v, c.bad(v) == nil
	}
	return c.val
}

// jsonErrorAt names the line and column of a JSON syntax error, so a log
// line points at the spot in tools.json or config.json.
func jsonErrorAt(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// A file cut short (a save interrupted): the error is at its end.
		lines := bytes.Count(data, []byte("\n"))
		if !bytes.HasSuffix(data, []byte("\n")) {
			lines++
		}
		return fmt.Sprintf("line %d (end of file): unexpected end of JSON", lines)
	}
	if !errors.As(err, &se) {
		return err.Error()
	}
	off := int(se.Offset)
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

func paramHeaders(schema json.RawMessage) map[string]string {
	var sc struct {
		Properties map[string]struct {
			Header string `json:"x-mcp-header"`
		} `json:"properties"`
	}
	if firstByte(schema) != '{' || json.Unmarshal(schema, &sc) != nil {
		return nil
	}
	var m map[string]string
	for name, p := range sc.Properties {
		if p.Header != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = p.Header
		}
	}
	return m
}
