package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// ReadObjectFile returns the single JSON object a file holds, compacted;
// anything else (missing, empty, several documents, not an object) is an
// error naming the file. It backs the shim's read_json_file.
func ReadObjectFile(path string) (json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("File not found or unreadable: %s", path)
	}
	obj, err := onlyObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s does not hold exactly one JSON object: %v", path, err)
	}
	return obj, nil
}

// Compact returns v without insignificant whitespace.
func Compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}
