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

// ValidateArguments is the SDK's validate_tool_arguments: it checks args
// against the inputSchema toolsFile declares for name and returns the
// rejection text, or "" when the arguments are valid.
func ValidateArguments(toolsFile, name string, args []byte) string {
	cat := loadCatalog(toolsFile)
	prefix := "Cannot validate arguments for " + name + ": "
	switch {
	case cat.err != nil:
		return prefix + "the tool list at " + cat.path + " is missing or does not hold one JSON object."
	case cat.unusable:
		return prefix + "the tool list at " + cat.path + " does not hold a usable tools list."
	}
	decl := cat.declared(name)
	switch {
	case len(decl) == 0:
		return prefix + "the tool list at " + cat.path + " does not declare it."
	case len(decl) > 1:
		return prefix + "the tool list at " + cat.path + " declares it more than once."
	case !decl[0].hasSchema:
		return prefix + "its entry in " + cat.path + " declares no inputSchema."
	case decl[0].schemaErr != nil:
		return decl[0].schemaErr.Error()
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte(`{}`)
	}
	if err := decl[0].schema.Validate(args); err != nil {
		return err.Error()
	}
	return ""
}
