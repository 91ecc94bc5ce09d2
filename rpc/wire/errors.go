package wire

import "encoding/json"

// JSON-RPC 2.0 error codes, and those the 2026-07-28 MCP revision adds.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603

	// CodeServerClosing answers a request that arrives while the server
	// shuts down (the official Go SDK's jsonrpc2 ErrServerClosing).
	CodeServerClosing = -32004

	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
)

// Error is the error object of a JSON-RPC error response: the one shape
// every protocol error takes from where it is found to where it is
// written (the HTTP status is derived from Code, never re-parsed).
type Error struct {
	Code    int
	Message string
	Data    json.RawMessage // nil: left out, as the SDK leaves it out
}

func (e *Error) Error() string { return e.Message }

// Errorf is an Error without data.
func Errorf(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// Err is the gate's rejection as an Error.
func (e *GateError) Err() *Error { return &Error{Code: e.Code, Message: e.Message} }
