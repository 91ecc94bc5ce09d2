package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// readObjectFile reads a file that must hold exactly one JSON object and
// returns its members in document order.
func readObjectFile(path string) ([]wire.Member, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := onlyObject(data)
	if err != nil {
		return nil, err
	}
	return wire.SplitObject(doc)
}

// onlyObject checks that data holds exactly one JSON document and that it
// is an object; it returns it compacted.
func onlyObject(data []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not valid JSON: %s", jsonErrorAt(data, err))
	}
	if dec.More() {
		return nil, errors.New("holds more than one JSON document")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("holds more than one JSON document")
	}
	if wire.FirstByte(doc) != '{' {
		return nil, errors.New("is not a JSON object")
	}
	return wire.Compact(doc), nil
}

// jsonErrorAt names the line and column of a JSON syntax error, so a log
// line points at the spot in tools.json or config.json.
func jsonErrorAt(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// A file cut short (a save interrupted): the error is at its end.
		lines := bytes.Count(data, []byte("\n"))
		if !bytes.HasSuffix(data, []byte("\n")) {
			lines++
		}
		return fmt.Sprintf("line %d (end of file): unexpected end of JSON", lines)
	}
	if !errors.As(err, &se) {
		return err.Error()
	}
	off := int(se.Offset)
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

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

// Lookup finds the one usable declaration of name in tools.json. When there
// is none it returns the SDK's reason, to follow "Cannot validate arguments
// for NAME: ", and found false when tools.json simply does not declare it.
func (f *ToolsFile) Lookup(name string) (t *Tool, found bool, why string) {
	switch {
	case f.Err != nil:
		return nil, true, "the tool list at " + f.Path + " is missing or does not hold one JSON object."
	case f.Unusable:
		return nil, true, "the tool list at " + f.Path + " does not hold a usable tools list."
	}
	decl := f.Declared(name)
	switch {
	case len(decl) == 0:
		return nil, false, "the tool list at " + f.Path + " does not declare it."
	case len(decl) > 1:
		return nil, true, "the tool list at " + f.Path + " declares it more than once."
	}
	return decl[0], true, ""
}

// ValidateArguments is the SDK's validate_tool_arguments: it checks args
// against the inputSchema toolsFile declares for name and returns the
// rejection text, or "" when the arguments are valid.
func ValidateArguments(toolsFile, name string, args []byte) string {
	t, _, why := LoadTools(toolsFile).Lookup(name)
	prefix := "Cannot validate arguments for " + name + ": "
	switch {
	case why != "":
		return prefix + why
	case !t.HasSchema:
		return prefix + "its entry in " + toolsFile + " declares no inputSchema."
	case t.SchemaErr != nil:
		return t.SchemaErr.Error()
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte(`{}`)
	}
	if err := t.Schema.Validate(args); err != nil {
		return err.Error()
	}
	return ""
}
