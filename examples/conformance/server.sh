#!/usr/bin/env bash
# The tools the official MCP conformance suite
# (@modelcontextprotocol/conformance) looks for, written as plain bash
# functions. Serve it over Streamable HTTP:
#
#   mcp-bashd --http examples/conformance/server.sh
#
# tests/conformance/run.sh does that and runs the suite against it. The
# mcp_* helpers (mcp_progress, mcp_log, mcp_text, mcp_image, mcp_audio,
# mcp_resource) come from mcp-bashd's shim, which the daemon loads before
# this file; they reach the daemon through files private to the call, so
# stdout stays the plain-text result.

# conformance_png FILE — a 1x1 red PNG (the suite's "minimal test image").
conformance_png() {
    printf '\x89PNG\r\n\x1a\n'
    printf '\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90\x77\x53\xde'
    printf '\x00\x00\x00\x0cIDAT\x08\xd7\x63\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\x18\xdd\x8d\xb0'
    printf '\x00\x00\x00\x00IEND\xae\x42\x60\x82'
}

# conformance_wav — 8 samples of silence: 8 kHz, mono, 8-bit PCM.
conformance_wav() {
    printf 'RIFF\x2c\x00\x00\x00WAVE'
    printf 'fmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x40\x1f\x00\x00\x01\x00\x08\x00'
    printf 'data\x08\x00\x00\x00\x80\x80\x80\x80\x80\x80\x80\x80'
}

# conformance_pause — the ~50 ms the suite asks for between notifications,
# so a client sees them arrive while the call runs.
conformance_pause() {
    sleep 0.05
}

tool_test_simple_text() {
    printf 'This is a simple text response for testing.\n'
}

tool_test_image_content() {
    local png="$MCP_CALL_TMPDIR/red.png"
    conformance_png >"$png"
    mcp_image "$png" image/png
}

tool_test_audio_content() {
    local wav="$MCP_CALL_TMPDIR/silence.wav"
    conformance_wav >"$wav"
    mcp_audio "$wav" audio/wav
}

tool_test_embedded_resource() {
    mcp_resource test://embedded-resource text/plain 'This is an embedded resource content.'
}

tool_test_multiple_content_types() {
    local png="$MCP_CALL_TMPDIR/red.png"
    conformance_png >"$png"
    mcp_text 'Multiple content types test:'
    mcp_image "$png" image/png
    mcp_resource test://mixed-content-resource application/json '{"test":"data","value":123}'
}

tool_test_error_handling() {
    printf 'This tool intentionally returns an error for testing\n'
    return 1
}

tool_test_tool_with_progress() {
    mcp_progress 0 100
    conformance_pause
    mcp_progress 50 100
    conformance_pause
    mcp_progress 100 100
    printf 'Progress test completed\n'
}

tool_test_tool_with_logging() {
    mcp_log info 'Tool execution started'
    conformance_pause
    mcp_log info 'Tool processing data'
    conformance_pause
    mcp_log info 'Tool execution completed'
    printf 'Logging test completed\n'
}

# 2026-07-28: log notifications only reach a client whose request carried
# _meta io.modelcontextprotocol/logLevel; mcp-bashd drops them otherwise.
tool_test_logging_tool() {
    mcp_log debug 'test_logging_tool: debug'
    mcp_log info 'test_logging_tool: info'
    mcp_log warning 'test_logging_tool: warning'
    printf 'Logged at debug, info and warning\n'
}

# Declared in tools.json as needing the client's sampling capability: a
# 2026-07-28 request whose _meta clientCapabilities lack it gets -32021
# from mcp-bashd before this runs.
tool_test_missing_capability() {
    printf 'The client declared the sampling capability.\n'
}

# Needs the client's elicitation capability (tools.json). A 2026-07-28
# server never sends requests on a request's response stream: this tool
# streams progress notifications and then its result, nothing else.
tool_test_streaming_elicitation() {
    mcp_progress 1 3 'streaming'
    conformance_pause
    mcp_progress 2 3 'streaming'
    conformance_pause
    mcp_progress 3 3 'done'
    printf 'Streamed progress, then this result; no request was sent on the stream.\n'
}

# Its inputSchema carries JSON Schema 2020-12 keywords the suite checks
# survive tools/list unchanged; the arguments are validated against it.
tool_json_schema_2020_12_tool() {
    printf '%s\n' "$1"
}

# Its region argument is marked x-mcp-header in tools.json: a 2026-07-28
# client mirrors it in an Mcp-Param-Region header, which mcp-bashd checks
# against the body before the call runs.
tool_test_header_param() {
    local re='"region"[[:space:]]*:[[:space:]]*"([^"]*)"'
    [[ $1 =~ $re ]] && printf 'region: %s\n' "${BASH_REMATCH[1]}"
}
