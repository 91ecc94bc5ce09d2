package mcp_test

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/stdio"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// BenchmarkPing measures the daemon's own cost of one request: read,
// gate, decode, dispatch, render, write (go test -bench Ping ./rpc/mcp/).
func BenchmarkPing(b *testing.B) {
	dir := b.TempDir()
	src := catalog.NewSource(catalog.Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json")})
	srv := mcp.New(mcp.Options{Catalog: src, Snapshot: func() *supervisor.Snapshot { return nil }})
	in := strings.Repeat(`{"jsonrpc":"2.0","id":12345,"method":"ping"}`+"\n", b.N)
	b.ResetTimer()
	conn := stdio.New(bytes.NewReader([]byte(in)), io.Discard, stdio.Options{ModernEnabled: srv.ModernEnabled})
	if err := srv.Serve(conn); err != nil {
		b.Fatal(err)
	}
}
