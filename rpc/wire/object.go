package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Helpers for JSON the daemon reads member by member: tools.json entries,
// config.json, params. Key order is kept (the SDK printed keys in document
// order) and values stay raw.

// Member is one key and its compacted raw value.
type Member struct {
	Key string
	Val json.RawMessage
}

// SplitObject returns an object's members in document order with their
// raw values compacted; duplicate keys are all returned.
func SplitObject(raw json.RawMessage) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []Member
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
		out = append(out, Member{key, buf.Bytes()})
	}
	return out, nil
}

// Object writes members in order as one JSON object, leaving out those
// whose value is nil. Values are written as given (callers pass JSON they
// built or already checked); keys are quoted as jq quotes them.
func Object(ms ...Member) json.RawMessage {
	n := 2
	for _, m := range ms {
		n += len(m.Key) + len(m.Val) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	first := true
	for _, m := range ms {
		if m.Val == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = AppendStringBody(b, m.Key)
		b = append(b, '"', ':')
		b = append(b, m.Val...)
	}
	return append(b, '}')
}

// FirstByte is the first non-whitespace byte of a raw value, 0 for none:
// enough to tell null, false, a string, an object or an array apart.
func FirstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// Compact returns v without insignificant whitespace (v itself when it is
// not valid JSON).
func Compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// Quote encodes s as a JSON string the way jq prints it (no HTML escaping,
// invalid UTF-8 repaired as jq repairs it).
func Quote(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = AppendStringBody(b, s)
	return append(b, '"')
}

// Marshal is json.Marshal for values the daemon builds itself (string
// slices, maps of raw values), without HTML escaping as jq prints them.
func Marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// DuplicateKey finds the first object, at any depth, that holds one key
// twice, and returns the key's path from the top (".name", ".a.b[2].c").
// encoding/json, jq and the schema validator keep
// the last value of a repeated key while a tool reading the text may take
// the first: such input must be refused, not interpreted. Linear in the
// input; input that is not valid JSON has no duplicate (the caller's own
// parse reports it).
func DuplicateKey(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		keys  map[string]bool // nil for an array
		index int             // the next element's index in an array
		path  string
	}
	var stack []frame
	pending := "" // path of the value about to be read
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		// A value (scalar or opening delimiter) inside an array gets its
		// index; inside an object it follows its key (pending set there).
		if n := len(stack); n > 0 && stack[n-1].keys == nil {
			if d, ok := tok.(json.Delim); !ok || d == '{' || d == '[' {
				pending = stack[n-1].path + "[" + itoa(stack[n-1].index) + "]"
				stack[n-1].index++
			}
		} else if n > 0 {
			if key, ok := tok.(string); ok && pending == "" {
				top := &stack[n-1]
				if top.keys[key] {
					return top.path + "." + key, true
				}
				top.keys[key] = true
				pending = top.path + "." + key
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, path: pending})
		case json.Delim('['):
			stack = append(stack, frame{path: pending})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		pending = ""
		if len(stack) == 0 {
			return "", false
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for ; i > 0; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	return string(b[n:])
}
