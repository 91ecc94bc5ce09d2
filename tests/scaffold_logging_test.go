package tests

// Issue 24 item 8: a call's mcp_log lines reach a client that never sent
// logging/setLevel. The spec leaves the default to the server ("If no
// logging/setLevel request has been sent from the client, the server MAY
// decide which messages to send") and requires the logging capability
// of a server that sends any: mcp-bashd sends info and above once
// config.json declares logging, and the config.json `new` writes does.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

func TestScaffoldDeclaresLoggingSoMcpLogReachesClients(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "myserver")
	if out, err := exec.Command(harness.Binary, "new", dir).CombinedOutput(); err != nil {
		t.Fatalf("new: %v\n%s", err, out)
	}
	config, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(config, &c); err != nil || c.Capabilities["logging"] == nil {
		t.Fatalf("the scaffold's config.json does not declare logging: %s", config)
	}
	// A tool that logs, served with that config.json, to a client that
	// sets no level.
	srv := harness.WriteFiles(t, map[string]string{
		"server.sh":   "tool_say() { mcp_log info 'from the tool'; mcp_log debug 'below info'; echo done; }\n",
		"tools.json":  harness.ToolsJSON("say"),
		"config.json": string(config),
	})
	s := harness.Start(t, harness.Options{Args: []string{filepath.Join(srv, "server.sh")}, CleanEnv: true})
	s.RoundTrip(harness.InitLine)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"say","arguments":{}}}`)
	var got []string
	for {
		line := string(s.Recv())
		if strings.Contains(line, `"id":1`) {
			break
		}
		got = append(got, line)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"method":"notifications/message"`) || !strings.Contains(got[0], `"data":"from the tool"`) {
		t.Errorf("notifications before the result, want the info line only: %q", got)
	}
}
