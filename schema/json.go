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
	"unicode/utf8"
)

// maxDepth bounds array/object nesting in any document this package parses.
// It equals encoding/json's own limit, so anything the RPC layer managed to
// decode also parses here, and the recursive walks below (conversion,
// rendering, v6's validator) stay far from exhausting a goroutine stack.
const maxDepth = 10000

var errTooDeep = errors.New("JSON nesting exceeds 10000 levels")

// valueKind is the jq type of a node. The names are jq's own because they are
// what the messages print ("got boolean", "expected a JSON object, got null").
type valueKind uint8

const (
	kindNull valueKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k valueKind) String() string { return kindNames[k] }

// node is a JSON value that keeps what map[string]any loses and the messages
// need: object member order (jq prints members in first-seen order) and the
// exact number literal (a message echoes the client's number, never a float).
// A duplicate key keeps its first position and takes its last value, as both
// jq and encoding/json do.
type node struct {
	kind  valueKind
	b     bool
	str   string // string value, or the number literal exactly as written
	elems []*node
	keys  []string
	vals  map[string]*node
}

// parseJSON parses exactly one JSON document with encoding/json's tokenizer,
// so what counts as valid JSON (and how invalid UTF-8 or lone surrogates are
// replaced) is the standard library's decision, not a hand-written lexer's.
func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, depth int) (*node, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF // a value was due: the input was cut short
	}
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool, b: t}, nil
	case json.Number:
		return &node{kind: kindNumber, str: string(t)}, nil
	case string:
		return &node{kind: kindString, str: t}, nil
	case json.Delim:
		if depth >= maxDepth {
			return nil, errTooDeep
		}
		n := &node{kind: kindArray}
		if t == '{' {
			n.kind, n.vals = kindObject, map[string]*node{}
		}
		for dec.More() {
			var key string
			if n.kind == kindObject {
				kt, err := dec.Token()
				if err == io.EOF {
					return nil, io.ErrUnexpectedEOF
				}
				if err != nil {
					return nil, err
				}
				key, _ = kt.(string)
			}
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if n.kind == kindArray {
				n.elems = append(n.elems, v)
				continue
			}
			if _, seen := n.vals[key]; !seen {
				n.keys = append(n.keys, key)
			}
			n.vals[key] = v
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return n, nil
	}
	return nil, errors.New("unexpected JSON token")
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
func (n *node) oversizedNumber() (string, bool) {
	switch n.kind {
	case kindNumber:
		return n.str, numberTooLarge(n.str)
	case kindArray:
		for _, e := range n.elems {
			if lit, bad := e.oversizedNumber(); bad {
				return lit, true
			}
		}
	case kindObject:
		for _, k := range n.keys {
			if lit, bad := n.vals[k].oversizedNumber(); bad {
				return lit, true
			}
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

// get returns an object member, or nil when n is not an object or lacks key.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	return n.vals[key]
}

// sortedKeys is jq's `keys`: codepoint order, which for UTF-8 is byte order.
func (n *node) sortedKeys() []string {
	keys := slices.Clone(n.keys)
	slices.Sort(keys)
	return keys
}

// toAny converts to the representation v6 validates (json.Number numbers).
func (n *node) toAny() any {
	switch n.kind {
	case kindBool:
		return n.b
	case kindNumber:
		return json.Number(n.str)
	case kindString:
		return n.str
	case kindArray:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = e.toAny()
		}
		return out
	case kindObject:
		out := make(map[string]any, len(n.keys))
		for _, k := range n.keys {
			out[k] = n.vals[k].toAny()
		}
		return out
	}
	return nil
}

// rat is the exact value of a number node; ok is false for non-numbers.
func (n *node) rat() (*big.Rat, bool) {
	if n == nil || n.kind != kindNumber {
		return nil, false
	}
	return new(big.Rat).SetString(n.str)
}

// isInteger decides "integer" exactly from the literal: 1.0, 1e2 and 1.5e3
// are integers, 4503599627370496.5 and 1.5e-400 are not. A float64 would get
// both of the latter wrong.
func (n *node) isInteger() bool {
	r, ok := n.rat()
	return ok && r.IsInt()
}

// equal is JSON Schema equality (numbers by value, objects by members), the
// same relation v6 applies to enum and const.
func (n *node) equal(o *node) bool {
	if n.kind != o.kind {
		return false
	}
	switch n.kind {
	case kindNull:
		return true
	case kindBool:
		return n.b == o.b
	case kindString:
		return n.str == o.str
	case kindNumber:
		a, ok1 := n.rat()
		b, ok2 := o.rat()
		return ok1 && ok2 && a.Cmp(b) == 0
	case kindArray:
		return slices.EqualFunc(n.elems, o.elems, (*node).equal)
	}
	if len(n.keys) != len(o.keys) {
		return false
	}
	for k, v := range n.vals {
		if ov, ok := o.vals[k]; !ok || !v.equal(ov) {
			return false
		}
	}
	return true
}

// tojson is jq 1.7's `tojson`: compact, members in first-seen order, strings
// escaped the way jq escapes them, numbers in jq's literal rendering.
func (n *node) tojson() string {
	var b strings.Builder
	n.writeJSON(&b)
	return b.String()
}

func (n *node) writeJSON(b *strings.Builder) {
	switch n.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(n.b))
	case kindNumber:
		b.WriteString(jqNumber(n.str))
	case kindString:
		writeJQString(b, n.str)
	case kindArray:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.writeJSON(b)
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJQString(b, k)
			b.WriteByte(':')
			n.vals[k].writeJSON(b)
		}
		b.WriteByte('}')
	}
}

// tostring is jq's `tostring`: a string as-is, anything else as tojson.
func (n *node) tostring() string {
	if n.kind == kindString {
		return n.str
	}
	return n.tojson()
}

// joinJQ is jq 1.7's `join(sep)` over a JSON array: null joins as "", strings
// as-is, numbers and booleans as tojson. jq itself errors on an object or
// array member; those are rendered as tojson here instead (see doc.go).
func joinJQ(arr *node, sep string) string {
	if arr == nil || arr.kind != kindArray {
		return ""
	}
	parts := make([]string, len(arr.elems))
	for i, e := range arr.elems {
		if e.kind != kindNull {
			parts[i] = e.tostring()
		}
	}
	return strings.Join(parts, sep)
}

// writeJQString escapes like jq's jvp_dump_string: `"` and `\`, the named
// control escapes, \u00xx (lowercase) for other C0 controls and DEL, and
// everything else raw UTF-8. encoding/json differs (it escapes <, >, &, U+2028
// and U+2029), which is why it is not used for message text.
func writeJQString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError) // jq never holds invalid UTF-8 either
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// jq 1.7.1 keeps every number as a decNumber literal and prints it with
// decNumber's to-scientific-string. Its context: emax 999999999, emin
// -999999999, 147483648 digits of precision (so etiny -1147483646), rounding
// half-up. A value past emax becomes infinite and jq prints DBL_MAX through
// dtoa instead; the SDK's pipeline then re-parses that text, so the final echo
// is DBL_MAX in decNumber form. Verified against jq 1.7.1 (see doc.go).
const (
	jqEmax  = 999999999
	jqEtiny = -1147483646
	jqMaxF  = "1.7976931348623157E+308"
)

// jqNumber renders a JSON number literal exactly as the SDK's messages do.
func jqNumber(lit string) string {
	neg, coeff, exp, ok := splitNumber(lit)
	if !ok {
		return lit
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if coeff == "0" {
		exp = min(max(exp, jqEtiny), jqEmax) // a zero is clamped, never overflows
		return sign + sciString(coeff, exp)
	}
	if exp < jqEtiny {
		coeff, exp = roundHalfUp(coeff, jqEtiny-exp), jqEtiny
	}
	if exp+int64(len(coeff))-1 > jqEmax {
		return sign + jqMaxF
	}
	return sign + sciString(coeff, exp)
}

// splitNumber breaks a JSON number literal into sign, coefficient digits
// (leading zeros stripped, trailing zeros kept, as decNumber keeps them) and
// exponent. Exponents are saturated far outside jq's range so int64 cannot
// overflow on a literal like 1e99999999999999999999.
func splitNumber(lit string) (neg bool, coeff string, exp int64, ok bool) {
	s := lit
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" {
		return false, "", 0, false
	}
	if hasExp {
		e := new(big.Int)
		if _, good := e.SetString(strings.TrimPrefix(expPart, "+"), 10); !good {
			return false, "", 0, false
		}
		const limit = 1 << 40
		switch {
		case e.Cmp(big.NewInt(limit)) > 0:
			exp = limit
		case e.Cmp(big.NewInt(-limit)) < 0:
			exp = -limit
		default:
			exp = e.Int64()
		}
	}
	exp -= int64(len(frac))
	coeff = strings.TrimLeft(intPart+frac, "0")
	if coeff == "" {
		coeff = "0"
	}
	return neg, coeff, exp, true
}

// roundHalfUp drops the last k digits of coeff, rounding half up.
func roundHalfUp(coeff string, k int64) string {
	if k > int64(len(coeff)) {
		return "0"
	}
	keep, dropped := coeff[:len(coeff)-int(k)], coeff[len(coeff)-int(k):]
	if keep == "" {
		keep = "0"
	}
	if dropped == "" || dropped[0] < '5' {
		return keep
	}
	v, _ := new(big.Int).SetString(keep, 10)
	return v.Add(v, big.NewInt(1)).String()
}

// sciString is decNumber's to-scientific-string for a finite value.
func sciString(coeff string, exp int64) string {
	adjusted := exp + int64(len(coeff)) - 1
	if exp <= 0 && adjusted >= -6 {
		if exp == 0 {
			return coeff
		}
		point := int64(len(coeff)) + exp
		if point > 0 {
			return coeff[:point] + "." + coeff[point:]
		}
		return "0." + strings.Repeat("0", int(-point)) + coeff
	}
	out := coeff[:1]
	if len(coeff) > 1 {
		out += "." + coeff[1:]
	}
	if adjusted >= 0 {
		return out + "E+" + strconv.FormatInt(adjusted, 10)
	}
	return out + "E" + strconv.FormatInt(adjusted, 10)
}
