package jq

// Kind is the kind of a Value; jq keeps true and false apart, and so does
// this package.
type Kind uint8

const (
	KindNull Kind = iota
	KindFalse
	KindTrue
	KindNumber
	KindString
	KindArray
	KindObject
)

// typeNames are jq's `type` names, which messages print ("got boolean").
var typeNames = [...]string{"null", "boolean", "boolean", "number", "string", "array", "object"}

// Value is a JSON value as jq holds one. Objects keep their members in
// first-seen order; Parse keeps a repeated key at its first position with
// its last value, as jq objects do.
//
// A Value from Parse is read-only: its objects may carry a lookup index
// that would go stale if Keys were changed. A Value built by hand works
// with every function here, and Get scans its keys.
type Value struct {
	Kind Kind
	// Text is a number's literal exactly as written (1e2, not 1E+2), or a
	// string's decoded text.
	Text string
	// Keys are an object's keys in order.
	Keys []string
	// Elems are an array's elements, or an object's values parallel to Keys.
	Elems []*Value

	index map[string]int // key -> position, for parsed objects past indexFrom keys
}

// indexFrom is the member count from which a parsed object carries an index:
// below it a scan of the keys is cheaper than a map.
const indexFrom = 16

// Type is jq's `type` of v: null, boolean, number, string, array or object.
func (v *Value) Type() string { return typeNames[v.Kind] }

// Get returns the value of an object member, or nil when v is nil, not an
// object, or has no member key.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != KindObject {
		return nil
	}
	if at, ok := v.find(key); ok {
		return v.Elems[at]
	}
	return nil
}

func (v *Value) find(key string) (int, bool) {
	if v.index != nil {
		at, ok := v.index[key]
		return at, ok
	}
	for at, k := range v.Keys {
		if k == key {
			return at, true
		}
	}
	return 0, false
}

// set adds a member while parsing: a repeated key keeps its first position
// and takes the new value.
func (v *Value) set(key string, e *Value) {
	if at, dup := v.find(key); dup {
		v.Elems[at] = e
		return
	}
	v.Keys = append(v.Keys, key)
	v.Elems = append(v.Elems, e)
	switch {
	case v.index != nil:
		v.index[key] = len(v.Keys) - 1
	case len(v.Keys) > indexFrom:
		v.index = make(map[string]int, 2*len(v.Keys))
		for at, k := range v.Keys {
			v.index[k] = at
		}
	}
}

// Style says how Append and Raw print a value.
type Style uint8

const (
	// Compact is jq -c: no whitespace at all.
	Compact Style = 0
	// Indent is jq's default layout: a newline and two spaces per level
	// before each member and before a closing bracket, a space after a
	// colon, empty containers as [] and {}.
	Indent Style = 1 << 0
	// Twice prints numbers as jq prints them after a value has been printed
	// by jq and read back by jq again, as the SDK's pipelines do with every
	// value they build. It differs from one pass only past decNumber's
	// range: 1e1000000000 prints 1.7976931348623157e+308 once and
	// 1.7976931348623157E+308 the second time.
	Twice Style = 1 << 1
)

// Append appends v as jq prints it in style s.
func Append(b []byte, v *Value, s Style) []byte {
	return appendValue(b, v, s, 0)
}

// Raw is v as jq -r prints it, without the final newline: a string's own
// text, anything else as Append prints it.
func Raw(v *Value, s Style) string {
	if v.Kind == KindString {
		return ValidUTF8(v.Text)
	}
	return string(Append(nil, v, s))
}

func appendValue(b []byte, v *Value, s Style, level int) []byte {
	switch v.Kind {
	case KindNull:
		return append(b, "null"...)
	case KindFalse:
		return append(b, "false"...)
	case KindTrue:
		return append(b, "true"...)
	case KindNumber:
		if s&Twice != 0 {
			return append(b, Number(Number(v.Text))...)
		}
		return appendNumber(b, v.Text)
	case KindString:
		return AppendString(b, v.Text)
	}
	opener, closer := byte('['), byte(']')
	if v.Kind == KindObject {
		opener, closer = '{', '}'
	}
	if len(v.Elems) == 0 {
		return append(b, opener, closer)
	}
	b = append(b, opener)
	for n, e := range v.Elems {
		if n > 0 {
			b = append(b, ',')
		}
		b = lineBreak(b, s, level+1)
		if v.Kind == KindObject {
			b = AppendString(b, v.Keys[n])
			b = append(b, ':')
			if s&Indent != 0 {
				b = append(b, ' ')
			}
		}
		b = appendValue(b, e, s, level+1)
	}
	b = lineBreak(b, s, level)
	return append(b, closer)
}

func lineBreak(b []byte, s Style, level int) []byte {
	if s&Indent == 0 {
		return b
	}
	b = append(b, '\n')
	for ; level > 0; level-- {
		b = append(b, "  "...)
	}
	return b
}
