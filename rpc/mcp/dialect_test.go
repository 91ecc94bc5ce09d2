package mcp

import "testing"

// handle_tools_call's two conventions, told apart by their arguments.
func TestToolsCallRequestForms(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{}}`},
		{[]string{"1"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`},
		{[]string{"1", ""}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`},
		{[]string{"1", `{"name":"x"}`}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`},
		{[]string{"1", "null"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`},
		{[]string{"1", "{not json"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"{not json",` + meta + `}}`},
		{[]string{"1", "get_movies"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_movies",` + meta + `}}`},
		{[]string{`"a"`, "get_movies", `{"x":1}`}, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"get_movies","arguments":{"x":1},` + meta + `}}`},
		{[]string{"2", `we"ird`, ""}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"we\"ird",` + meta + `}}`},
	} {
		if got := string(ToolsCallRequest(c.args)); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.args, got, c.want)
		}
	}
}

// The 2026 SDK's create_response, each case checked against its jq
// program (.resultType // "complete", (._meta // {}) + {serverInfo}).
func TestSDK2026Result(t *testing.T) {
	const info = `{"name":"T","version":"9"}`
	for _, c := range []struct{ in, want string }{
		{`{"content":[]}`, `{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"T","version":"9"}}}`},
		{`{"content":[],"_meta":{"k":1}}`, `{"content":[],"_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{"name":"T","version":"9"}},"resultType":"complete"}`},
		{`{"resultType":null,"a":1,"a":2}`, `{"resultType":"complete","a":2,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"T","version":"9"}}}`},
		{`{"_meta":false,"resultType":"x"}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"T","version":"9"}},"resultType":"x"}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":1,"z":2}}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"T","version":"9"},"z":2},"resultType":"complete"}`},
		{`[1]`, ""},
		{`{"_meta":"s"}`, ""},
		{``, ""},
		{`{} {}`, ""},
	} {
		got, err := SDK2026Result([]byte(c.in), []byte(info))
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: want an error, got %s", c.in, got)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.in, got, err, c.want)
		}
	}
}
