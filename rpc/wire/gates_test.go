package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// sdkMethods are the methods the SDK's process_request dispatches; every
// other method of a request is answered -32601 "Method not found: <method>".
var sdkMethods = map[string]bool{"initialize": true, "tools/list": true, "tools/call": true, "ping": true}

// sdkAnswer plays the SDK's part after the gates: a dispatched method is
// shown as the ping answer (create_response "$id" '{}'), an unknown one gets
// -32601, notifications and client responses get nothing.
func sdkAnswer(t *testing.T, line string) (string, *Message) {
	t.Helper()
	msg, gerr := Parse([]byte(line))
	if msg != nil && gerr != nil {
		t.Fatalf("Parse(%q) = %v, %v: want at most one non-nil", line, msg, gerr)
	}
	switch {
	case msg == nil && gerr == nil:
		return "", nil
	case gerr != nil:
		return string(gerr.Line()), nil
	case msg.IsResponse || !msg.HasID:
		return "", msg
	case sdkMethods[msg.Method]:
		return string(ResultLine(msg.ID, json.RawMessage(`{}`))), msg
	default:
		return string(ErrorLine(msg.ID, -32601, "Method not found: "+msg.Method, nil)), msg
	}
}

// TestGateSDKParity pins every gate assertion of the SDK's bats suites
// (tests/cancellation.bats, core_standalone.bats, client_harness.bats) and
// the edge cases around them. Each want is the exact line the SDK wrote: it
// was produced once by running process_request's jq and bash steps (newest
// stored lib/mcpserver_core.sh) on jq 1.7.1; "" means no answer. The fourth
// field, when present, is the method the SDK matched.
func TestGateSDKParity(t *testing.T) {
	cases := [][]string{
		{"bats/id-carrying notifications/initialized answers -32601", "{\"jsonrpc\":\"2.0\",\"id\":1301,\"method\":\"notifications/initialized\"}", "{\"jsonrpc\":\"2.0\",\"id\":1301,\"error\":{\"code\":-32601,\"message\":\"Method not found: notifications/initialized\"}}"},
		{"bats/null id answered -32600", "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"bats/notification without id never answered", "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}", "", "ping"},
		{"bats/id-less notifications/initialized never answered", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", "", "notifications/initialized"},
		{"bats/boolean false id answered -32600", "{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"bats/boolean true id answered -32600", "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"bats/bad version with boolean id answers null id", "{\"jsonrpc\":\"1.0\",\"id\":false,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"bats/string id round-trips as a string", "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}", "ping"},
		{"bats/fractional id answered -32600", "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"bats/large integer id round-trips unchanged", "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"result\":{}}", "ping"},
		{"bats/two documents on one line", "{\"jsonrpc\":\"2.0\",\"id\":1601,\"method\":\"ping\"}{\"jsonrpc\":\"2.0\",\"id\":1602,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"bats/array is not an object", "[1,2]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected a JSON object\"}}"},
		{"bats/bare false is -32600 not -32700", "false", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected a JSON object\"}}"},
		{"bats/whitespace-only line", "   ", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"bats/id-carrying cancellation is a request", "{\"jsonrpc\":\"2.0\",\"id\":472,\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":471}}", "{\"jsonrpc\":\"2.0\",\"id\":472,\"error\":{\"code\":-32601,\"message\":\"Method not found: notifications/cancelled\"}}"},
		{"bats/cancellation without jsonrpc answers version error", "{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":473}}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"bats/cancellation notification", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":101}}", "", "notifications/cancelled"},
		{"bats/cancellation with string requestId", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"7\"}}", "", "notifications/cancelled"},
		{"bats/initialize", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "initialize"},
		{"bats/tools/call", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"greet\",\"arguments\":{\"name\":\"martin\"}}}", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", "tools/call"},
		{"bats/tools/call unicode payload", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"O'Brien ✓ ünïcödé\",\"arguments\":{}}}", "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", "tools/call"},
		{"bats/tools/list", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", "tools/list"},
		{"doc/two objects with a space", "{\"a\":1} {\"b\":2}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/two numbers", "1 2", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/valid then garbage", "{\"a\":1} garbage", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/truncated object", "{\"jsonrpc\":\"2.0\",\"id\":1", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/not json", "hello", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/string", "\"x\"", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected a JSON object\"}}"},
		{"doc/number", "5", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected a JSON object\"}}"},
		{"doc/true", "true", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected a JSON object\"}}"},
		{"doc/null", "null", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: expected a JSON object\"}}"},
		{"doc/two strings", "\"a\"\"b\"", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/number then string", "1\"a\"", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/two arrays", "[][]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/true then array", "true[]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/literal run 1true is one bad token", "1true", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/literal run truefalse", "truefalse", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/literal run 1-2", "1-2", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/true false", "true false", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/trailing comma in object", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/trailing comma in array", "[1,]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/single quotes", "{'a':1}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/comment after document", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} // c", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/raw tab in string", "{\"a\":\"tab\there\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/bad escape", "\"\\x\"", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/short unicode escape", "\"\\u12\"", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/lone high surrogate", "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/high surrogate then non-surrogate", "\"\\ud800\\u0041\"", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/form feed is not whitespace", "\u000c{}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/vertical tab is not whitespace", "\u000b{}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/byte order mark at line start", "\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"doc/byte order mark after a space", " \ufeff{}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/byte order mark alone", "\ufeff", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/tabs and spaces around", "\t {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \t", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"doc/carriage return at end", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"doc/carriage return alone", "\r", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Expected exactly one JSON document per line\"}}"},
		{"doc/missing colon", "{\"a\" 1}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/missing comma", "[1 2]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/number key", "{1:2}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/extra close", "[1]]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/unterminated string", "\"abc", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/minus alone", "-", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"doc/exponent without digits", "1e", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: Invalid JSON\"}}"},
		{"obj/empty object", "{}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"obj/only jsonrpc", "{\"jsonrpc\":\"2.0\"}", "", ""},
		{"ver/1.0 with integer id echoes it", "{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/missing with string id echoes it", "{\"id\":\"7\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/missing without id answers null", "{\"jsonrpc\":\"1.0\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/with fractional id answers null", "{\"jsonrpc\":\"1.0\",\"id\":1.5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/with object id answers null", "{\"jsonrpc\":\"1.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/with exponent id echoes it", "{\"jsonrpc\":\"1.0\",\"id\":1e2,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1E+2,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/number 2.0 passes like the SDK", "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"ver/number 20e-1 prints 2.0", "{\"jsonrpc\":20e-1,\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"ver/number 2.00 fails", "{\"jsonrpc\":2.00,\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/number 2 fails", "{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/string with trailing newline passes", "{\"jsonrpc\":\"2.0\\n\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"ver/string with NUL passes", "{\"jsonrpc\":\"2.\\u00000\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"ver/string with leading space fails", "{\"jsonrpc\":\" 2.0\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/true fails", "{\"jsonrpc\":true,\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/null fails", "{\"jsonrpc\":null,\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/array fails", "{\"jsonrpc\":[\"2.0\"],\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/duplicate key last wins (bad)", "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: jsonrpc must be 2.0\"}}"},
		{"ver/duplicate key last wins (good)", "{\"jsonrpc\":\"1.0\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"ver/escaped key", "{\"\\u006asonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"ver/escaped value", "{\"jsonrpc\":\"\\u0032.0\",\"id\":1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"id/object", "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/array", "{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/negative fraction", "{\"jsonrpc\":\"2.0\",\"id\":-1.5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/1e2 is an integer", "{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1E+2,\"result\":{}}", "ping"},
		{"id/1E+2", "{\"jsonrpc\":\"2.0\",\"id\":1E+2,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1E+2,\"result\":{}}", "ping"},
		{"id/10e1", "{\"jsonrpc\":\"2.0\",\"id\":10e1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1.0E+2,\"result\":{}}", "ping"},
		{"id/1.0 is an integer", "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{}}", "ping"},
		{"id/-0", "{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":-0,\"result\":{}}", "ping"},
		{"id/-0.0", "{\"jsonrpc\":\"2.0\",\"id\":-0.0,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":-0.0,\"result\":{}}", "ping"},
		{"id/0.000", "{\"jsonrpc\":\"2.0\",\"id\":0.000,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":0.000,\"result\":{}}", "ping"},
		{"id/0e-7", "{\"jsonrpc\":\"2.0\",\"id\":0e-7,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":0E-7,\"result\":{}}", "ping"},
		{"id/0.5e1", "{\"jsonrpc\":\"2.0\",\"id\":0.5e1,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", "ping"},
		{"id/1200e-2", "{\"jsonrpc\":\"2.0\",\"id\":1200e-2,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":12.00,\"result\":{}}", "ping"},
		{"id/123.0e-2 is fractional", "{\"jsonrpc\":\"2.0\",\"id\":123.0e-2,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/1e-7 is fractional", "{\"jsonrpc\":\"2.0\",\"id\":1e-7,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/1.5e-400 underflows to an integer", "{\"jsonrpc\":\"2.0\",\"id\":1.5e-400,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1.5E-400,\"result\":{}}", "ping"},
		{"id/-1.5e-400", "{\"jsonrpc\":\"2.0\",\"id\":-1.5e-400,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":-1.5E-400,\"result\":{}}", "ping"},
		{"id/5e-324 is fractional", "{\"jsonrpc\":\"2.0\",\"id\":5e-324,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/4503599627370496.5 is fractional", "{\"jsonrpc\":\"2.0\",\"id\":4503599627370496.5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/1e400", "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1E+400,\"result\":{}}", "ping"},
		{"id/past decNumber's emax echoes DBL_MAX as a second jq pass prints it", "{\"jsonrpc\":\"2.0\",\"id\":1e1000000000,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1.7976931348623157E+308,\"result\":{}}", "ping"},
		{"id/below decNumber's etiny rounds to zero", "{\"jsonrpc\":\"2.0\",\"id\":-1e-1147483647,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":-0E-1147483646,\"result\":{}}", "ping"},
		{"id/zero exponent clamped to emax", "{\"jsonrpc\":\"2.0\",\"id\":0e1000000000,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":0E+999999999,\"result\":{}}", "ping"},
		{"method/past emax prints as one jq -r pass does", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":1e1000000000}", "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"Method not found: 1.7976931348623157e+308\"}}", "1.7976931348623157e+308"},
		{"method/array below etiny", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":[1e-1147483647]}", "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"Method not found: [\\n  0E-1147483646\\n]\"}}", "[\n  0E-1147483646\n]"},
		{"id/negative integer", "{\"jsonrpc\":\"2.0\",\"id\":-5,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":-5,\"result\":{}}", "ping"},
		{"id/zero", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}", "ping"},
		{"id/huge integer", "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"result\":{}}", "ping"},
		{"id/empty string", "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"\",\"result\":{}}", "ping"},
		{"id/escaped string", "{\"jsonrpc\":\"2.0\",\"id\":\"\\u0041\\/\\\"\\\\\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"A/\\\"\\\\\",\"result\":{}}", "ping"},
		{"id/control escapes", "{\"jsonrpc\":\"2.0\",\"id\":\"\\u007f\\b\\f\\u2028\\u0001\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"\\u007f\\b\\f\u2028\\u0001\",\"result\":{}}", "ping"},
		{"id/unicode", "{\"jsonrpc\":\"2.0\",\"id\":\"é✓😀\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"é✓😀\",\"result\":{}}", "ping"},
		{"id/surrogate pair escape", "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\\ude00\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"😀\",\"result\":{}}", "ping"},
		{"id/lone low surrogate", "{\"jsonrpc\":\"2.0\",\"id\":\"\\udc00x\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"\ufffdx\",\"result\":{}}", "ping"},
		{"id/html characters", "{\"jsonrpc\":\"2.0\",\"id\":\"<a>&amp;\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"<a>&amp;\",\"result\":{}}", "ping"},
		{"id/duplicate last wins", "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":\"x\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", "ping"},
		{"id/duplicate last wins null", "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":null,\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: id must be a string or an integer\"}}"},
		{"id/key order id first", "{\"id\":7,\"method\":\"ping\",\"jsonrpc\":\"2.0\"}", "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", "ping"},
		{"id/key order method first", "{\"method\":\"ping\",\"jsonrpc\":\"2.0\",\"id\":7}", "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", "ping"},
		{"id/whitespace inside", "{ \"jsonrpc\" : \"2.0\" , \"id\" : 7 , \"method\" : \"ping\" }", "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", "ping"},
		{"method/missing", "{\"jsonrpc\":\"2.0\",\"id\":1}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: \"}}"},
		{"method/null", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: \"}}"},
		{"method/false", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":false}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: \"}}"},
		{"method/true", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":true}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: true\"}}"},
		{"method/number", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: 5\"}}"},
		{"method/number 1.50", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1.50}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: 1.50\"}}"},
		{"method/number 1e2", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1e2}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: 1E+2\"}}"},
		{"method/empty array", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[]}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: []\"}}"},
		{"method/object printed indented", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":{\"a\":[1,2],\"b\":{},\"c\":\"x\",\"a\":null}}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: {\\n  \\\"a\\\": null,\\n  \\\"b\\\": {},\\n  \\\"c\\\": \\\"x\\\"\\n}\"}}"},
		{"method/nested arrays", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[[],{},[[]],[{\"x\":1e2}],\"<&>\",true,null]}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: [\\n  [],\\n  {},\\n  [\\n    []\\n  ],\\n  [\\n    {\\n      \\\"x\\\": 1E+2\\n    }\\n  ],\\n  \\\"<&>\\\",\\n  true,\\n  null\\n]\"}}"},
		{"method/empty string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: \"}}"},
		{"method/unknown", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"foo\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: foo\"}}"},
		{"method/trailing newline is cut", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\\n\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"method/trailing newlines in unknown", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"foo\\n\\n\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: foo\"}}"},
		{"method/leading newline kept", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\nfoo\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: \\nfoo\"}}"},
		{"method/NUL dropped", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\\u0000ng\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"method/control characters", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\u0001\\u001f\\u007f\\t\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: \\u0001\\u001f\\u007f\\t\"}}"},
		{"method/html and separators", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\\u00e9<&>\\u2028\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: mé<&>\u2028\"}}"},
		{"method/duplicate last wins", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "ping"},
		{"method/duplicate last wins unknown", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":\"x\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: x\"}}"},
		{"method/case matters", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"PING\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found: PING\"}}"},
		{"method/number notification", "{\"jsonrpc\":\"2.0\",\"method\":5}", "", "5"},
		{"method/string id with unknown method", "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"nope\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"error\":{\"code\":-32601,\"message\":\"Method not found: nope\"}}"},
		{"method/exponent id with unknown method", "{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"nope\"}", "{\"jsonrpc\":\"2.0\",\"id\":1E+2,\"error\":{\"code\":-32601,\"message\":\"Method not found: nope\"}}"},
		{"resp/result without id", "{\"jsonrpc\":\"2.0\",\"result\":{}}", "", ""},
	}
	for _, c := range cases {
		name, line, want := c[0], c[1], c[2]
		t.Run(name, func(t *testing.T) {
			got, msg := sdkAnswer(t, line)
			if want != "" {
				want += "\n"
			}
			if got != want {
				t.Errorf("line %q\n got %q\nwant %q", line, got, want)
			}
			if len(c) > 3 {
				if msg == nil || msg.Method != c[3] {
					t.Errorf("line %q: method = %+v, want %q", line, msg, c[3])
				}
				if want == "" && (msg == nil || msg.HasID) {
					t.Errorf("line %q: want a notification, got %+v", line, msg)
				}
			}
		})
	}
}

// TestGateBashReadDropsNUL: bash's `read` removes NUL bytes before the SDK
// sees the line (checked with bash 5.2), so they change nothing here either.
func TestGateBashReadDropsNUL(t *testing.T) {
	for _, line := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\x00",
		"\x00{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x00ng\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1\x00,\"method\":\"ping\"}",
	} {
		got, _ := sdkAnswer(t, line)
		if want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"; got != want {
			t.Errorf("line %q: got %q, want %q", line, got, want)
		}
	}
	// A line of NULs reads as empty, which the SDK's loop skipped unanswered.
	for _, line := range []string{"", "\x00", "\x00\x00\x00"} {
		if msg, gerr := Parse([]byte(line)); msg != nil || gerr != nil {
			t.Errorf("Parse(%q) = %+v, %+v; want (nil, nil)", line, msg, gerr)
		}
	}
	if got, _ := sdkAnswer(t, "\x00 \x00"); !strings.Contains(got, "Expected exactly one JSON document per line") {
		t.Errorf("NUL and space line: got %q", got)
	}
}

// TestGateDeliberateDifferences pins where this package departs from the
// SDK on purpose; sdk records what the SDK (jq 1.7.1) answered instead.
func TestGateDeliberateDifferences(t *testing.T) {
	const invalidJSON = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Invalid JSON"}}` + "\n"
	cases := []struct {
		name, line, want, sdk string
	}{
		// Client responses are dropped, never answered (daemon design: the
		// server may send requests one day, and answering an error with an
		// error can ping-pong).
		{"response with result", `{"jsonrpc":"2.0","id":1,"result":{}}`, "",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: "}}`},
		{"response with error and null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}`, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or an integer"}}`},
		{"response with error", `{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}`, "",
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found: "}}`},
		// jq accepts literals RFC 8259 does not; encoding/json (and so the
		// rest of the daemon) rejects them, and so do the gates.
		{"nan document", `nan`, invalidJSON,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}}`},
		{"leading zero document", `01`, invalidJSON,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}}`},
		{"leading zero id", `{"jsonrpc":"2.0","id":01,"method":"ping"}`, invalidJSON,
			`{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"plus sign id", `{"jsonrpc":"2.0","id":+1,"method":"ping"}`, invalidJSON,
			`{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"leading point id", `{"jsonrpc":"2.0","id":.5,"method":"ping"}`, invalidJSON,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or an integer"}}`},
		{"trailing point id", `{"jsonrpc":"2.0","id":1.,"method":"ping"}`, invalidJSON,
			`{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"Infinity id", `{"jsonrpc":"2.0","id":Infinity,"method":"ping"}`, invalidJSON,
			`{"jsonrpc":"2.0","id":1.7976931348623157E+308,"result":{}}`},
		{"NaN id", `{"jsonrpc":"2.0","id":NaN,"method":"ping"}`, invalidJSON,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or an integer"}}`},
		// jq 1.7.1 stops at 256 parser levels (128 nested objects); the
		// gates allow encoding/json's 10000.
		{"129 nested objects in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 129) + "1" + strings.Repeat("}", 129) + "}",
			`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", invalidJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := sdkAnswer(t, c.line); got != c.want {
				t.Errorf("line %q\n got %q\nwant %q\n(the SDK answered %q)", c.line, got, c.want, c.sdk)
			}
		})
	}
}

// TestParseMessageFields checks what a caller reads from a Message.
func TestParseMessageFields(t *testing.T) {
	cases := []struct {
		line       string
		id         string // "" for nil
		hasID      bool
		method     string
		params     string // "" for nil
		isResponse bool
	}{
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `9007199254740993`, true, "ping", "", false},
		{`{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"x"}}`, `"\u0041"`, true, "tools/call", `{"name":"x"}`, false},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping","params":null}`, `-0`, true, "ping", `null`, false},
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping","params":[1, 2]}`, `1e2`, true, "ping", `[1, 2]`, false},
		{`{ "params" : { "a" : 1 } , "method":"notifications/cancelled","jsonrpc":"2.0"}`, "", false, "notifications/cancelled", `{ "a" : 1 }`, false},
		{`{"jsonrpc":"2.0","id":7,"result":{"x":1}}`, `7`, true, "", "", true},
		{`{"jsonrpc":"2.0","error":{"code":1}}`, "", false, "", "", true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","id":"x","params":1,"params":2}`, `"x"`, true, "ping", `2`, false},
	}
	for _, c := range cases {
		msg, gerr := Parse([]byte(c.line))
		if gerr != nil {
			t.Errorf("Parse(%s): unexpected %+v", c.line, gerr)
			continue
		}
		if string(msg.ID) != c.id || (msg.ID == nil) != (c.id == "") || msg.HasID != c.hasID ||
			msg.Method != c.method || string(msg.Params) != c.params || (msg.Params == nil) != (c.params == "") ||
			msg.IsResponse != c.isResponse {
			t.Errorf("Parse(%s) = {ID:%q HasID:%v Method:%q Params:%q IsResponse:%v}, want {%q %v %q %q %v}",
				c.line, msg.ID, msg.HasID, msg.Method, msg.Params, msg.IsResponse, c.id, c.hasID, c.method, c.params, c.isResponse)
		}
	}
}

// TestParseDoesNotAlias: the reader reuses its buffer, so a Message must
// survive the line being overwritten, and appending to one field must not
// write over another.
func TestParseDoesNotAlias(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"n"}}`)
	msg, gerr := Parse(line)
	if gerr != nil {
		t.Fatal(gerr)
	}
	for i := range line {
		line[i] = 'x'
	}
	_ = append(msg.ID, "99999"...)
	if string(msg.ID) != "12" || string(msg.Params) != `{"name":"n"}` || msg.Method != "tools/call" {
		t.Errorf("message changed: %+v", msg)
	}
}

// TestParseDeepNesting: depth costs heap, not stack, and the limit is
// encoding/json's.
func TestParseDeepNesting(t *testing.T) {
	for _, n := range []int{MaxDepth + 1, 100_000} {
		for _, open := range []string{"[", `{"a":`} {
			line := strings.Repeat(open, n)
			if _, gerr := Parse([]byte(line)); gerr == nil || gerr.Message != gateInvalidJSON {
				t.Errorf("%d x %s unclosed: got %+v", n, open, gerr)
			}
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			closed := `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(open, n-1) + "1" + strings.Repeat(closer, n-1) + "}"
			if _, gerr := Parse([]byte(closed)); gerr == nil || gerr.Message != gateInvalidJSON {
				t.Errorf("%d levels of %s: got %+v", n, open, gerr)
			}
		}
	}
	ok := `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}"
	if msg, gerr := Parse([]byte(ok)); gerr != nil || msg.Method != "ping" {
		t.Errorf("%d levels: got %+v %+v", MaxDepth, msg, gerr)
	}
}

// TestParseMethodIndentBounded: jq indents a non-string method, which grows
// with the square of its depth; past a budget it is printed compact, so a
// small line cannot make a huge answer.
func TestParseMethodIndentBounded(t *testing.T) {
	method := func(depth int) string {
		line := `{"jsonrpc":"2.0","id":1,"method":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
		msg, gerr := Parse([]byte(line))
		if gerr != nil {
			t.Fatalf("depth %d: %+v", depth, gerr)
		}
		return msg.Method
	}
	if got, want := method(3), "[\n  [\n    []\n  ]\n]"; got != want {
		t.Errorf("depth 3: got %q, want jq's %q", got, want)
	}
	if got := method(100); !strings.HasPrefix(got, "[\n  [\n") || len(got) > indentBudget {
		t.Errorf("depth 100: got %d bytes %.20q", len(got), got)
	}
	if got, want := method(MaxDepth-1), strings.Repeat("[", MaxDepth-1)+strings.Repeat("]", MaxDepth-1); got != want {
		t.Errorf("depth %d: got %d bytes %.20q, want the compact form", MaxDepth-1, len(got), got)
	}
	// indentCost predicts the indented size exactly.
	for _, raw := range []string{`[]`, `{}`, `[1,[2,{}],{"a":{"b":[3]}}]`, `{"k":[[],[[1]]],"l":"x"}`} {
		v, _ := jq.Parse([]byte(raw))
		compact, pretty := jq.Append(nil, v, jq.Compact), jq.Append(nil, v, jq.Indent)
		if int64(len(pretty)) != int64(len(compact))+indentCost(v, 0) {
			t.Errorf("indentCost(%s) = %d, want %d", raw, indentCost(v, 0), len(pretty)-len(compact))
		}
	}
	// A container jsonrpc is never "2.0" and is not printed at all.
	line := `{"jsonrpc":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `,"id":1}`
	if _, gerr := Parse([]byte(line)); gerr == nil || gerr.Message != gateBadVersion {
		t.Errorf("deep jsonrpc: got %+v", gerr)
	}
}

// TestParseLargeLine: a 16 MiB request parses in one pass.
func TestParseLargeLine(t *testing.T) {
	big := strings.Repeat("é<\\n>", 16<<20/8)
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"text":"` + big + `"}}}`
	msg, gerr := Parse([]byte(line))
	if gerr != nil || msg.Method != "tools/call" || !bytes.Contains(msg.Params, []byte(big)) {
		t.Fatalf("large line: %+v", gerr)
	}
}

func TestGateValidID(t *testing.T) {
	for raw, want := range map[string]bool{
		`"x"`: true, `""`: true, `0`: true, `-0`: true, `1.0`: true, `1e2`: true, `12.00`: true, `1e400`: true,
		`1.5e-400`: true, `1e99999999999999999999`: true, `1e-99999999999999999999`: true,
		`1.5`: false, `0.1`: false, `1e-7`: false, `5e-324`: false, `4503599627370496.5`: false, `123.0e-2`: false,
		`null`: false, `true`: false, `false`: false, `{}`: false, `[]`: false,
	} {
		if got := validID([]byte(raw)); got != want {
			t.Errorf("validID(%s) = %v, want %v", raw, got, want)
		}
	}
}

// TestGateLinesAreValid: every answer Parse produces is one valid JSON line.
func TestGateLinesAreValid(t *testing.T) {
	for _, line := range []string{" ", "{", `{"jsonrpc":"1","id":"\ud83d\ude00"}`, "\xff\xfe", `"\udc00"`} {
		if _, gerr := Parse([]byte(line)); gerr != nil {
			out := gerr.Line()
			if !json.Valid(bytes.TrimSuffix(out, []byte("\n"))) || !utf8.Valid(out) || bytes.Count(out, []byte("\n")) != 1 {
				t.Errorf("Parse(%q) answered an invalid line %q", line, out)
			}
		}
	}
}
