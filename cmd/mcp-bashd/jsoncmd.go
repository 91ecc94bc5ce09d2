package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// jsonCommand backs the shim's jq-free helpers:
//
//	json response ID RESULT          create_response (bash-mcp-sdk)
//	json response ID < RESULT        create_response (the 2026 SDK's form)
//	json error ID CODE MESSAGE [DATA] create_error_response
//	json read-file FILE              read_json_file
//	json call-request ID ...         handle_tools_call's request (either SDK's form)
func jsonCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, format+"\n", a...)
		return 1
	}
	if len(args) == 0 {
		return fail("usage: mcp-bashd json response|error|read-file ...")
	}
	switch args[0] {
	case "response":
		if len(args) != 2 && len(args) != 3 {
			return fail("usage: mcp-bashd json response ID [RESULT] (without RESULT: read from stdin)")
		}
		id, err := compact(args[1])
		if err != nil {
			return fail("create_response: id is not JSON: %v", err)
		}
		if len(args) == 2 {
			return sdk2026Response(id, stdin, stdout, fail)
		}
		res, err := compact(args[2])
		if err != nil {
			return fail("create_response: result is not JSON: %v", err)
		}
		stdout.Write(wire.ResultLine(id, res))
	case "error":
		if len(args) != 4 && len(args) != 5 {
			return fail("usage: mcp-bashd json error ID CODE MESSAGE [DATA]")
		}
		id, err := compact(args[1])
		if err != nil {
			return fail("create_error_response: id is not JSON: %v", err)
		}
		code, err := strconv.Atoi(args[2])
		if err != nil {
			return fail("create_error_response: code is not an integer: %q", args[2])
		}
		var data json.RawMessage
		if len(args) == 5 && args[4] != "" {
			if data, err = compact(args[4]); err != nil {
				return fail("create_error_response: data is not JSON: %v", err)
			}
		}
		stdout.Write(wire.ErrorLine(id, code, args[3], data))
	case "call-request":
		stdout.Write(append(mcp.ToolsCallRequest(args[1:]), '\n'))
	case "read-file":
		if len(args) != 2 {
			return fail("usage: mcp-bashd json read-file FILE")
		}
		obj, err := catalog.ReadObjectFile(args[1])
		if err != nil {
			return fail("%v", err)
		}
		stdout.Write(append(obj, '\n'))
	case "validate":
		if len(args) != 4 {
			return fail("usage: mcp-bashd json validate TOOLS_FILE NAME ARGS_JSON")
		}
		if msg := catalog.ValidateArguments(args[1], args[2], []byte(args[3])); msg != "" {
			fmt.Fprint(stdout, msg)
			return 1
		}
	default:
		return fail("mcp-bashd json: unknown helper %q", args[0])
	}
	return 0
}

// sdk2026Response is the 2026 SDK's create_response: the result object
// from stdin, with resultType and config.json's serverInfo (the same
// serverInfo the daemon puts in its own 2026 results) added.
func sdk2026Response(id json.RawMessage, stdin io.Reader, stdout io.Writer, fail func(string, ...any) int) int {
	in, err := io.ReadAll(stdin)
	if err != nil {
		return fail("create_response: read the result from stdin: %v", err)
	}
	cfg := os.Getenv("MCP_CONFIG_FILE")
	if cfg == "" {
		cfg = "config.json"
	}
	res, err := mcp.SDK2026Result(in, catalog.LoadConfig(cfg, false).ServerInfo())
	if err != nil {
		return fail("create_response: %v", err)
	}
	stdout.Write(wire.ResultLine(id, res))
	return 0
}

// compact checks that s is exactly one JSON value and compacts it.
func compact(s string) (json.RawMessage, error) {
	var v json.RawMessage
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	return wire.Compact(v), nil
}
