package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Arguments builds a call's arguments from the command line (mcp-bashd
// call): one JSON object as is, or key=value pairs typed by the tool's
// inputSchema in toolsFile — n=3 is a number where the schema says
// integer or number, a string otherwise; arrays and objects are JSON.
func Arguments(toolsFile, tool string, kvs []string) (json.RawMessage, error) {
	if len(kvs) == 1 && strings.HasPrefix(strings.TrimSpace(kvs[0]), "{") {
		var v json.RawMessage
		if err := json.Unmarshal([]byte(kvs[0]), &v); err != nil {
			return nil, fmt.Errorf("arguments are not JSON: %v", err)
		}
		return v, nil
	}
	types := map[string]string{}
	if tools, err := InspectTools(toolsFile); err == nil {
		for _, t := range tools {
			if t.Name == tool {
				for _, a := range t.Args {
					types[a.Name] = a.Type
				}
			}
		}
	}
	args := map[string]json.RawMessage{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q is not key=value", kv)
		}
		args[k] = typedValue(types[k], v)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	return b, nil
}

func typedValue(typ, v string) json.RawMessage {
	asString, _ := json.Marshal(v)
	switch {
	case typ == "string":
		return asString
	case typ == "integer" || typ == "number":
		// A JSON number literal, exactly (not Go's wider float syntax).
		var n json.Number
		if json.Unmarshal([]byte(v), &n) == nil {
			return json.RawMessage(v)
		}
	case typ == "boolean":
		if v == "true" || v == "false" {
			return json.RawMessage(v)
		}
	case typ == "array" || typ == "object" || typ == "null":
		if json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
	case typ == "" || strings.Contains(typ, "|"):
		// No or several declared types: JSON if it is JSON, else a string.
		if json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
	}
	return asString
}
