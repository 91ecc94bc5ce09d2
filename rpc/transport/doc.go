// Package transport is the seam between the MCP server and the ways
// messages reach it. A transport (rpc/stdio, rpc/streamhttp) yields
// Connections; a Connection yields Requests, each decoded once — the
// JSON-RPC message, its _meta, the protocol era it belongs to, the legacy
// session it runs in, the HTTP header checks — and each carrying the
// Stream its notifications and its one Response go to. The server never
// learns which transport it talks to; a transport never calls into the
// server beyond the function it was given to serve a Connection.
//
// Writing to a client may block (a client that stops reading), so every
// transport bounds it: a write waits for the client only until the
// Connection is abandoned (shutdown) or, on HTTP, until the client has
// taken nothing for the write timeout. A Stream's Respond returns once the
// answer is written or given up on — which is what lets the server keep a
// call's slot until then.
//
// It imports only rpc/wire; the server and the transports import it.
package transport
