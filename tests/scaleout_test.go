package tests

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

const scaleTools = `{"tools":[{"name":"hi","description":"says hi","inputSchema":{"type":"object"}}]}`

const scaleScript = `#!/usr/bin/env bash
tool_hi() { echo "hi from $$"; }
`

// TestScaleOutDiscover: three replicas sharing a real redis-server behind
// a real haproxy (round-robin, no affinity) answer every 2026 request,
// whichever replica each lands on.
func TestScaleOutDiscover(t *testing.T) {
	c := harness.StartCluster(t, 3, harness.Options{Files: map[string]string{"server.sh": scaleScript, "tools.json": scaleTools}})
	const discover = `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for i := 0; i < 6; i++ {
		req, err := http.NewRequest(http.MethodPost, c.URL, strings.NewReader(discover))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "server/discover")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d through haproxy: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"id":5,"result"`) {
			t.Fatalf("request %d through haproxy: %d %s", i, resp.StatusCode, body)
		}
	}
}
