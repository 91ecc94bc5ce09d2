package mcpschema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	legacy = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
	modern = []string{"2026-07-28"}
	all    = append(slices.Clone(legacy), modern...)
)

// Known-good server messages, written by hand from the schemas.
type good struct {
	revs   []string
	method string
	line   string
}

var goods = []good{
	// ---- every legacy revision
	{legacy, "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"mcp-bashd","version":"0.1.0"}}}`},
	{legacy, "ping", `{"jsonrpc":"2.0","id":"p-1","result":{}}`},
	{legacy, "logging/setLevel", `{"jsonrpc":"2.0","id":7,"result":{}}`},
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Echo a message","inputSchema":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}},{"name":"noargs","inputSchema":{"type":"object"}}],"nextCursor":"c2"}}`},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello"}],"isError":false}}`},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}`},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///tmp/out.txt","text":"x","mimeType":"text/plain"}}]}}`},
	{legacy, "", `{"jsonrpc":"2.0","id":9,"result":{"anything":[1,2]}}`},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
	{legacy, "", `{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"server busy","data":{"retryAfterMs":10}}}`},
	// JSON-RPC 2.0 null id for an unreadable request: no MCP schema allows it.
	{legacy, "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
	{legacy, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":0.5,"total":3}}`},
	{legacy, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"bash","data":{"line":"disk low"}}}`},
	{legacy, "", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
	{legacy, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"timeout"}}`},
	{legacy, "", `{"jsonrpc":"2.0","id":100,"method":"ping"}` + "\n"},

	// ---- revision-specific additions
	{legacy[1:], "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}}`},
	{legacy[1:], "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"message":"step 2"}}`},
	{legacy[1:], "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"rm","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"readOnlyHint":false}}]}}`},
	{[]string{"2025-03-26"}, "", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}]`},
	{legacy[2:], "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"stat","title":"File stat","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"size":{"type":"integer"}},"required":["size"]}}]}}`},
	{legacy[2:], "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"size\":3}"},{"type":"resource_link","uri":"file:///tmp/a","name":"a"}],"structuredContent":{"size":3},"_meta":{"com.example/trace":"x","progressToken":1}}}`},
	{legacy[2:], "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mcp-bashd","title":"MCP bash daemon","version":"0.1.0"},"instructions":"Tools are bash functions."}}`},
	// 2025-11-25 lets an error response omit an unknown id (e.g. 403 body).
	{legacy[3:], "", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden origin"}}`},
	{legacy[3:], "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"ls","inputSchema":{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema"},"icons":[{"src":"https://example.com/i.png","mimeType":"image/png"}],"execution":{"taskSupport":"forbidden"}}]}}`},

	// ---- 2026-07-28 (stateless)
	{modern, "server/discover", `{"jsonrpc":"2.0","id":"server-discover-probe-1","result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{"listChanged":false}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-bashd","version":"0.1.0"}}}}`},
	{modern, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"m":{"type":"string"}}}}],"ttlMs":60000,"cacheScope":"private"}}`},
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-bashd","version":"0.1.0"}}}}`},
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"opaque"}}`},
	{modern, "", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}`},
	{modern, "server/discover", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"v999","supported":["2026-07-28"]}}}`},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Method header does not match body"}}`},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"needs sampling","data":{"requiredCapabilities":{"sampling":{}}}}}`},
	{modern, "ping", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`},
	{modern, "", `{"jsonrpc":"2.0","id":5,"error":{"code":-31999,"message":"tool backend unavailable"}}`},
	{modern, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2,"message":"half"}}`},
	{modern, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`},
	{modern, "", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`},
}

func TestGoodLines(t *testing.T) {
	t.Parallel()
	for i, g := range goods {
		if !json.Valid([]byte(g.line)) {
			t.Fatalf("goods[%d] is not JSON: %s", i, g.line)
		}
		for _, r := range g.revs {
			if err := Check(r, g.method, []byte(g.line)); err != nil {
				t.Errorf("goods[%d] %s %q rejected:\n%s\n%v", i, r, g.method, g.line, err)
			}
		}
	}
}

// Broken server messages, each with a fragment the error must contain so
// the test proves it failed for the intended reason.
type bad struct {
	revs   []string
	method string
	line   string
	want   string
}

var bads = []bad{
	// The three defects named in the brief, in every revision.
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"hi"}]}}`, "missing property 'type'"},
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"text":"hi"}]}}`, "missing property 'type'"},
	{legacy, "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`, "serverInfo"},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":"true"}}`, "/result/isError"},
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[],"isError":"true"}}`, "/result/isError"},

	// Envelope.
	{all, "", `{"jsonrpc":"1.0","id":1,"result":{"resultType":"complete"}}`, "/jsonrpc"},
	{all, "", `{"id":1,"result":{"resultType":"complete"}}`, "jsonrpc"},
	{all, "", `{"jsonrpc":"2.0","result":{"resultType":"complete"}}`, "'id'"},
	{all, "", `{"jsonrpc":"2.0","id":1.5,"result":{"resultType":"complete"}}`, "/id"},
	{all, "", `{"jsonrpc":"2.0","id":null,"result":{"resultType":"complete"}}`, "/id"},
	{all, "", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"},"error":{"code":1,"message":"x"}}`, "both result and error"},
	{all, "", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"},"debug":true}`, `unexpected top-level member "debug"`},
	{all, "", `{"jsonrpc":"2.0","id":1,"result":[]}`, "/result"},
	{all, "", `[]`, "batch"},
	{all, "", `"hello"`, "not an object"},
	{all, "", `{"jsonrpc":"2.0","id":1}`, "neither method, result nor error"},
	{all, "", `{"jsonrpc":"2.0","id":1,"result":{}} {}`, "not JSON"},
	{all, "ping", "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}", "one line"},
	{all, "ping", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n", "one line"},
	{all, "", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\xff\"}}", "UTF-8"},
	{all, "", `{"jsonrpc":"2.0","id":1,"id":2,"result":{"resultType":"complete"}}`, `duplicate object key "id"`},
	{all, "", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","x":{"a":1,"a":2}}}`, `duplicate object key "a"`},
	{legacy[:1], "", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, "not allowed in this revision"},
	{legacy[2:], "", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, "not allowed in this revision"},
	{[]string{"2025-03-26"}, "", `[]`, "empty batch"},
	{[]string{"2025-03-26"}, "", `[{"jsonrpc":"2.0","id":1,"result":{},"x":1}]`, "batch element 0"},

	// Errors.
	{all, "", `{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"x"}}`, "/error/code"},
	{all, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601.5,"message":"x"}}`, "/error/code"},
	{all, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}`, "message"},
	{all, "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"x"}}`, "only allowed for -32700/-32600"},
	{legacy[:3], "", `{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}`, "'id'"},
	{all, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32150,"message":"x"}}`, "reserved and not defined"},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`, "reserved and not defined"},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"x"}}`, "reserved and not defined"},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version"}}`, "data"},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"requested":"v9"}}}`, "supported"},
	{modern, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"x","data":{"requiredCapabilities":["sampling"]}}}`, "requiredCapabilities"},
	{legacy[3:], "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"x"}}`, "data"},

	// Result types per method.
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x"}]}}`, "inputSchema"},
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"string"}}]}}`, "/result/tools/0/inputSchema/type"},
	{legacy[3:], "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":null}]}}`, "inputSchema"},
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{}}`, "tools"},
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"a":{"type":"strin"}}}}]}}`, "not a usable JSON Schema"},
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"object","minProperties":-1}}]}}`, "not a usable JSON Schema"},
	{legacy, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}}]}}`, "refusing to load"},
	{modern, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"x","inputSchema":{"type":"object","properties":{"a":{"type":7}}}}],"ttlMs":0,"cacheScope":"public"}}`, "not a usable JSON Schema"},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"isError":true}}`, "content"},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}}`, "base64"},
	{legacy, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":5}]}}`, "/result/content/0"},
	{legacy[:1], "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}}`, "/result/content/0"},
	{legacy[2:], "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":[1]}}`, "/result/structuredContent"},
	{legacy[2:], "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"resource_link","uri":"relative/path","name":"a"}]}}`, "relative url"},
	{legacy[2:], "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"_meta":{"-bad":1}}}`, "naming rules"},
	{legacy, "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mcp-bashd"}}}`, "version"},
	{legacy, "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":20250618,"capabilities":{},"serverInfo":{"name":"a","version":"1"}}}`, "/result/protocolVersion"},
	{legacy, "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":"yes"}},"serverInfo":{"name":"a","version":"1"}}}`, "listChanged"},
	{all, "tools/frobnicate", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, `no client request "tools/frobnicate"`},
	{modern, "ping", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, `no client request "ping"`},
	{modern, "initialize", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"a","version":"1"}}}`, `no client request "initialize"`},
	{legacy, "server/discover", `{"jsonrpc":"2.0","id":1,"result":{}}`, `no client request "server/discover"`},

	// 2026-07-28 result rules.
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`, "resultType"},
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"done","content":[]}}`, `resultType "done"`},
	{modern, "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}`, "inputRequests or requestState"},
	{modern, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s"}}`, "not allowed for this method"},
	{modern, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"cacheScope":"public"}}`, "ttlMs"},
	{modern, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":-1,"cacheScope":"public"}}`, "/result/ttlMs"},
	{modern, "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"shared"}}`, "/result/cacheScope"},
	{modern, "server/discover", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{},"ttlMs":0,"cacheScope":"public"}}`, "supportedVersions"},
	{modern, "server/discover", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}}`, "version"},

	// Notifications and server requests.
	{all, "", `{"jsonrpc":"2.0","method":"notifications/bogus"}`, `no server notification "notifications/bogus"`},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "no server notification"},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, "progressToken"},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":true,"progress":1}}`, "/params/progressToken"},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":"1"}}`, "/params/progress"},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"verbose","data":"x"}}`, "/params/level"},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`, "data"},
	{all, "", `{"method":"notifications/tools/list_changed"}`, "jsonrpc"},
	{all, "", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{},"id":null,"x":1}`, "unexpected top-level member"},
	{all, "", `{"jsonrpc":"2.0","method":"ping","result":{}}`, "both method and result"},
	{legacy, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, `no server-to-client request "tools/call"`},
	{modern, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "servers never send requests"},
	{legacy[2:], "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"_meta":{"a b":1}}}`, "naming rules"},
}

func TestBadLines(t *testing.T) {
	t.Parallel()
	for i, b := range bads {
		for _, r := range b.revs {
			err := Check(r, b.method, []byte(b.line))
			if err == nil {
				t.Errorf("bads[%d] %s %q accepted:\n%s", i, r, b.method, b.line)
				continue
			}
			if !strings.Contains(err.Error(), b.want) {
				t.Errorf("bads[%d] %s %q: error lacks %q:\n%s\n%v", i, r, b.method, b.want, b.line, err)
			}
		}
	}
}

func TestUnknownRevision(t *testing.T) {
	err := Check("2099-01-01", "ping", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if err == nil || !strings.Contains(err.Error(), "unknown protocol revision") {
		t.Fatalf("err = %v", err)
	}
	if got := Revisions(); !slices.Equal(got, all) {
		t.Fatalf("Revisions() = %v", got)
	}
}

// TestDerivedTables pins the method → definition mapping derived from the
// schemas, so a schema update that changes it shows up here by name.
func TestDerivedTables(t *testing.T) {
	t.Parallel()
	type row struct{ rev, method, want string }
	for _, c := range []row{
		{"2024-11-05", "initialize", "InitializeResult"},
		{"2024-11-05", "ping", "EmptyResult"},
		{"2025-03-26", "logging/setLevel", "EmptyResult"},
		{"2025-06-18", "tools/list", "ListToolsResult"},
		{"2025-11-25", "tools/call", "CallToolResult"},
		{"2026-07-28", "tools/call", "InputRequiredResult,CallToolResult"},
		{"2026-07-28", "tools/list", "ListToolsResult"},
		{"2026-07-28", "server/discover", "DiscoverResult"},
		{"2026-07-28", "ping", ""},
		{"2026-07-28", "initialize", ""},
		{"2026-07-28", "logging/setLevel", ""},
	} {
		r, err := lookup(c.rev)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(r.results[c.method], ","); got != c.want {
			t.Errorf("%s %s → %q, want %q", c.rev, c.method, got, c.want)
		}
	}
	r, _ := lookup("2026-07-28")
	if len(r.serverReqs) != 0 || r.errEnv[-32022] != "UnsupportedProtocolVersionError" || r.errObj[-32601] != "MethodNotFoundError" {
		t.Errorf("2026 tables: serverReqs=%v errEnv=%v errObj=%v", r.serverReqs, r.errEnv, r.errObj)
	}
	r, _ = lookup("2025-03-26")
	if r.batch == "" || r.resultEnv != "JSONRPCResponse" || r.errorEnv != "JSONRPCError" || r.idOptional {
		t.Errorf("2025-03-26: batch=%q env=%s/%s idOptional=%v", r.batch, r.resultEnv, r.errorEnv, r.idOptional)
	}
}

// TestSchemaCopies proves the embedded files are the official bytes; the
// hashes match ../shared/spec/REVISIONS.md (which lists them shortened
// as first8…last4).
func TestSchemaCopies(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"2024-11-05": "61cea2392d4f284092d09bc84b9ac488c0d5618ac2b38a56942fc5b99fd960ce",
		"2025-03-26": "e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131",
		"2025-06-18": "af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01",
		"2025-11-25": "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7",
		"2026-07-28": "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203",
	}
	ents, err := schemaFS.ReadDir("schemas")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(want) {
		t.Errorf("schemas/ has %d files, want %d", len(ents), len(want))
	}
	for r, h := range want {
		b, err := schemaFS.ReadFile("schemas/schema-" + r + ".json")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != h {
			t.Errorf("%s: sha256 %s, want %s", r, got, h)
		}
	}
}

// TestConcurrent runs Check from many goroutines on fresh and cached
// schemas; with -race this proves the lazy compilation is safe.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				gd := goods[(g+i)%len(goods)]
				r := gd.revs[(g+i)%len(gd.revs)]
				if err := Check(r, gd.method, []byte(gd.line)); err != nil {
					errs <- fmt.Errorf("%s %s: %w", r, gd.method, err)
					return
				}
				bd := bads[(g*7+i)%len(bads)]
				if Check(bd.revs[0], bd.method, []byte(bd.line)) == nil {
					errs <- fmt.Errorf("bad line accepted: %s", bd.line)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`: "",
		`{"a":{"x":1},"a":2}`:                       "a",
		`[{"k":1,"k":2}]`:                           "k",
		`{"a":[{},{}],"b":{},"b":1}`:                "b",
		`{"o":{"p":{"q":1,"q":1}}}`:                 "q",
	} {
		if got := duplicateKey([]byte(in)); got != want {
			t.Errorf("duplicateKey(%s) = %q, want %q", in, got, want)
		}
	}
}
