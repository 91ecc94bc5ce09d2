package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchLimits measures the cost of per-tool limits (issue 16): the same
// echo tool declared with each mechanism alone and with all of them, its
// calls one at a time and interleaved (one call of each tool per round,
// the order rotating),
// so every variant sees the same machine in the same run.
func benchLimits(bin, dir string, calls int) {
	variants := []struct{ name, settings string }{
		{"none", ``},
		{"rlimits", `{"limits":{"cpu":"10s","fileSize":"100MiB","openFiles":256}}`},
		{"cgroup", `{"limits":{"memory":"256MiB","processes":64}}`},
		{"landlock", `{"filesystem":{"read":["/usr","/lib","/lib64","/bin","/etc"],"write":["$MCP_CALL_TMPDIR"]}}`},
		{"netns", `{"network":false}`},
		{"all", `{"limits":{"memory":"256MiB","cpu":"10s","processes":64,"fileSize":"100MiB","openFiles":256},"filesystem":{"read":["/usr","/lib","/lib64","/bin","/etc"],"write":["$MCP_CALL_TMPDIR"]},"network":false}`},
	}
	var body strings.Builder
	var decl []string
	for _, v := range variants {
		fmt.Fprintf(&body, "tool_%s() { printf '%%s\\n' \"$1\"; }\n", v.name)
		e := fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}`, v.name)
		if v.settings != "" {
			e += `,"x-mcp-bashd":` + v.settings
		}
		decl = append(decl, e+"}")
	}
	sub := filepath.Join(dir, "limits")
	check(os.MkdirAll(sub, 0o755))
	script := filepath.Join(sub, "server.sh")
	check(os.WriteFile(script, []byte(body.String()), 0o755))
	check(os.WriteFile(filepath.Join(sub, "tools.json"), []byte(`{"tools":[`+strings.Join(decl, ",")+`]}`), 0o644))

	d := start(bin, script, dir)
	d.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	lat := make([][]time.Duration, len(variants))
	for i := 0; i < calls; i++ {
		// Each round starts with the next variant, so none always runs
		// right after the unsandboxed call (or first in a round).
		for k := range variants {
			j := (i + k) % len(variants)
			v := variants[j]
			t := time.Now()
			line := d.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s%d","method":"tools/call","params":{"name":%q,"arguments":{"x":1}}}`, v.name, i, v.name))
			lat[j] = append(lat[j], time.Since(t))
			if !strings.Contains(line, `"isError":false`) {
				fmt.Fprintf(os.Stderr, "bench: %s failed: %s", v.name, line)
				os.Exit(1)
			}
		}
	}
	d.stdin.Close()
	check(d.cmd.Wait())
	fmt.Printf("per-tool limits, %d calls of each, one at a time, interleaved:\n", calls)
	base := pct(lat[0], 50)
	for j, v := range variants {
		p50, p99 := pct(lat[j], 50), pct(lat[j], 99)
		fmt.Printf("  %-9s p50 %.2f ms  p99 %.2f ms  (p50 +%.2f ms)\n", v.name, ms(p50), ms(p99), ms(p50-base))
	}
}
