// Package mcp is the MCP server: it serves Connections (rpc/transport),
// answers each request by its era (legacy initialize-negotiated revisions,
// or the stateless 2026-07-28), keeps each connection's in-flight calls,
// runs tools through the supervisor, and shapes their outcomes into
// CallToolResults — the one place MCP wording lives.
//
// Concurrency model: per connection, one reader goroutine reads requests
// in order and answers the cheap methods itself, so ping is never queued
// behind a tool. A tools/call is registered in the connection's in-flight
// table before the reader moves on (a cancellation on the next line finds
// it) and runs on its own goroutine, bounded by a server-wide semaphore. A
// tools/list that needs the tools directory listed again runs on its own
// goroutine too. The in-flight table is one state changed through one
// function under one lock (conn.update).
//
// A tool result is assembled as parts (body.go) and rendered only into the
// line that answers the call: its output is held once as the tool wrote it
// and once as that line, and its text, once escaped, stays within the
// output cap.
//
// The catalog is read from a catalog.Source: requests see every edit to
// tools.json and config.json at once (a stat per request, as the SDK read
// its files each time), and Watch reloads the script and tells clients the
// tools changed.
//
// It imports rpc/wire, rpc/transport, rpc/catalog, rpc/metrics and
// supervisor; never a concrete transport, and nothing imports it but
// cmd/mcp-bashd.
package mcp
