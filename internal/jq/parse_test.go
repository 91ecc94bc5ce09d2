package jq

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// A Go string printed with AppendString reads as the document that spells
// it with jq's escapes: the --arg path and the parser path agree.
func TestAppendStringMatchesParsedString(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\there\nnew\rcr\x01\x1f\x7f<&>'/\\\"", "sep\u2028\u2029 é 😀",
		"a\xffb", "\xe0\x80\x80", "ok\xe2\x82", "x\xf0A", "\x00"} {
		quoted := string(AppendString(nil, s))
		v, ok := Parse([]byte(quoted))
		if !ok || v.Kind != KindString || v.Text != ValidUTF8(s) {
			t.Errorf("AppendString(%q) = %s, which reads back as %+v", s, quoted, v)
		}
		if body := string(AppendStringBody(nil, s)); `"`+body+`"` != quoted {
			t.Errorf("AppendStringBody(%q) = %s, AppendString = %s", s, body, quoted)
		}
	}
}

// ParseLenient differs from Parse only on a high surrogate escape without
// its low half, which it reads as encoding/json does.
func TestParseLenient(t *testing.T) {
	for doc, want := range map[string]string{
		`"\ud800"`: "\uFFFD", `"\ud800x"`: "\uFFFDx", `"\ud800\u0041"`: "\uFFFDA",
		`"\udc00\ud800"`: "\uFFFD\uFFFD", `"\ud800\ud800\udc00"`: "\uFFFD\U00010000",
	} {
		if _, ok := Parse([]byte(doc)); ok {
			t.Errorf("Parse(%s) accepted what jq refuses", doc)
		}
		v, ok := ParseLenient([]byte(doc))
		var std string
		if err := json.Unmarshal([]byte(doc), &std); err != nil || std != want {
			t.Fatalf("encoding/json reads %s as %q (%v), want %q", doc, std, err, want)
		}
		if !ok || v.Text != want {
			t.Errorf("ParseLenient(%s) = %+v, %v; want %q", doc, v, ok, want)
		}
	}
	for _, doc := range []string{`[1,]`, `01`, "\ufeff{}", `{"a":1} x`, strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)} {
		if _, ok := ParseLenient([]byte(doc)); ok {
			t.Errorf("ParseLenient(%.40q) accepted invalid JSON", doc)
		}
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, ok := Parse([]byte(deep)); !ok {
		t.Errorf("%d levels refused", MaxDepth)
	}
}

func TestMembersAndGet(t *testing.T) {
	data := []byte(` {"id" : 7, "m\u0065thod":"x" ,"id":[1, {"a":2}],"":null}`)
	count, first, ok := Scan(data)
	if !ok || count != 1 || first != 1 {
		t.Fatalf("Scan = %d, %d, %v", count, first, ok)
	}
	var got []string
	for key, span := range Members(data, first) {
		got = append(got, key+"="+string(data[span.Start:span.End]))
	}
	if want := []string{"id=7", "method=\"x\"", `id=[1, {"a":2}]`, "=null"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Members = %q, want %q", got, want)
	}

	v, _ := Parse(data)
	if v.Type() != "object" || v.Get("id").Type() != "array" || v.Get("").Type() != "null" ||
		v.Get("nope") != nil || v.Get("id").Get("a") != nil || (*Value)(nil).Get("x") != nil {
		t.Errorf("Get/Type on %s: %+v", data, v)
	}
	// Past indexFrom members the lookup goes through the index; repeated
	// keys still keep their first place.
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":` + strings.Repeat("1", i+1) + ",")
	}
	b.WriteString(`"k":"last"}`)
	big, ok := Parse([]byte(b.String()))
	if !ok || len(big.Keys) != 40 || big.Get("k").Text != "last" || big.Get("kxxx").Text != "1111" || big.Keys[0] != "k" {
		t.Errorf("large object: %d keys, k=%+v", len(big.Keys), big.Get("k"))
	}
}

func TestDecimal(t *testing.T) {
	for lit, want := range map[string]string{
		"0": "+0e0", "-0.0": "-0e-1", "1.50": "+150e-2", "0012": "+12e0", "1e2": "+1e2", "-12.5E-3": "-125e-4",
		"1e99999999999999999999": "+1e9999999999999", "1e-99999999999999999999": "+1e-9999999999999",
	} {
		neg, coef, exp := Decimal(lit)
		sign := "+"
		if neg {
			sign = "-"
		}
		if got := sign + coef + "e" + strconv.FormatInt(exp, 10); got != want {
			t.Errorf("Decimal(%s) = %s, want %s", lit, got, want)
		}
	}
}
