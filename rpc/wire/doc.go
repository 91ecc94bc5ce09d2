// Package wire owns JSON-RPC as text: framing one message per line with
// bounded memory (LineReader), the bash SDK's request gates reproduced
// byte for byte (Parse), the response and notification lines printed as
// jq printed them (ResultLine, ErrorLine, NotificationLine; ResultLineBody
// renders a result the server assembled straight into its line), the error
// type and codes every layer uses (Error), and the member-level helpers
// for JSON the daemon reads and writes in key order (SplitObject, Object).
//
// Everything here is a pure function of its input — no I/O beyond the
// reader LineReader is given, no state — which is what lets the fuzz
// targets (FuzzParse, FuzzLineReader) cover it. It imports internal/jq
// only; nothing of MCP (eras, sessions, tools) belongs here.
package wire
