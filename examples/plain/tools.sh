#!/usr/bin/env bash
# Plain tool functions, no SDK at all: serve with `mcp-bashd tools.sh`.
# tools.json beside this file declares them.

tool_echo() {
    printf '%s\n' "$1"
}

tool_sysinfo() {
    printf 'bash %s on %s\n' "$BASH_VERSION" "$(uname -sr)"
}

# mcp_arg NAME: the argument NAME, decoded, without jq (status 1 when the
# client sent none).
tool_slow() {
    local s
    s=$(mcp_arg seconds) || s=1
    sleep "$s"
    echo "slept ${s}s"
}
