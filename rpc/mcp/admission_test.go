package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/stdio"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// A 2025-03-26 batch on a server with one slot: the first member's
// answer keeps the slot until the batch's array is written, so every
// other member is refused busy instead of waiting for its own batch (and
// the answers the batch holds never outnumber the slots).
func TestBatchMembersBeyondTheSlotsAreRefusedBusy(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	must(t, os.WriteFile(tools, []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`), 0o644))
	snap := &supervisor.Snapshot{Functions: map[string]bool{"tool_echo": true}}
	srv := mcp.New(mcp.Options{
		Catalog: catalog.NewSource(catalog.Options{ToolsFile: tools, ConfigFile: filepath.Join(dir, "config.json")}),
		Runner:  &seqRunner{}, Snapshot: func() *supervisor.Snapshot { return snap }, MaxConcurrent: 1, Log: zaptest.NewLogger(t),
	})
	const members = 8
	parts := make([]string, members)
	for i := range parts {
		parts[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	}
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n" +
		"[" + strings.Join(parts, ",") + "]\n"
	var out strings.Builder
	lb := &lockedBuilder{b: &out}
	conn := stdio.New(strings.NewReader(in), lb, stdio.Options{ModernEnabled: srv.ModernEnabled})
	must(t, srv.Serve(conn))
	conn.Flush(time.Minute)
	lines := strings.Split(strings.TrimSpace(lb.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the initialize answer and the batch's array, got %q", lb.String())
	}
	var answers []struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	must(t, json.Unmarshal([]byte(lines[1]), &answers))
	results, busy := 0, 0
	for _, a := range answers {
		switch {
		case a.Error == nil:
			results++
		case strings.HasPrefix(a.Error.Message, "Server busy: every --max-concurrency slot (1) holds an answer of a JSON-RPC batch"):
			busy++
		default:
			t.Errorf("a member answered %s", a.Error.Message)
		}
	}
	if results != 1 || busy != members-1 {
		t.Errorf("%d results and %d busy, want 1 and %d: %s", results, busy, members-1, lines[1])
	}
}
