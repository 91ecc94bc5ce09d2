package schema

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// Each expectation is what jq 1.7.1 prints for `tojson | fromjson | tojson`
// of the literal (the SDK passes every number through jq at least twice).
func TestJQNumber(t *testing.T) {
	for lit, want := range map[string]string{
		"1e2": "1E+2", "1E+2": "1E+2", "1e+2": "1E+2", "1.5e-7": "1.5E-7", "1.0": "1.0", "4503599627370496.5e0": "4503599627370496.5",
		"1.5e3": "1.5E+3", "1.5e-400": "1.5E-400", "-0": "-0", "0.0": "0.0", "-0.0": "-0.0", "100e-2": "1.00",
		"0.000001": "0.000001", "0.0000001": "1E-7", "1E-6": "0.000001", "12e-8": "1.2E-7", "5E0": "5", "0.10": "0.10",
		"123.456e2": "12345.6", "1.23e-5": "0.0000123", "0e5": "0E+5", "0e-5": "0.00000", "1e-7": "1E-7",
		"12345678901234567890123": "12345678901234567890123", "9007199254740993": "9007199254740993",
		"1.7976931348623157e+308": "1.7976931348623157E+308", "1.7976931348623157e309": "1.7976931348623157E+309",
		// decNumber's range: emax 999999999, etiny -1147483646, half-up rounding.
		"1e999999999": "1E+999999999", "0.1e1000000000": "1E+999999999", "99e999999998": "9.9E+999999999",
		"9.9999999999e999999999": "9.9999999999E+999999999", "1e-999999999": "1E-999999999", "1e-1000000005": "1E-1000000005",
		"1e-1147483646": "1E-1147483646", "1e-1147483645": "1E-1147483645", "1e-1147483647": "0E-1147483646",
		"6e-1147483647": "1E-1147483646", "5e-1147483647": "1E-1147483646", "15e-1147483647": "2E-1147483646",
		"25e-1147483648": "0E-1147483646", "123e-1147483648": "1E-1147483646", "0.5e-1147483646": "1E-1147483646",
		"1e-99999999999999999999": "0E-1147483646", "0e-2000000000": "0E-1147483646",
		// Zeros clamp; non-zero values past emax print as DBL_MAX.
		"0e1000000000": "0E+999999999", "-0e1000000000": "-0E+999999999", "0e999999999": "0E+999999999",
		"1e1000000000": "1.7976931348623157E+308", "10e999999999": "1.7976931348623157E+308",
		"-1e1000000000": "-1.7976931348623157E+308", "1e99999999999999999999": "1.7976931348623157E+308",
	} {
		if got := jqNumber(lit); got != want {
			t.Errorf("jqNumber(%s) = %s, want %s", lit, got, want)
		}
	}
}

// Within jq's range the rendering is the same number, and rendering twice
// changes nothing (the SDK's repeated jq passes are idempotent there).
func TestJQNumberPreservesValue(t *testing.T) {
	for _, lit := range []string{"0", "-12.50", "1e2", "3.14159e-9", "123456789.123456789e30", "-7E-3", "100e-2"} {
		got := jqNumber(lit)
		a, _ := new(big.Rat).SetString(lit)
		b, ok := new(big.Rat).SetString(got)
		if !ok || a.Cmp(b) != 0 || jqNumber(got) != got {
			t.Errorf("jqNumber(%s) = %s", lit, got)
		}
	}
}

func TestJQStrings(t *testing.T) {
	n := &jq.Value{Kind: jq.KindString, Text: "a\u007f\"\\\n\t\b\f\r\u0001é😀\u2028<>&"}
	if got, want := tojson(n), `"a\u007f\"\\\n\t\b\f\r\u0001é😀`+"\u2028"+`<>&"`; got != want {
		t.Errorf("tojson = %s, want %s", got, want)
	}
	if tostring(n) != n.Text {
		t.Errorf("tostring of a string must be the string itself")
	}
	doc, err := parseJSON([]byte(`{"b":1,"a":[true,null,"\ud800x"],"b":{"c":1.50}}`))
	if err != nil {
		t.Fatal(err)
	}
	// Duplicate key: first position, last value (jq and encoding/json agree).
	if got, want := tojson(doc), `{"b":{"c":1.50},"a":[true,null,"`+"\ufffd"+`x"]}`; got != want {
		t.Errorf("tojson = %s, want %s", got, want)
	}
	arr, _ := parseJSON([]byte(`[1,true,null,"x",2.50,false]`))
	if got := joinJQ(arr, ", "); got != "1, true, , x, 2.50, false" {
		t.Errorf("join = %q", got)
	}
}

// Invalid UTF-8 in a document is repaired as the SDK's jq repaired it, one
// U+FFFD per bad sequence (Go's decoder makes three of "\xe0\x80\x80").
// The want is what jq 1.7.1 printed for the SDK's pattern message.
func TestInvalidUTF8AsJQ(t *testing.T) {
	s := mustCompile(t, batsFixtures["typed"])
	err := s.Validate(json.RawMessage("{\"name\":\"a\xe0\x80\x80b\xffc\"}"))
	if got, want := errText(err), "Invalid value(s): name=\"a\uFFFDb\uFFFDc\" does not match pattern ^[a-z]+$."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range []string{`{}`, `[1,2]`, `{"a":}`, `[1,]`, `{"a" 1}`, `01`, `1 2`, `"\x"`, `nul`, `{"a":1}}`, ` "s" `, strings.Repeat("[", 10000) + strings.Repeat("]", 10000)} {
		_, err := parseJSON([]byte(doc))
		if (err == nil) != validJSON(doc) {
			t.Errorf("parseJSON(%.40q) err=%v, encoding/json valid=%v", doc, err, validJSON(doc))
		}
	}
	if _, err := parseJSON([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001))); err == nil {
		t.Error("10001 levels accepted")
	}
}

func validJSON(s string) bool { return json.Valid([]byte(s)) }
