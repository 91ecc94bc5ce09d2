package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"

	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// The two bash SDKs answer a few inputs differently, and each server keeps
// the dialect of the SDK it was written for. A server whose config.json
// declares supportedVersions has the 2026 SDK's shape (a bash-mcp-sdk
// config never does): for it
//   - a line of whitespace gets no answer (rpc/stdio, SkipBlank), where
//     bash-mcp-sdk answered -32700;
//   - in the 2026-07-28 era, a tool name with a character other than a
//     letter, a digit or _ is -32600 "Invalid tool name format: <name>"
//     (the SDK's `^[a-zA-Z0-9_]+$`, checked before the lookup), where
//     bash-mcp-sdk answered -32602 "Invalid tool name: <name>";
//   - a tool's result carries no isError unless it is true, a failing
//     bash function tool's text is its output as it is ("Tool 'NAME'
//     failed with exit status N" when it printed nothing) where
//     bash-mcp-sdk prefixed "Error executing NAME: ", and its stderr goes
//     to the daemon's stderr instead of into the result: that SDK
//     captured a tool's stdout only (toolresult.go);
//   - tools/list's ttlMs and cacheScope come from the tools file, then
//     MCP_DEFAULT_TTL_MS / MCP_DEFAULT_CACHE_SCOPE, never from config.json
//     (catalog's ListCache);
//   - a tool's arguments are printed by jq once (tojson), not twice; the
//     two differ only past decNumber's range (toolArgs).
// Everything else is answered the same way for both.

// SDK2026Dialect reports whether the server keeps the 2026 SDK's dialect
// now (its configuration may change while it runs).
func (s *Server) SDK2026Dialect() bool { return s.src.Config().DeclaresSupportedVersions() }

// sdk2026Name is the 2026 SDK's tool-name rule: a leading digit is allowed.
var sdk2026Name = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

// sdk2026NameError is the 2026 SDK's answer to a malformed tool name, nil
// for a name it accepts.
func sdk2026NameError(name string) *wire.Error {
	if sdk2026Name.MatchString(name) {
		return nil
	}
	return wire.NewError(wire.CodeInvalidRequest, "Invalid tool name format: "+name)
}

// The shim's helpers also take the 2026 SDK's calling conventions beside
// bash-mcp-sdk's, told apart by their arguments: each SDK's form is an
// error (or meaningless) in the other one.

// SDK2026Result is the 2026 SDK's create_response applied to result (its
// 0.4.1 form: `create_response ID` with the result on stdin): resultType
// becomes "complete" unless the result has one that is neither null nor
// false, and _meta (an object, or {} when absent, null or false) gets
// serverInfo under io.modelcontextprotocol/serverInfo, as jq's
// `.resultType // "complete"` and `(._meta // {}) + {…}` did. A result
// that is not an object, or whose _meta is another value, is an error,
// where the SDK's jq failed.
func SDK2026Result(result, serverInfo json.RawMessage) (json.RawMessage, error) {
	ms, err := wire.SplitObject(result)
	if err != nil || len(bytes.TrimSpace(result)) == 0 {
		return nil, errors.New("the result is not a JSON object")
	}
	if dec := json.NewDecoder(bytes.NewReader(result)); dec.Decode(new(json.RawMessage)) == nil && dec.More() {
		return nil, errors.New("the result is more than one JSON value")
	}
	ms = lastValues(ms)
	rt, meta := -1, -1
	for i, m := range ms {
		switch m.Key {
		case "resultType":
			rt = i
		case "_meta":
			meta = i
		}
	}
	if rt < 0 {
		ms = append(ms, wire.Member{Key: "resultType"})
		rt = len(ms) - 1
	}
	if b := wire.FirstByte(ms[rt].Val); b == 0 || b == 'n' || b == 'f' {
		ms[rt].Val = json.RawMessage(`"complete"`)
	}
	info := wire.Member{Key: transport.MetaInfo, Val: serverInfo}
	if meta < 0 {
		ms = append(ms, wire.Member{Key: "_meta", Val: wire.Object(info)})
		return wire.Object(ms...), nil
	}
	switch wire.FirstByte(ms[meta].Val) {
	case 'n', 'f':
		ms[meta].Val = wire.Object(info)
	case '{':
		inner, err := wire.SplitObject(ms[meta].Val)
		if err != nil {
			return nil, errors.New("the result's _meta is not a JSON object")
		}
		inner = lastValues(append(inner, info))
		ms[meta].Val = wire.Object(inner...)
	default:
		return nil, errors.New("the result's _meta is not a JSON object")
	}
	return wire.Object(ms...), nil
}

// lastValues keeps one member per key, at its first position with its
// last value, as a jq object holds a repeated key.
func lastValues(ms []wire.Member) []wire.Member {
	at := make(map[string]int, len(ms))
	out := ms[:0:0]
	for _, m := range ms {
		if i, ok := at[m.Key]; ok {
			out[i].Val = m.Val
			continue
		}
		at[m.Key] = len(out)
		out = append(out, m)
	}
	return out
}

// ToolsCallRequest is the request line handle_tools_call dispatches, from
// its arguments in either SDK's convention:
//
//	ID PARAMS          bash-mcp-sdk: PARAMS is the params object ("" or
//	                   absent: {});
//	ID NAME [ARGS]     the 2026 SDK: the tool's name and its arguments
//	                   JSON ("" or absent: none), sent as a 2026-07-28
//	                   request, so the answer has that SDK's shape.
//
// Two arguments are the 2026 form when the second is not JSON (a tool
// name). ID and the JSON values are pasted as given, as the shim always
// did: the daemon answers what is malformed as it answers a client.
func ToolsCallRequest(args []string) []byte {
	id := "null"
	if len(args) > 0 && args[0] != "" {
		id = args[0]
	}
	b := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":`)
	if len(args) < 3 && (len(args) < 2 || args[1] == "" || json.Valid([]byte(args[1]))) {
		params := "{}"
		if len(args) > 1 && args[1] != "" {
			params = args[1]
		}
		return append(append(b, params...), '}')
	}
	b = append(b, `{"name":`...)
	b = append(b, wire.Quote(args[1])...)
	if len(args) > 2 && args[2] != "" {
		b = append(b, `,"arguments":`...)
		b = append(b, args[2]...)
	}
	b = append(b, `,"_meta":{"`+transport.MetaVersion+`":"`+transport.ModernVersion+`","`+transport.MetaCaps+`":{}}}}`...)
	return b
}
