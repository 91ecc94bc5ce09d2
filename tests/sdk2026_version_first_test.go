package tests

import (
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"

	"fmt"
	"strings"
	"testing"
)

// A 2026-07-28 request's protocol version is checked before its
// clientCapabilities, as the 2026 SDK checks them: an unsupported version
// gets -32022 with {requested, supported} whether or not the request
// carries clientCapabilities. A server in that SDK's dialect (its config
// declares supportedVersions) never requires clientCapabilities (a missing
// one is {}) and answers server/discover at any version; any other server
// keeps the spec's -32602 for a missing clientCapabilities.
func TestSdk2026VersionCheckedFirst(t *testing.T) {
	req := func(id int, method, version string, caps bool) string {
		meta := fmt.Sprintf(`"io.modelcontextprotocol/protocolVersion":%q`, version)
		if caps {
			meta += `,"io.modelcontextprotocol/clientCapabilities":{}`
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"_meta":{%s}}}`, id, method, meta)
	}
	unsupported := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32022,"message":"Unsupported protocol version: 2099-01-01","data":{"requested":"2099-01-01","supported":["2026-07-28"]}}}`, id)
	}
	t.Run("2026 SDK dialect", func(t *testing.T) {
		s := harness.Start(t, dr2Serves(dr2Server(t, dr2Config2026)))
		sdWantLine(t, "unsupported version, no clientCapabilities", s.RoundTrip(req(1, "tools/list", "2099-01-01", false)), unsupported(1))
		sdWantLine(t, "unsupported version", s.RoundTrip(req(2, "tools/list", "2099-01-01", true)), unsupported(2))
		got := s.RoundTrip(req(3, "tools/list", "2026-07-28", false))
		if r := harness.Parse(t, got); r.Error != nil || !strings.Contains(got, `"name":"echo"`) {
			t.Errorf("supported version, no clientCapabilities: want the tools, got %s", got)
		}
		got = s.RoundTrip(req(4, "server/discover", "2099-01-01", false))
		if r := harness.Parse(t, got); r.Error != nil || !strings.Contains(got, `"supportedVersions":["2026-07-28"]`) {
			t.Errorf("server/discover at an unsupported version: want the discover result, got %s", got)
		}
		got = s.RoundTrip(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
		sdWantLine(t, "a call without clientCapabilities", got, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"got {}"}],"resultType":"complete",`+dr2Meta2026Info+`}}`)
	})
	t.Run("bash-mcp-sdk server", func(t *testing.T) {
		s := harness.Start(t, dr2Serves(dr2Server(t, dr2ConfigBash)))
		got := s.RoundTrip(req(1, "tools/list", "2099-01-01", false))
		if r := harness.Parse(t, got); r.Error == nil || r.Error.Code != -32022 {
			t.Errorf("unsupported version, no clientCapabilities: want -32022, got %s", got)
		}
		got = s.RoundTrip(req(2, "tools/list", "2026-07-28", false))
		sdWantLine(t, "supported version, no clientCapabilities", got, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: _meta.io.modelcontextprotocol/clientCapabilities is required and must be an object"}}`)
	})
}
