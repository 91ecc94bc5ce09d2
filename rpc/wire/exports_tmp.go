package wire

import "encoding/json"

// Temporary until the jq encoder lands in its own package.

func AppendStringBody(b []byte, s string) []byte { return appendJQStringBody(b, jqValidUTF8(s)) }
func ValidUTF8(s string) string                  { return jqValidUTF8(s) }
func ResultLineTrusted(id, result json.RawMessage) []byte {
	return resultLineTrusted(id, result)
}
