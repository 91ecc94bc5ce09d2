#!/usr/bin/env bash
# A server written exactly as bash-mcp-sdk's "Writing a server" section
# shows, with the SDK's mcpserver_core.sh replaced by mcp-bashd's shim.
# It needs no jq: tools read their arguments with mcp_arg.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export MCP_TOOLS_LIST_FILE="${HERE}/tools.json"
export MCP_CONFIG_FILE="${HERE}/config.json"
export MCP_LOG_FILE="${MCP_LOG_FILE:-${HERE}/server.log}"

# State that crosses calls travels through a file made once, at top level.
GREETER_STATE_FILE="$(mktemp "${TMPDIR:-/tmp}/greeter-state.XXXXXX")"
export GREETER_STATE_FILE
printf '0\n' >"$GREETER_STATE_FILE"
# The server's own EXIT trap: mcp-bashd runs it once, at shutdown.
trap 'rm -f "$GREETER_STATE_FILE"' EXIT

# shellcheck disable=SC1091 # the shim (a symlink to scripts/mcpserver_core.sh)
source "${HERE}/mcpserver_core.sh"

# mcp_arg NAME prints the argument NAME as the client sent it, decoded
# (quotes, backslashes, newlines and all); $1 is the whole arguments JSON.
tool_greet() {
    local name
    name=$(mcp_arg name)
    printf 'Hello, %s\n' "$name"
}

# Calls run concurrently under mcp-bashd (the bash SDK ran them one at a
# time), so a read-modify-write of shared state takes a lock: mkdir is
# atomic and needs nothing but bash and the filesystem.
tool_count() {
    local n lock="${GREETER_STATE_FILE}.lock"
    until mkdir "$lock" 2>/dev/null; do sleep 0.01; done
    n=$(($(<"$GREETER_STATE_FILE") + 1))
    printf '%d\n' "$n" >"$GREETER_STATE_FILE"
    rmdir "$lock"
    printf '%d\n' "$n"
}

tool_fail() {
    echo "this tool always fails" >&2
    return 1
}

run_mcp_server
