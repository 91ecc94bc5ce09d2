package wire

import (
	"encoding/json"
	"fmt"
)

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

// Errorf is an Error without data; msg is taken as it is, never as a
// format.
//
// Deprecated: use NewError, or the constructor of the error (InvalidParams,
// MethodNotFound, Busy, …) so its wording lives in one place.
func Errorf(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// Err is the gate's rejection as an Error.
func (e *GateError) Err() *Error { return &Error{Code: e.Code, Message: e.Message} }

// The constructors below are where each MCP error's wording and shape
// live; the server builds its errors only through them.

// NewError is an Error without data (Errorf's name for new code: the
// message is taken as it is, never as a format).
func NewError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// InvalidParams is -32602 "Invalid params: why".
func InvalidParams(why string) *Error { return NewError(CodeInvalidParams, "Invalid params: "+why) }

// InvalidParamsf is InvalidParams with a printf-style why.
func InvalidParamsf(format string, args ...any) *Error {
	return InvalidParams(fmt.Sprintf(format, args...))
}

// InvalidRequest is -32600 "Invalid Request: why".
func InvalidRequest(why string) *Error { return NewError(CodeInvalidRequest, "Invalid Request: "+why) }

// MethodNotFound is -32601 for a method the request's revision does not
// have (or the server does not offer).
func MethodNotFound(method string) *Error {
	return NewError(CodeMethodNotFound, "Method not found: "+method)
}

// Internal is -32603 with msg as it is.
func Internal(msg string) *Error { return NewError(CodeInternal, msg) }

// Busy is the -32603 refusing work beyond the server's bound: "Server
// busy: why" (clients and operators grep the prefix).
func Busy(why string) *Error { return NewError(CodeInternal, "Server busy: "+why) }

// ServerClosing answers a request that arrives once shutdown began.
func ServerClosing() *Error { return NewError(CodeServerClosing, "Server is shutting down") }

// HeaderMismatch is 2026-07-28's -32020: an HTTP header disagrees with
// the body.
func HeaderMismatch(why string) *Error { return NewError(CodeHeaderMismatch, "Header mismatch: "+why) }

// MissingCapability is 2026-07-28's -32021: "Missing required client
// capability" then what, with data.requiredCapabilities the
// ClientCapabilities object the request lacked.
func MissingCapability(what string, required json.RawMessage) *Error {
	msg := "Missing required client capability"
	if what != "" {
		msg += what
	}
	return &Error{Code: CodeMissingCapability, Message: msg,
		Data: Object(Member{Key: "requiredCapabilities", Val: required})}
}

// MissingExtension is MissingCapability for an extension of 2026's
// clientCapabilities.extensions.
func MissingExtension(what, extension string) *Error {
	return MissingCapability(what, Object(Member{Key: "extensions", Val: Object(Member{Key: extension, Val: json.RawMessage(`{}`)})}))
}

// UnsupportedVersion is 2026-07-28's -32022 with the versions the server
// speaks in data.
func UnsupportedVersion(requested string, supported []string) *Error {
	return &Error{Code: CodeUnsupportedVersion, Message: "Unsupported protocol version: " + requested,
		Data: Marshal(map[string]any{"requested": requested, "supported": supported})}
}
