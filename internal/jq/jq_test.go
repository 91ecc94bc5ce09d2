package jq

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// documents are fed to this package and to jq 1.7 alike; each one's outputs
// must be jq's, byte for byte. The golden table (golden_test.go) holds what
// jq 1.7 printed for them, so the comparison holds where jq is missing:
// after changing this list, regenerate it with jq 1.7 first on PATH:
//
//	go test ./internal/jq/ -run TestAgainstJQ -update
var documents = []string{
	// Numbers: decNumber's text, its range (emax 999999999, etiny
	// -1147483646, half-up rounding) and DBL_MAX past it.
	"0", "-0", "7", "-0.0", "0.0", "1.0", "1.50", "0.10", "-12.50", "5e0", "5E0",
	"1e2", "1E2", "1e+2", "1E+2", "10e1", "0.5e1", "100e-2", "1200e-2", "1.5e3", "123.456e2", "123.456e5",
	"1e-7", "1E-6", "0.000001", "0.0000001", "0.00000123", "1.23e-5", "12e-8", "123e-9", "1234e-10",
	"1.000000e-6", "1.5e-7", "3.14159e-9", "-7E-3", "0e5", "0e10", "0e-5", "0E-10",
	"12345678901234567890123", "9007199254740993", "4503599627370496.5e0", "123456789.123456789e30",
	"100000000000000000000000000000000000000000e-10",
	"1.5e-400", "1e400", "1e1000", "-1e1000", "1.7976931348623157e+308", "1.7976931348623157e309",
	"1e999999999", "0.1e1000000000", "99e999999998", "9.9999999999e999999999",
	"1e1000000000", "10e999999999", "-1e1000000000", "1e99999999999999999999", "1e99999999999999999999999",
	"0e999999999", "0e1000000000", "-0e1000000000",
	"1e-999999999", "1e-1000000005", "1e-1147483645", "1e-1147483646", "1e-1147483647", "-1e-1147483647",
	"5e-1147483647", "6e-1147483647", "15e-1147483647", "25e-1147483647", "95e-1147483647",
	"25e-1147483648", "123e-1147483648", "999e-1147483648", "0.5e-1147483646",
	"1e-99999999999999999999", "1e-99999999999999999999999", "0e-1147483647", "0e-2000000000",

	// Strings: jq's escapes, what stays literal, surrogate escapes, and
	// invalid UTF-8 repaired one U+FFFD per bad sequence.
	`""`, `"just a string"`, `"a\u007f\"\\\n\t\b\f\r\u0001é😀\u2028<>&"`,
	`"\u0000\u0001\b\t\n\u000b\f\r\u001f\u007f\u0080"`, `"<b>&amp;</b>\u2028\u2029\u003c\u003e\u0026"`,
	`"\/\u0041\u00ff"`, `"line one\nline two\n\n"`, `"O'Brien ✓ ünïcödé"`,
	`"\ud83d\ude00😀"`, `"\udc00"`, `"\udc00\udc00x"`, `"\uDBFF\uDFFF"`,
	"\"a\xffb\"", "\"a\x80b\"", "\"\xc0\x80\"", "\"\xc1\xbf\"", "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"",
	"\"\xf0\x80\x80\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\"", "\"\xe2\x28\xa1\"", "\"ok\xe2\x82\"",
	"\"\xf0\x9f\x98A\"", "\"x\xf0A\"", "\"é\xe9😀\"", "\"\xe0\xa0\"", "\"a\xed\xa0\x80b\"",

	// Values: order kept, a repeated key at its first place with its last
	// value, compact and indented layouts, and the -r form of each kind.
	"null", "true", "false", "[]", "{}", "[{}]", `{"a":{}}`, "[[[[]]]]", "[[[[[[1]]]]]]",
	` { "a" : [ 1 , 2.50 , 1e2 , -0 , 100e-2 ] ,` + "\n" + ` "b" : "x" } `,
	`{"b":1,"a":[true,null,"x"],"b":{"c":1.50}}`, `{"k":1,"j":2,"k":3}`,
	`{"z":{"y":1,"y":{"x":[]}},"z":[{}]}`, `{"k":[[],[[1]]],"l":"x"}`,
	`[[[[]]],{"":""},"\"\\\/\b\f\n\r\t"]`, `{"é":1,"\u0000":2,"a\"b":3,"\u2028":[false]}`,
	"{\"\xff\":\"\xfe\",\"a\xe2\x82\":[\"\xc0\"]}", `[1,"two",[3,{"four":4.0}],null,true,false]`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,` +
		`"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k3":"dup","k18":null,"k0":[0]}`,

	// Not JSON to jq either.
	"", " ", `"\ud800"`, `"\ud800x"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `[1,]`, `{"a" 1}`, `"\x"`,
	"\"tab\there\"", `1 2`, `{}{}`, `1true`, `[1 2]`, `{"a":1}}`, `"abc`, `-`, `1e`,
}

// jqOutputs is what jq prints for one document, without the final newline.
type jqOutputs struct {
	Compact  string // jq -c .
	Indented string // jq .
	Raw      string // jq -r .
	Twice    string // jq -c . | jq -c .
	Invalid  bool   // jq refused the document
}

// ours is what this package prints for doc.
func ours(doc string) jqOutputs {
	v, ok := Parse([]byte(doc))
	if !ok {
		return jqOutputs{Invalid: true}
	}
	return jqOutputs{
		Compact:  string(Append(nil, v, Compact)),
		Indented: string(Append(nil, v, Indent)),
		Raw:      Raw(v, Indent),
		Twice:    string(Append(nil, v, Compact|Twice)),
	}
}

var update = flag.Bool("update", false, "rewrite golden_test.go from the jq 1.7 on PATH")

// TestGolden checks every document against what jq 1.7 printed for it.
func TestGolden(t *testing.T) {
	for _, doc := range documents {
		want, ok := golden[doc]
		if !ok {
			t.Errorf("%q has no golden entry: regenerate golden_test.go (see documents)", doc)
			continue
		}
		if got := ours(doc); got != want {
			t.Errorf("document %q\n got %#v\nwant %#v", doc, got, want)
		}
	}
}

// TestAgainstJQ runs the real jq 1.7 on every document. Without one it is
// skipped, in CI too: the CI machine is Debian 12, whose jq is 1.6 (1e2
// prints as 100 there), and no registry it reaches has 1.7. TestGolden,
// whose table jq 1.7.1 printed (regenerate it with -update on a machine
// that has jq 1.7), runs everywhere.
func TestAgainstJQ(t *testing.T) {
	bin := findJQ(t)
	table := make(map[string]jqOutputs, len(documents))
	for _, doc := range documents {
		got := runJQ(t, bin, doc)
		table[doc] = got
		if want := ours(doc); got != want {
			t.Errorf("document %q\n jq printed %#v\nwe printed %#v", doc, got, want)
		}
		if g, ok := golden[doc]; ok && g != got && !*update {
			t.Errorf("document %q: golden entry %#v is stale, jq printed %#v", doc, g, got)
		}
	}
	if *update {
		writeGolden(t, table)
	}
}

// findJQ returns the jq 1.7 on PATH, or skips.
func findJQ(t *testing.T) string {
	t.Helper()
	missing := func(why string) string {
		t.Skip(why + " (the golden table still checks jq 1.7's output)")
		return ""
	}
	bin, err := exec.LookPath("jq")
	if err != nil {
		return missing("no jq on PATH")
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return missing(fmt.Sprintf("%s --version: %v", bin, err))
	}
	if version := strings.TrimSpace(string(out)); !strings.HasPrefix(version, "jq-1.7") {
		return missing(fmt.Sprintf("%s is %s, not jq 1.7", bin, version))
	}
	return bin
}

func runJQ(t *testing.T, bin, doc string) jqOutputs {
	t.Helper()
	run := func(input string, args ...string) (string, bool) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(input)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		out, _ := strings.CutSuffix(stdout.String(), "\n")
		// Parse reads exactly one document: jq must have printed one.
		return out, err == nil && stdout.Len() > 0 && (args[0] != "-c" || !strings.Contains(out, "\n"))
	}
	var o jqOutputs
	var ok bool
	if o.Compact, ok = run(doc, "-c", "."); !ok {
		return jqOutputs{Invalid: true}
	}
	o.Indented, _ = run(doc, ".")
	o.Raw, _ = run(doc, "-r", ".")
	o.Twice, _ = run(o.Compact, "-c", ".")
	return o
}

func writeGolden(t *testing.T, table map[string]jqOutputs) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("// Code generated by go test -run TestAgainstJQ -update with jq 1.7; DO NOT EDIT.\n\n")
	b.WriteString("package jq\n\n// golden is what jq 1.7 printed for each of documents.\nvar golden = map[string]jqOutputs{\n")
	for _, doc := range slices.Sorted(maps.Keys(table)) {
		o := table[doc]
		if o.Invalid {
			fmt.Fprintf(&b, "%s: {Invalid: true},\n", strconv.Quote(doc))
			continue
		}
		fmt.Fprintf(&b, "%s: {%s, %s, %s, %s, false},\n", strconv.Quote(doc),
			strconv.Quote(o.Compact), strconv.Quote(o.Indented), strconv.Quote(o.Raw), strconv.Quote(o.Twice))
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("golden_test.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
}
