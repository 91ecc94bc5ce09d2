// Package tests holds mcp-bashd's end-to-end tests: the real binary, real
// bash, real pipes, real clients. They start and drive the daemon through
// tests/internal/harness, which checks every response line against the
// official MCP schema of the negotiated revision.
package tests

import (
	"os"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
