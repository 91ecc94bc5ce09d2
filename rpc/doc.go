// Package rpc holds nothing itself: its subpackages are the protocol side
// of mcp-bashd, one concern each, imported downward only:
//
//	wire        JSON-RPC text: line framing, the bash SDK's request gates,
//	            envelopes, error codes (pure; fuzzed)
//	transport   the seam: Connection, Request, Stream, Response, Session, Era
//	stdio       the stdio transport
//	streamhttp  the Streamable HTTP transport (sessions, SSE, header checks)
//	catalog     tools.json, config.json, the tools directory; published
//	            immutable; the command line's inspections and lint
//	metrics     call counters and their Prometheus text
//	mcp         the server: dispatch by era, in-flight calls, tool results
//
// mcp imports catalog, metrics, transport and wire; stdio and streamhttp
// import transport and wire; nothing below imports mcp or a transport.
package rpc
