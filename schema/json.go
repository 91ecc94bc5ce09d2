package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// Documents are read and printed by internal/jq, so the texts quote values
// exactly as the SDK's jq did. This file adds what the validator needs on
// top: encoding/json's verdict on what is valid JSON, exact numbers, and
// JSON Schema equality.

// maxDepth bounds array/object nesting in any document this package parses.
// It equals encoding/json's own limit, so anything the RPC layer managed to
// decode also parses here, and the recursive walks below (conversion,
// rendering, v6's validator) stay far from exhausting a goroutine stack.
const maxDepth = jq.MaxDepth

var errTooDeep = errors.New("JSON nesting exceeds 10000 levels")

// sdkStyle is how the SDK's messages print a value: tojson's compact text,
// with numbers as a second jq pass prints them, because the SDK's validator
// reads arguments and schema that an earlier jq had already printed
// (1e1000000000 is quoted as 1.7976931348623157E+308).
const sdkStyle = jq.Compact | jq.Twice

// parseJSON parses exactly one JSON document. What counts as valid JSON is
// encoding/json's decision, as for the rest of the daemon; the value is read
// the way jq reads it (member order, repeated keys, invalid UTF-8 repaired
// as jq repairs it). The two agree on validity except for a high surrogate
// escape without its low half, which jq refuses and ParseLenient reads as
// encoding/json does.
func parseJSON(data []byte) (*jq.Value, error) {
	if v, ok := jq.ParseLenient(data); ok {
		return v, nil
	}
	return nil, syntaxError(data)
}

// syntaxError is encoding/json's reason for refusing data, which Compile
// quotes.
func syntaxError(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := skipJSONValue(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid character after top-level value")
	}
	return errors.New("invalid JSON") // encoding/json accepts what jq.ParseLenient refused: not expected
}

func skipJSONValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return io.ErrUnexpectedEOF // a value was due: the input was cut short
	}
	if err != nil {
		return err
	}
	if _, ok := tok.(json.Delim); !ok {
		return nil
	}
	if depth >= maxDepth {
		return errTooDeep
	}
	object := tok == json.Delim('{')
	for dec.More() {
		if object {
			if _, err := dec.Token(); err != nil { // the key
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
		}
		if err := skipJSONValue(dec, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// Number literals past these limits are refused rather than evaluated.
// Exact decisions go through math/big (here and inside v6), whose cost grows
// superlinearly with the digits (a 1M-digit literal takes seconds) and which
// refuses exponents past 1e6 outright, a case where v6's range checks
// dereference the nil result and panic. 10000 of each is far beyond any real
// argument or bound and costs well under a millisecond.
const (
	maxNumberDigits = 10000
	maxNumberExp    = 10000
)

// oversizedNumber returns the first number literal in n beyond those limits.
func oversizedNumber(n *jq.Value) (string, bool) {
	if n.Kind == jq.KindNumber {
		return n.Text, numberTooLarge(n.Text)
	}
	for _, e := range n.Elems { // array elements or object values
		if lit, bad := oversizedNumber(e); bad {
			return lit, true
		}
	}
	return "", false
}

func numberTooLarge(lit string) bool {
	mant, expPart, hasExp := strings.Cut(strings.ToLower(strings.TrimPrefix(lit, "-")), "e")
	if len(mant)-strings.Count(mant, ".") > maxNumberDigits {
		return true
	}
	if !hasExp {
		return false
	}
	e, err := strconv.Atoi(strings.TrimPrefix(expPart, "+"))
	return err != nil || e > maxNumberExp || e < -maxNumberExp
}

// sortedKeys is jq's `keys`: codepoint order, which for UTF-8 is byte order.
func sortedKeys(n *jq.Value) []string {
	keys := slices.Clone(n.Keys)
	slices.Sort(keys)
	return keys
}

// toAny converts to the representation v6 validates (json.Number numbers).
func toAny(n *jq.Value) any {
	switch n.Kind {
	case jq.KindFalse, jq.KindTrue:
		return n.Kind == jq.KindTrue
	case jq.KindNumber:
		return json.Number(n.Text)
	case jq.KindString:
		return n.Text
	case jq.KindArray:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = toAny(e)
		}
		return out
	case jq.KindObject:
		out := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			out[k] = toAny(n.Elems[i])
		}
		return out
	}
	return nil
}

// rat is the exact value of a number; ok is false for non-numbers.
func rat(n *jq.Value) (*big.Rat, bool) {
	if n == nil || n.Kind != jq.KindNumber {
		return nil, false
	}
	return new(big.Rat).SetString(n.Text)
}

// isInteger decides "integer" exactly from the literal: 1.0, 1e2 and 1.5e3
// are integers, 4503599627370496.5 and 1.5e-400 are not. A float64 would get
// both of the latter wrong.
func isInteger(n *jq.Value) bool {
	r, ok := rat(n)
	return ok && r.IsInt()
}

// equal is JSON Schema equality (numbers by value, objects by members), the
// same relation v6 applies to enum and const.
func equal(n, o *jq.Value) bool {
	if n.Kind != o.Kind {
		return false
	}
	switch n.Kind {
	case jq.KindString:
		return n.Text == o.Text
	case jq.KindNumber:
		a, ok1 := rat(n)
		b, ok2 := rat(o)
		return ok1 && ok2 && a.Cmp(b) == 0
	case jq.KindArray:
		return slices.EqualFunc(n.Elems, o.Elems, equal)
	case jq.KindObject:
		if len(n.Keys) != len(o.Keys) {
			return false
		}
		for i, k := range n.Keys {
			if ov := o.Get(k); ov == nil || !equal(n.Elems[i], ov) {
				return false
			}
		}
	}
	return true // null, false, true: the kind is the value
}

// tojson is jq 1.7's `tojson` as the SDK's messages print it (sdkStyle).
func tojson(n *jq.Value) string {
	return string(jq.Append(nil, n, sdkStyle))
}

// tostring is jq's `tostring`: a string as-is, anything else as tojson.
func tostring(n *jq.Value) string {
	return jq.Raw(n, sdkStyle)
}

// joinJQ is jq 1.7's `join(sep)` over a JSON array: null joins as "", strings
// as-is, numbers and booleans as tojson. jq itself errors on an object or
// array member; those are rendered as tojson here instead (see doc.go).
func joinJQ(arr *jq.Value, sep string) string {
	if arr == nil || arr.Kind != jq.KindArray {
		return ""
	}
	parts := make([]string, len(arr.Elems))
	for i, e := range arr.Elems {
		if e.Kind != jq.KindNull {
			parts[i] = tostring(e)
		}
	}
	return strings.Join(parts, sep)
}

// jqNumber renders a JSON number literal exactly as the SDK's messages do
// (see sdkStyle).
func jqNumber(lit string) string {
	return tojson(&jq.Value{Kind: jq.KindNumber, Text: lit})
}
