package supervisor

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// The values file (callRoot.Values) is a call's arguments decoded once, by
// the daemon that parsed and validated them already, into a bash function
// the shim's mcp_arg sources on first use: reading an argument then costs
// no process (no jq, no python) and is exact for every string, because a
// single-quoted bash word holds any byte but NUL. It defines
//
//	__mcpbashd_av() { case $1 in
//	'NAME') __mcpbashd_v='TVALUE' ;;
//	...
//	*) return 1 ;; esac; }
//
// where T is the value's kind: s string (VALUE the string itself), n
// number (as $1 writes it), b boolean, z null (VALUE empty), o
// object or a array (VALUE compact JSON), or ! a string holding a NUL,
// which bash cannot hold (mcp_arg refuses it, naming the argument). Keys
// are the top-level names, then every nested path as NAME.KEY or NAME.N
// (an array's index), parents before children; a name is matched first as
// the whole top-level name, so a top-level "a.b" wins over a's b. Nested
// paths are written while the file stays within valuesBudget (each level
// repeats its children's bytes); past it the catch-all returns 3 instead
// of 1, and mcp_arg says the path cannot be indexed rather than that it
// is absent.

// valuesBudget bounds the nested paths' bytes: the top level is always
// written whole.
func valuesBudget(args int) int { return 4*args + 1<<20 }

// argValues is the values file for a call's arguments JSON; arguments
// that are not a JSON object have no names (mcp_arg finds none).
func argValues(args []byte) []byte {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil || top == nil {
		return []byte("__mcpbashd_av() { return 1; }\n")
	}
	keys := sortedKeys(top)
	var b bytes.Buffer
	b.Grow(len(args) + 256) // the top level is about the arguments' size
	b.WriteString("__mcpbashd_av() { case $1 in\n")
	for _, k := range keys {
		writeValue(&b, k, top[k])
	}
	budget := b.Len() + valuesBudget(len(args))
	complete := true
	for _, k := range keys {
		if !writeNested(&b, k, top[k], budget) {
			complete = false
			break
		}
	}
	if complete {
		b.WriteString("*) return 1 ;; esac; }\n")
	} else {
		b.WriteString("*) return 3 ;; esac; }\n")
	}
	return b.Bytes()
}

// writeNested writes the paths below name, depth first; false once the
// buffer passed budget.
func writeNested(b *bytes.Buffer, name string, raw json.RawMessage, budget int) bool {
	raw = bytes.TrimSpace(raw)
	if strings.IndexByte(name, 0) >= 0 {
		return true
	}
	if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
		return true
	}
	var kids []string
	var vals []json.RawMessage
	if raw[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return true
		}
		for _, k := range sortedKeys(m) {
			kids, vals = append(kids, name+"."+k), append(vals, m[k])
		}
	} else {
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return true
		}
		for i, v := range a {
			kids, vals = append(kids, name+"."+strconv.Itoa(i)), append(vals, v)
		}
	}
	for i := range kids {
		writeValue(b, kids[i], vals[i])
		if b.Len() > budget {
			return false
		}
	}
	for i := range kids {
		if !writeNested(b, kids[i], vals[i], budget) {
			return false
		}
	}
	return true
}

// writeValue writes one case arm: 'KEY') __mcpbashd_v='TVALUE' ;;
func writeValue(b *bytes.Buffer, key string, raw json.RawMessage) {
	if strings.IndexByte(key, 0) >= 0 {
		return // no bash word can name it, and a NUL would end the file's word
	}
	raw = bytes.TrimSpace(raw)
	kind, text := "z", ""
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		kind, text = "s", s
		if strings.IndexByte(s, 0) >= 0 {
			kind, text = "!", ""
		}
	case string(raw) == "true" || string(raw) == "false":
		kind, text = "b", string(raw)
	case raw[0] == '{' || raw[0] == '[':
		var c bytes.Buffer
		if json.Compact(&c, raw) == nil {
			raw = c.Bytes()
		}
		kind, text = "a", string(raw)
		if raw[0] == '{' {
			kind = "o"
		}
	default:
		kind, text = "n", string(raw)
	}
	b.WriteString(shellQuote(key))
	b.WriteString(") __mcpbashd_v=")
	b.WriteString(shellQuote(kind + text))
	b.WriteString(" ;;\n")
}

// shellQuote is s as one single-quoted bash word: every byte but ' stands
// for itself there; ' is closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sortedKeys are an object's keys in byte order: the file is the same
// for the same arguments.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
