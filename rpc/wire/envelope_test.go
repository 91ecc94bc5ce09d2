package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkLine asserts the framing invariants every envelope must keep: valid
// JSON, valid UTF-8, exactly one newline, at the end.
func checkLine(t *testing.T, line []byte) {
	t.Helper()
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Errorf("line %q: want exactly one newline, at the end", line)
	}
	if !utf8.Valid(line) || !json.Valid(line) {
		t.Errorf("line %q is not valid UTF-8 JSON", line)
	}
}

// TestEnvelopeSDKLines pins the exact lines the SDK's bats suites assert
// (tests/error_response.bats, core_standalone.bats, cancellation.bats) and
// lines produced by jq 1.7.1 from the SDK's create_response and
// create_error_response for values that exercise jq's printing.
func TestEnvelopeSDKLines(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"error without data", ErrorLine(json.RawMessage(`1`), -32602, "Invalid params", nil),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`},
		{"error with empty data", ErrorLine(json.RawMessage(`1`), -32602, "Invalid params", json.RawMessage{}),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`},
		{"error with object data", ErrorLine(json.RawMessage(`1`), -32602, "Invalid params", json.RawMessage(`{"param":"age"}`)),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"age"}}}`},
		{"error with string data", ErrorLine(json.RawMessage(`1`), -32602, "Invalid params", json.RawMessage(`"details"`)),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"details"}}`},
		{"error with spaced data", ErrorLine(json.RawMessage(`1`), -32602, "Invalid params", json.RawMessage(`{"param" : "age", "n": 1.0}`)),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"age","n":1.0}}}`},
		{"initialize result", ResultLine(json.RawMessage(`1`), json.RawMessage(`{"protocolVersion":"2024-11-05","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}`)),
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}`},
		{"tool result", ResultLine(json.RawMessage(`1`), json.RawMessage(`{"content":[{"type":"text","text":"trivial done"}],"isError":false}`)),
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"trivial done"}],"isError":false}}`},
		{"ping", ResultLine(json.RawMessage(`"7"`), json.RawMessage(`{}`)), `{"jsonrpc":"2.0","id":"7","result":{}}`},
		{"big id", ResultLine(json.RawMessage(`9007199254740993`), json.RawMessage(`{}`)), `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`},
		{"null id", ErrorLine(json.RawMessage(`null`), -32700, "Parse error: Invalid JSON", nil),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}`},
		// jq's printing of --argjson values:
		{"spaced result, numbers as jq prints them", ResultLine(json.RawMessage(`7`), json.RawMessage("{ \"a\" : [ 1 , 2.50 , 1e2 , -0 , 100e-2 ] ,\n \"b\" : \"x\" }")),
			`{"jsonrpc":"2.0","id":7,"result":{"a":[1,2.50,1E+2,-0,1.00],"b":"x"}}`},
		{"html and separators stay literal, escapes are undone", ResultLine(json.RawMessage(`7`), json.RawMessage(`{"html":"<b>&amp;</b>","sep":"\u2028\u2029","esc":"\u003c\u003e\u0026","slash":"\/"}`)),
			"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"html\":\"<b>&amp;</b>\",\"sep\":\"\u2028\u2029\",\"esc\":\"<>&\",\"slash\":\"/\"}}"},
		{"control characters", ResultLine(json.RawMessage(`7`), json.RawMessage(`{"ctl":"\u0000\u0001\b\t\n\u000b\f\r\u001f\u007f\u0080"}`)),
			"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ctl\":\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f\\u007f\u0080\"}}"},
		{"duplicate keys", ResultLine(json.RawMessage(`7`), json.RawMessage(`{"k":1,"j":2,"k":3}`)),
			`{"jsonrpc":"2.0","id":7,"result":{"k":3,"j":2}}`},
		{"nested duplicate keys", ResultLine(json.RawMessage(`7`), json.RawMessage(`{"z":{"y":1,"y":{"x":[]}},"z":[{}]}`)),
			`{"jsonrpc":"2.0","id":7,"result":{"z":[{}]}}`},
		{"array result", ResultLine(json.RawMessage(`7`), json.RawMessage(`[]`)), `{"jsonrpc":"2.0","id":7,"result":[]}`},
		{"string result", ResultLine(json.RawMessage(`7`), json.RawMessage(`"just a string"`)), `{"jsonrpc":"2.0","id":7,"result":"just a string"}`},
		{"number result", ResultLine(json.RawMessage(`7`), json.RawMessage(`12345678901234567890123456789`)),
			`{"jsonrpc":"2.0","id":7,"result":12345678901234567890123456789}`},
		{"surrogates", ResultLine(json.RawMessage(`7`), json.RawMessage(`{"emoji":"\ud83d\ude00😀","lone":"\udc00"}`)),
			"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"emoji\":\"😀😀\",\"lone\":\"\uFFFD\"}}"},
		{"null result", ResultLine(json.RawMessage(`7`), json.RawMessage(`null`)), `{"jsonrpc":"2.0","id":7,"result":null}`},
		// jq's printing of --arg messages:
		{"message", ErrorLine(json.RawMessage(`"a"`), -32601, "Method not found: ping", nil),
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found: ping"}}`},
		{"message escapes", ErrorLine(json.RawMessage(`"a"`), -32601, "tab\there\nnew line\rcr\x01\x1f\x7f<&>'/\\\"", nil),
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"tab\there\nnew line\rcr\u0001\u001f\u007f<&>'/\\\""}}`},
		{"message unicode", ErrorLine(json.RawMessage(`"a"`), -32601, "Invalid tool name: O'Brien ✓ ünïcödé", nil),
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Invalid tool name: O'Brien ✓ ünïcödé"}}`},
		{"message separators", ErrorLine(json.RawMessage(`"a"`), -32601, "sep\u2028\u2029 é 😀", nil),
			"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32601,\"message\":\"sep\u2028\u2029 é 😀\"}}"},
		// Ids are printed as jq prints them too, as the SDK echoed them.
		{"exponent id", ResultLine(json.RawMessage(`1e2`), json.RawMessage(`{}`)), `{"jsonrpc":"2.0","id":1E+2,"result":{}}`},
		{"escaped string id", ResultLine(json.RawMessage(`"\u0041\/"`), json.RawMessage(`{}`)), `{"jsonrpc":"2.0","id":"A/","result":{}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if string(c.got) != c.want+"\n" {
				t.Errorf("\n got %s\nwant %s", c.got, c.want)
			}
			checkLine(t, c.got)
		})
	}
}

func TestEnvelopeNotification(t *testing.T) {
	cases := []struct {
		got  []byte
		want string
	}{
		{NotificationLine("notifications/progress", json.RawMessage(`{"progressToken":"t","progress":1}`)),
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`},
		{NotificationLine("notifications/tools/list_changed", nil), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{NotificationLine("a\"<b>", json.RawMessage(" [ 1 ] ")), `{"jsonrpc":"2.0","method":"a\"<b>","params":[1]}`},
	}
	for _, c := range cases {
		if string(c.got) != c.want+"\n" {
			t.Errorf("\n got %s\nwant %s", c.got, c.want)
		}
		checkLine(t, c.got)
	}
}

// TestEnvelopeNeverInvalid: a value that is not one JSON document (jq
// would have failed) prints as null, so no line carries broken JSON or a
// stray newline.
func TestEnvelopeNeverInvalid(t *testing.T) {
	for _, raw := range []string{"", " \n ", "{", "1 2", "{} {}", "[1,]", "nan", "\"a\nb\"", "\"\\ud800\"", "\xff", "{\"a\":1}\n{\"b\":2}"} {
		for _, line := range [][]byte{
			ResultLine(json.RawMessage(raw), json.RawMessage(raw)),
			ErrorLine(json.RawMessage(raw), -1, "m", json.RawMessage(raw)),
			NotificationLine("m", json.RawMessage(raw)),
		} {
			checkLine(t, line)
			if strings.Contains(string(line), "\n{") {
				t.Errorf("raw %q leaked into %q", raw, line)
			}
		}
	}
	if got := string(ResultLine(nil, nil)); got != `{"jsonrpc":"2.0","id":null,"result":null}`+"\n" {
		t.Errorf("nil values: %s", got)
	}
	// Pretty input is compacted: its newlines must not split the line.
	line := ResultLine(json.RawMessage("\n7\n"), json.RawMessage("{\n  \"a\": [\n    1\n  ]\n}\n"))
	if string(line) != `{"jsonrpc":"2.0","id":7,"result":{"a":[1]}}`+"\n" {
		t.Errorf("pretty input: %q", line)
	}
}

// TestEnvelopeInvalidUTF8 checks jq's replacement of invalid UTF-8 (one
// U+FFFD per bad sequence as jvp_utf8_next delimits it), which differs from
// Go's one-per-byte for overlong, surrogate, out-of-range and truncated
// sequences.
func TestEnvelopeInvalidUTF8(t *testing.T) {
	const r = "\uFFFD"
	cases := map[string]string{
		"a\xffb":              "a" + r + "b", // byte that never starts a sequence
		"a\x80b":              "a" + r + "b", // stray continuation byte
		"\xc0\x80":            r + r,         // C0 never starts a sequence
		"\xe0\x80\x80":        r,             // overlong, complete: one
		"\xed\xa0\x80":        r,             // UTF-16 surrogate, complete: one
		"\xf4\x90\x80\x80":    r,             // above U+10FFFF: one
		"\xe2\x28\xa1":        r + "(" + r,   // cut short by "(", which is kept
		"ok\xe2\x82":          "ok" + r,      // cut short by the end
		"\xf0\x9f\x98A":       r + "A",       // cut short by "A" (kept)
		"x\xf0A":              "x" + r,       // too few bytes left: jq swallows "A" too
		"é\xe9😀":              "é" + r + "😀", // Latin-1 byte amid UTF-8
		"valid ✓ \u2028 text": "valid ✓ \u2028 text",
	}
	for in, want := range cases {
		if got := ValidUTF8(in); got != want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", in, got, want)
		}
		line := ErrorLine(nil, -32603, in, nil)
		checkLine(t, line)
		var env struct{ Error struct{ Message string } }
		if err := json.Unmarshal(line, &env); err != nil || env.Error.Message != want {
			t.Errorf("ErrorLine message for %q = %q (%v), want %q", in, env.Error.Message, err, want)
		}
	}
	// Invalid UTF-8 inside a raw JSON string value is replaced the same way.
	if got := string(ResultLine(json.RawMessage(`1`), json.RawMessage("\"a\xed\xa0\x80b\""))); got != `{"jsonrpc":"2.0","id":1,"result":"a`+r+`b"}`+"\n" {
		t.Errorf("raw invalid UTF-8: %q", got)
	}
}

// TestEnvelopeMatchesEncodingJSON: whatever the printing details, the value
// a client decodes is the value the caller passed.
func TestEnvelopeMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`{"a":[1,2,{"b":null,"c":true,"d":false}],"e":"\u00e9\ud83d\ude00<>&\u2028","f":-1.5e-3,"g":{}}`,
		`[[[[]]],{"":""},"\"\\\/\b\f\n\r\t"]`,
		`{"big":123456789012345678901234567890,"neg":-0.000001}`,
	} {
		var want, got any
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		var env struct{ Result json.RawMessage }
		if err := json.Unmarshal(ResultLine(json.RawMessage(`1`), json.RawMessage(raw)), &env); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(env.Result, &got); err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("round trip of %s\n got %s\nwant %s", raw, gb, wb)
		}
	}
}

// TestEnvelopeExported: the helpers other packages print with.
func TestEnvelopeExported(t *testing.T) {
	if got, want := string(AppendStringBody([]byte("x:"), "a\"\n\x7f<\xe0\x80\x80"+"\u2028")), "x:a\\\"\\n\\u007f<\uFFFD\u2028"; got != want {
		t.Errorf("AppendStringBody = %q, want %q", got, want)
	}
	body := Raw(`{"text":"x"}`)
	if got, want := string(ResultLineBody(json.RawMessage(`1e2`), body)), `{"jsonrpc":"2.0","id":1E+2,"result":{"text":"x"}}`+"\n"; got != want {
		t.Errorf("ResultLineBody = %q, want %q", got, want)
	}
	if line := ResultLineBody(json.RawMessage(`"abc"`), body); cap(line) != len(line) {
		t.Errorf("ResultLineBody: line of %d bytes in a buffer of %d: not allocated at its final size", len(line), cap(line))
	}
}
