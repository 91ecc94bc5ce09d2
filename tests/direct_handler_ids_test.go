package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The SDK's direct handlers (handle_tools_call, handle_initialize,
// handle_tools_list) take ID as a JSON literal and echo it whatever its
// type, and handle_tools_call runs the tool: the stream's id gate (a
// string or an integer) applies only to what arrives on the stream. An id
// that is not JSON is still refused, and a string or integer id is served
// as before.
func TestDirectHandlersEchoAnyIDLiteral(t *testing.T) {
	dir := dr2Server(t, dr2ConfigBash)
	marks := t.TempDir()
	out := dr2Script(t, dir, `set -euo pipefail
source "$SHIM"
tool_echo() { printf 'got %s' "$1"; printf 'x\n' >>"$MARKS/ran"; }
handle_tools_call null '{"name":"echo","arguments":{"a":1}}'
handle_tools_call 1.5 '{"name":"echo","arguments":{}}'
handle_tools_call true '{"name":"echo","arguments":{}}'
handle_tools_call '{ "k": [1, "&"] }' '{"name":"echo","arguments":{}}'
handle_tools_list '[2]' | cut -c1-30
handle_initialize 2.5 '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}' | cut -c1-40
handle_tools_call 7 '{"name":"echo","arguments":{}}'
handle_tools_call '"s"' '{"name":"echo","arguments":{}}'
`, "MARKS="+marks)
	want := `{"jsonrpc":"2.0","id":null,"result":{"content":[{"type":"text","text":"got {\"a\":1}"}],"isError":false}}
{"jsonrpc":"2.0","id":1.5,"result":{"content":[{"type":"text","text":"got {}"}],"isError":false}}
{"jsonrpc":"2.0","id":true,"result":{"content":[{"type":"text","text":"got {}"}],"isError":false}}
{"jsonrpc":"2.0","id":{"k":[1,"&"]},"result":{"content":[{"type":"text","text":"got {}"}],"isError":false}}
{"jsonrpc":"2.0","id":[2],"res
{"jsonrpc":"2.0","id":2.5,"result":{"pro
{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"got {}"}],"isError":false}}
{"jsonrpc":"2.0","id":"s","result":{"content":[{"type":"text","text":"got {}"}],"isError":false}}
`
	if out != want {
		t.Errorf("direct handlers:\n%s\nwant:\n%s", out, want)
	}
	ran, _ := os.ReadFile(filepath.Join(marks, "ran"))
	if n := strings.Count(string(ran), "x"); n != 6 {
		t.Errorf("the tool ran %d times, want 6", n)
	}
}
