// Package rpc owns the JSON-RPC connection: framing (one JSON message per
// line, bounded memory), the bash SDK's request gates, the MCP methods a
// tools-only server answers, and the table of in-flight calls.
//
// Concurrency model: one reader goroutine reads and gates lines in order
// and answers the cheap methods itself, so ping and tools/list are never
// queued behind a tool. Each tools/call is registered in the in-flight
// table before the reader moves on (a cancellation on the next line finds
// it) and runs on its own goroutine, bounded by a semaphore. Responses are
// written whole, one at a time, under one mutex; they carry their ids and
// may leave in any order. After a write fails (the client closed our
// stdout) nothing more is written and OutputDead is closed.
//
// tools.json and config.json are re-read when their stat changes, so an
// edit is seen at the next request; each tool's inputSchema is compiled
// once per version of the file.
package rpc
