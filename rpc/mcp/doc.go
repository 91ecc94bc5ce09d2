// Package mcp is the MCP server: it serves Connections (rpc/transport),
// answers each request by its era (legacy initialize-negotiated revisions,
// or the stateless 2026-07-28), keeps each connection's in-flight calls,
// runs tools through the supervisor, and shapes their outcomes into
// CallToolResults — the one place MCP wording lives.
//
// Shape: a Server holds what every connection shares (catalog,
// supervisor, options, task store, admission state, listen streams, the
// questions asked of clients); a session (session.go) is the server's side
// of one connection and answers its requests. Every request method is one
// row of the method table (methods.go): its eras, whether it runs bash,
// what it needs of the catalog and the client, its params type and its
// handler — era gating, those checks and -32601 come from the table, and
// a request's params are decoded once, into its method's type, before the
// handler sees them (a tools/call's travel on in its call context,
// toolCall).
//
// Concurrency model: per connection, one reader goroutine reads requests
// in order and answers the cheap methods itself, so ping is never queued
// behind a tool. A tools/call — and a resources/read, prompts/get or
// completion/complete, which run bash functions the same way (funcs.go) —
// is registered in the connection's in-flight table before the reader
// moves on (a cancellation on the next line finds it) and runs on its own
// goroutine, bounded by the server's slots. Change notifications
// (resources/updated, list_changed) reach session-era connections and
// 2026-07-28 subscriptions/listen streams (listen.go). A
// tools/list that needs the tools directory listed again runs on its own
// goroutine too. Admission — the busy bound, the slots, each connection's
// in-flight table — is one state changed through one function under one
// lock (admission.go), for calls, resource reads, prompts, completions,
// tasks and batch members alike. In sequential mode
// (Options.Sequential) a connection's loop handles one request at a time
// instead, and only a cancellation of the running call overtakes the
// queue (sequential.go).
//
// A tool result is assembled as parts (body.go) and rendered only into the
// line that answers the call: its output is held once as the tool wrote it
// and once as that line, and its text, once escaped, stays within the
// output cap.
//
// A slow client is held back, never buffered for: a call keeps its
// concurrency slot until its answer is written or queued within its
// transport's bounded budget (a transport's Respond returns only then),
// so answers waiting for a client never outnumber the slots (plus that
// budget) — nor do the answers a JSON-RPC batch gathers before its array
// is written; once they hold them all no call starts, the calls refused beyond
// MaxPending are answered by the reader, and the reader — blocked on that
// answer — stops reading. It is logged ("every call slot waits for the
// client to read an answer").
//
// Shutdown is bounded whatever the clients do. From Stop on every request
// is answered with -32004 "Server is shutting down" and nothing new is
// counted (counting and Stop share one lock); in-flight calls get the
// drain, then are cancelled; the answers being written get flushBudget,
// then every connection is abandoned (its writes return at once). What is
// left ends within the supervisor's cancel path.
//
// The catalog is read from a catalog.Source: requests see every edit to
// tools.json and config.json at once (a stat per request, as the SDK read
// its files each time), and Watch reloads the script and tells clients the
// tools changed.
//
// A server keeps the dialect of the bash SDK it was written for where the
// two answer differently (dialect.go: a config.json that declares
// supportedVersions is the 2026 SDK's), and the shim's helpers take both
// SDKs' calling conventions (SDK2026Result, ToolsCallRequest).
//
// It imports rpc/wire, rpc/transport, rpc/catalog, rpc/metrics and
// supervisor; never a concrete transport, and nothing imports it but
// cmd/mcp-bashd.
package mcp
