package tests

// Issue 14: resources, resource templates, prompts and completion written
// as bash functions (resource_NAME, prompt_NAME, complete_NAME) and
// declared in resources.json and prompts.json beside tools.json. Every
// line is checked against the official schema of its revision (recv).

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

const rsMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// rsServer is a server with every kind of declaration.
var rsServer = map[string]string{
	"server.sh": `
tool_echo() { printf '%s\n' "$1"; }
resource_readme() { printf 'Read me: %s %s\n' "$1" "$2"; echo 'a warning' >&2; }
resource_note() { printf 'note %s\n' "$2"; }
resource_logo() { printf '\x89PNG\r\n\x00\xff'; }
resource_packed() { printf 'abc' >"$MCP_CALL_TMPDIR/p"; mcp_blob "$MCP_CALL_TMPDIR/p"; mcp_resource notes://index text/csv 'a,b'; }
resource_broken() { echo 'partial'; echo 'disk on fire' >&2; return 4; }
resource_gone() { echo 'not this'; mcp_resource_not_found; }
prompt_greet() { local re='"who":"([^"]*)"'; [[ $1 =~ $re ]]; printf 'Say hello to %s.\n\n' "${BASH_REMATCH[1]}"; }
prompt_chat() {
	printf '\x89PNG\r\n' >"$MCP_CALL_TMPDIR/i.png"
	mcp_message user 'What is this?'
	mcp_message user --image "$MCP_CALL_TMPDIR/i.png" image/png
	mcp_message assistant 'A picture.'
	mcp_message user --resource notes://1 text/plain 'the note'
}
prompt_failing() { echo 'no such topic' >&2; return 2; }
complete_greet() { printf '%s\n' "$1=$2" "ctx=$3"; printf 'ann\nbob\n\n'; }
`,
	"tools.json": harness.ToolsJSON("echo"),
	"resources.json": `{"resources":[
		{"uri":"notes://readme","name":"readme","description":"The readme","mimeType":"text/plain","x-mcp-bashd":{"timeout":"30s"}},
		{"uri":"notes://logo","name":"logo","mimeType":"image/png"},
		{"uri":"notes://packed","name":"packed"},
		{"uri":"notes://broken","name":"broken"},
		{"uri":"notes://undefined","name":"undefined"}],
	 "resourceTemplates":[{"uriTemplate":"notes://note/{id}/text{.fmt}","name":"note","mimeType":"text/markdown"},{"uriTemplate":"notes://gone/{id}","name":"gone"}]}`,
	"prompts.json": `{"prompts":[
		{"name":"greet","description":"Greets someone","arguments":[{"name":"who","description":"whom","required":true},{"name":"tone"}]},
		{"name":"chat"},{"name":"failing"},{"name":"missing"}]}`,
}

// rsServe serves files (server.sh and its JSON files) marked and
// initialized.
func rsServe(files map[string]string) harness.Options {
	o := rfIn("", "", nil)
	o.Files = files
	return o
}

// rsWant sends a request and compares the answer with want, byte for byte.
func rsWant(t *testing.T, s *harness.Daemon, what, req, want string) {
	t.Helper()
	if got := s.RoundTrip(req); got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func TestResourcesSessionEra(t *testing.T) {
	d := harness.Start(t, rsServe(rsServer))
	rsWant(t, d, "initialize declares what the files offer",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{},"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"completions":{}}}}`)
	rsWant(t, d, "resources/list: the declarations, settings left out",
		`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"notes://readme","name":"readme","description":"The readme","mimeType":"text/plain"},{"uri":"notes://logo","name":"logo","mimeType":"image/png"},{"uri":"notes://packed","name":"packed"},{"uri":"notes://broken","name":"broken"},{"uri":"notes://undefined","name":"undefined"}]}}`)
	rsWant(t, d, "resources/templates/list",
		`{"jsonrpc":"2.0","id":3,"method":"resources/templates/list"}`,
		`{"jsonrpc":"2.0","id":3,"result":{"resourceTemplates":[{"uriTemplate":"notes://note/{id}/text{.fmt}","name":"note","mimeType":"text/markdown"},{"uriTemplate":"notes://gone/{id}","name":"gone"}]}}`)
	rsWant(t, d, "a static resource: $1 the URI, $2 {}, stdout exactly as written, stderr left out",
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://readme"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"notes://readme","mimeType":"text/plain","text":"Read me: notes://readme {}\n"}]}}`)
	rsWant(t, d, "a template: its variables, percent-decoded, as a JSON object in $2",
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"notes://note/a%20b/text.md"}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"contents":[{"uri":"notes://note/a%20b/text.md","mimeType":"text/markdown","text":"note {\"fmt\":\"md\",\"id\":\"a b\"}\n"}]}}`)
	logo := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x00\xff"))
	rsWant(t, d, "output that is not UTF-8 text is a blob",
		`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"notes://logo"}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"contents":[{"uri":"notes://logo","mimeType":"image/png","blob":"`+logo+`"}]}}`)
	rsWant(t, d, "mcp_blob and mcp_resource add contents",
		`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"notes://packed"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"notes://packed","mimeType":"application/octet-stream","blob":"YWJj"},{"uri":"notes://index","mimeType":"text/csv","text":"a,b"}]}}`)
	rsWant(t, d, "an unknown URI: resource not found (-32002 before 2026) with the URI in data",
		`{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"notes://nope/extra"}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32002,"message":"Resource not found: notes://nope/extra","data":{"uri":"notes://nope/extra"}}}`)
	rsWant(t, d, "mcp_resource_not_found: a URI a template matches but that names nothing",
		`{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"notes://gone/7"}}`,
		`{"jsonrpc":"2.0","id":12,"error":{"code":-32002,"message":"Resource not found: notes://gone/7","data":{"uri":"notes://gone/7"}}}`)
	rsWant(t, d, "a failing function: -32603 with its output and stderr",
		`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"notes://broken"}}`,
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"Error executing resource_broken: partial\ndisk on fire"}}`)
	rsWant(t, d, "a declaration without its function",
		`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"notes://undefined"}}`,
		`{"jsonrpc":"2.0","id":10,"error":{"code":-32603,"message":"Cannot read notes://undefined: the server script defines no function resource_undefined"}}`)
	rsWant(t, d, "resources/read without a uri",
		`{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{}}`,
		`{"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"Invalid params: uri is required and must be a string"}}`)

	rsWant(t, d, "prompts/list",
		`{"jsonrpc":"2.0","id":20,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":20,"result":{"prompts":[{"name":"greet","description":"Greets someone","arguments":[{"name":"who","description":"whom","required":true},{"name":"tone"}]},{"name":"chat"},{"name":"failing"},{"name":"missing"}]}}`)
	rsWant(t, d, "prompts/get: the output is one user message, trailing newlines removed",
		`{"jsonrpc":"2.0","id":21,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"Ann"}}}`,
		`{"jsonrpc":"2.0","id":21,"result":{"description":"Greets someone","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ann."}}]}}`)
	rsWant(t, d, "a required argument missing: refused before bash runs",
		`{"jsonrpc":"2.0","id":22,"method":"prompts/get","params":{"name":"greet","arguments":{"tone":"warm"}}}`,
		`{"jsonrpc":"2.0","id":22,"error":{"code":-32602,"message":"Invalid params: prompt greet requires argument \"who\""}}`)
	rsWant(t, d, "an argument that is not a string",
		`{"jsonrpc":"2.0","id":23,"method":"prompts/get","params":{"name":"greet","arguments":{"who":7}}}`,
		`{"jsonrpc":"2.0","id":23,"error":{"code":-32602,"message":"Invalid params: argument \"who\" must be a string"}}`)
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n"))
	rsWant(t, d, "mcp_message: several messages, roles, an image and an embedded resource",
		`{"jsonrpc":"2.0","id":24,"method":"prompts/get","params":{"name":"chat"}}`,
		`{"jsonrpc":"2.0","id":24,"result":{"messages":[{"role":"user","content":{"type":"text","text":"What is this?"}},{"role":"user","content":{"type":"image","data":"`+png+`","mimeType":"image/png"}},{"role":"assistant","content":{"type":"text","text":"A picture."}},{"role":"user","content":{"type":"resource","resource":{"uri":"notes://1","mimeType":"text/plain","text":"the note"}}}]}}`)
	rsWant(t, d, "a failing prompt function: -32603 with its stderr",
		`{"jsonrpc":"2.0","id":25,"method":"prompts/get","params":{"name":"failing"}}`,
		`{"jsonrpc":"2.0","id":25,"error":{"code":-32603,"message":"Error executing prompt_failing: no such topic"}}`)
	rsWant(t, d, "an undeclared prompt",
		`{"jsonrpc":"2.0","id":26,"method":"prompts/get","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":26,"error":{"code":-32602,"message":"Prompt not found: nope"}}`)
	rsWant(t, d, "a declared prompt without its function",
		`{"jsonrpc":"2.0","id":27,"method":"prompts/get","params":{"name":"missing"}}`,
		`{"jsonrpc":"2.0","id":27,"error":{"code":-32603,"message":"Cannot get prompt missing: the server script defines no function prompt_missing"}}`)
	if strings.Contains(d.Stderr.String(), "a warning") {
		t.Errorf("a resource's stderr reached the daemon's stderr as such:\n%s", d.Stderr)
	}
	d.Stdin.Close()
	d.WaitExit(t)
}

func TestResourcesModernEra(t *testing.T) {
	dir := harness.WriteFiles(t, rsServer)
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"TMPDIR=" + t.TempDir()}})
	s.Revision = "2026-07-28"
	const info = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"1.0.0"}}`
	rsWant(t, s, "server/discover declares resources, prompts and completions",
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+rsMeta+`}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"completions":{}},"ttlMs":60000,"cacheScope":"public","resultType":"complete",`+info+`}}`)
	rsWant(t, s, "resources/list carries the caching hints",
		`{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{`+rsMeta+`}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"notes://readme","name":"readme","description":"The readme","mimeType":"text/plain"},{"uri":"notes://logo","name":"logo","mimeType":"image/png"},{"uri":"notes://packed","name":"packed"},{"uri":"notes://broken","name":"broken"},{"uri":"notes://undefined","name":"undefined"}],"ttlMs":60000,"cacheScope":"public","resultType":"complete",`+info+`}}`)
	rsWant(t, s, "resources/templates/list",
		`{"jsonrpc":"2.0","id":3,"method":"resources/templates/list","params":{`+rsMeta+`}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"resourceTemplates":[{"uriTemplate":"notes://note/{id}/text{.fmt}","name":"note","mimeType":"text/markdown"},{"uriTemplate":"notes://gone/{id}","name":"gone"}],"ttlMs":60000,"cacheScope":"public","resultType":"complete",`+info+`}}`)
	rsWant(t, s, "prompts/list",
		`{"jsonrpc":"2.0","id":4,"method":"prompts/list","params":{`+rsMeta+`}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"prompts":[{"name":"greet","description":"Greets someone","arguments":[{"name":"who","description":"whom","required":true},{"name":"tone"}]},{"name":"chat"},{"name":"failing"},{"name":"missing"}],"ttlMs":60000,"cacheScope":"public","resultType":"complete",`+info+`}}`)
	rsWant(t, s, "resources/read carries the caching hints",
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{`+rsMeta+`,"uri":"notes://note/7/text"}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"contents":[{"uri":"notes://note/7/text","mimeType":"text/markdown","text":"note {\"id\":\"7\"}\n"}],"ttlMs":60000,"cacheScope":"public","resultType":"complete",`+info+`}}`)
	rsWant(t, s, "SEP-2164: an unknown URI is -32602 with the URI in data",
		`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{`+rsMeta+`,"uri":"test://nonexistent"}}`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Resource not found: test://nonexistent","data":{"uri":"test://nonexistent"}}}`)
	rsWant(t, s, "mcp_resource_not_found in 2026-07-28",
		`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{`+rsMeta+`,"uri":"notes://gone/1"}}`,
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Resource not found: notes://gone/1","data":{"uri":"notes://gone/1"}}}`)
	rsWant(t, s, "prompts/get",
		`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{`+rsMeta+`,"name":"greet","arguments":{"who":"Bob"}}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"description":"Greets someone","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Bob."}}],"resultType":"complete",`+info+`}}`)
	rsWant(t, s, "resources/subscribe is gone in 2026-07-28",
		`{"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{`+rsMeta+`,"uri":"notes://readme"}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found: resources/subscribe"}}`)
	if ee := s.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, s.Stderr)
	}
}

// Without resources.json and prompts.json a server answers exactly as
// before they existed: the bash SDKs' empty lists in the session eras,
// -32601 for the rest, nothing declared.
func TestResourcesAbsentFilesChangeNothing(t *testing.T) {
	dir := harness.WriteFiles(t, map[string]string{"server.sh": "tool_echo() { echo \"$1\"; }\nresource_x() { :; }\n", "tools.json": harness.ToolsJSON("echo")})
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(dir, "server.sh")}, Env: []string{"TMPDIR=" + t.TempDir()}})
	rsWant(t, s, "initialize", harness.InitLine,
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-server","version":"1.0.0"},"capabilities":{"tools":{}}}}`)
	for i, m := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		key := map[string]string{"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}[m]
		rsWant(t, s, m, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i+1, m), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{%q:[]}}`, i+1, key))
	}
	for i, m := range []string{"resources/read", "prompts/get", "completion/complete", "resources/subscribe"} {
		rsWant(t, s, m, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"uri":"x://y","name":"x"}}`, i+10, m),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found: %s"}}`, i+10, m))
	}
	s.Revision = "2026-07-28"
	for i, m := range []string{"resources/list", "prompts/list", "resources/read", "subscriptions/listen"} {
		rsWant(t, s, m, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,"uri":"x://y","notifications":{}}}`, i+20, m, rsMeta),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found: %s"}}`, i+20, m))
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Errorf("exit: %v\n%s", ee, s.Stderr)
	}
}

// A resource function runs exactly as a tool: its own process group, the
// lifeline's sentinel in it, MCP_CALL_TMPDIR, the before-call hook (with
// the function's name and first argument), the cancel hook
// resource_NAME_cancel, and the group gone after a cancellation, with no
// response for it.
func TestResourceReadRunsLikeATool(t *testing.T) {
	files := map[string]string{
		"server.sh": rfLib + `
mcp_before_tool_call() { rf_note hook "$1 $2"; [ "$2" != notes://refused ]; }
resource_slow() {
	rf_note slow.pid "$$ $(ps -o pgid= -p $$ | tr -d ' ') $([ -d "$MCP_CALL_TMPDIR" ] && echo tmp)"
	sleep 1000
}
resource_slow_cancel() { rf_note cancelled "$1 $2"; }
resource_refused() { echo never; }
`,
		"tools.json":     harness.ToolsJSON(),
		"resources.json": `{"resources":[{"uri":"notes://slow","name":"slow"},{"uri":"notes://refused","name":"refused"}]}`,
	}
	d := harness.Start(t, rsServe(files))
	rsWant(t, d, "the before-call hook refuses",
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://refused"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Error executing resource_refused: "}}`)
	if got := rfLine(t, d.Dir, "hook"); got != "resource_refused notes://refused" {
		t.Errorf("hook got %q", got)
	}
	d.Send(`{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"notes://slow"}}`)
	var pid, pgid int
	var tmp string
	fmt.Sscanf(rfLine(t, d.Dir, "slow.pid"), "%d %d %s", &pid, &pgid, &tmp)
	if pid != pgid || tmp != "tmp" {
		t.Fatalf("resource_slow: pid %d pgid %d MCP_CALL_TMPDIR %q; want its own group and the directory", pid, pgid, tmp)
	}
	d.Send(rfCancel(`"r"`))
	if got := rfLine(t, d.Dir, "cancelled"); got != "notes://slow {}" {
		t.Errorf("resource_slow_cancel got %q, want the URI and {}", got)
	}
	harness.WaitGroupGone(t, pgid, harness.Deadline(t))
	rsWant(t, d, "after the cancel, the next answer is the next request's", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	d.Stdin.Close()
	if lines := d.Drain(t); len(lines) != 0 {
		t.Fatalf("lines after the cancel: %q", lines)
	}
	if entries, _ := os.ReadDir(d.Tmp); len(entries) != 0 {
		t.Errorf("TMPDIR not empty after the calls: %v", entries)
	}
}

// x-mcp-bashd's timeout applies to a resource as to a tool.
func TestResourceReadTimeout(t *testing.T) {
	d := harness.Start(t, rsServe(map[string]string{
		"server.sh":      rfLib + "resource_stuck() { rf_note stuck.pid; sleep 1000; }\n",
		"tools.json":     harness.ToolsJSON(),
		"resources.json": `{"resources":[{"uri":"notes://stuck","name":"stuck","x-mcp-bashd":{"timeout":"300ms"}}]}`,
	}))
	rsWant(t, d, "a resource past its timeout",
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://stuck"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"resource_stuck timed out after 300ms and was stopped."}}`)
	harness.WaitGroupGone(t, rfInt(t, d.Dir, "stuck.pid"), harness.Deadline(t))
}

// completion/complete runs complete_NAME ARGUMENT VALUE CONTEXT_JSON for
// the prompt or template the ref names; each non-empty line is a value, at
// most 100 are returned, total counts them all.
func TestCompletion(t *testing.T) {
	files := map[string]string{
		"server.sh": `
prompt_greet() { :; }
complete_greet() { printf '%s\n' "$1=$2" "ctx=$3"; printf 'ann\r\nbob\n\n'; }
resource_note() { :; }
complete_note() { local i; for ((i = 1; i <= 150; i++)); do echo "$2$i"; done; }
`,
		"tools.json":     harness.ToolsJSON(),
		"prompts.json":   `{"prompts":[{"name":"greet","arguments":[{"name":"who"}]},{"name":"plain"}]}`,
		"resources.json": `{"resourceTemplates":[{"uriTemplate":"notes://note/{id}","name":"note"}]}`,
	}
	d := harness.Start(t, rsServe(files))
	rsWant(t, d, "a prompt argument, with the context's arguments",
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"a"},"context":{"arguments":{"tone":"warm"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["who=a","ctx={\"tone\":\"warm\"}","ann","bob"],"total":4,"hasMore":false}}}`)
	var many []string
	for i := 1; i <= 100; i++ {
		many = append(many, fmt.Sprintf(`"n%d"`, i))
	}
	rsWant(t, d, "a template argument: 100 of 150 values",
		`{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"notes://note/{id}"},"argument":{"name":"id","value":"n"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"completion":{"values":[`+strings.Join(many, ",")+`],"total":150,"hasMore":true}}}`)
	rsWant(t, d, "no complete_ function: no values",
		`{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"plain"},"argument":{"name":"x","value":""}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"completion":{"values":[],"total":0,"hasMore":false}}}`)
	rsWant(t, d, "an undeclared prompt",
		`{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"x","value":""}}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Prompt not found: nope"}}`)
	rsWant(t, d, "an undeclared template",
		`{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"notes://{x}"},"argument":{"name":"x","value":""}}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Resource template not found: notes://{x}"}}`)

	s := d
	s.Revision = "2026-07-28"
	rsWant(t, s, "2026-07-28",
		`{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{`+rsMeta+`,"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"b"}}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"completion":{"values":["who=b","ctx={}","ann","bob"],"total":4,"hasMore":false},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"1.0.0"}}}}`)
}
