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
