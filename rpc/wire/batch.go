package wire

import (
	"bytes"

	"github.com/mcp-bashd/mcp-bashd/internal/jq"
)

// BatchVersion is the one protocol revision that has JSON-RPC batches:
// 2025-03-26 added them ("MUST support receiving JSON-RPC batches") and
// 2025-06-18 removed them. Every other revision answers an array with the
// gates' -32600 "expected a JSON object", as the bash SDK did.
const BatchVersion = "2025-03-26"

// Batch splits a line (or HTTP body) that is one JSON array into the bytes
// of its members, each to go through Parse as a line of its own; ok is
// false when data is anything else, and Parse's answer stands. NUL bytes
// and a leading byte order mark are dropped first, as Parse drops them. An
// empty array comes back with ok and no members: the caller answers it
// with EmptyBatch.
func Batch(data []byte) (members [][]byte, ok bool) {
	if bytes.IndexByte(data, 0) >= 0 {
		data = bytes.ReplaceAll(data, []byte{0}, nil)
	}
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	count, doc, valid := jq.Scan(data)
	if !valid || count != 1 || data[doc] != '[' {
		return nil, false
	}
	members = [][]byte{}
	for sp := range jq.Elements(data, doc) {
		members = append(members, data[sp.Start:sp.End:sp.End])
	}
	return members, true
}

// EmptyBatch is JSON-RPC 2.0's answer to "[]": one Invalid Request error
// with a null id, not an array.
func EmptyBatch() []byte {
	return ErrorLine([]byte(jsonNull), CodeInvalidRequest, "Invalid Request: an empty JSON-RPC batch", nil)
}

// InitializeInBatch is the error entry for an initialize request found in
// a batch ("The initialize request MUST NOT be part of a JSON-RPC batch").
func InitializeInBatch() *Error {
	return InvalidRequest("initialize must not be part of a JSON-RPC batch")
}
