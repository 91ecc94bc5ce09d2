#!/usr/bin/env bash
# Plain tool functions, no SDK at all: serve with `mcp-bashd tools.sh`.
# tools.json beside this file declares them.

tool_echo() {
    printf '%s\n' "$1"
}

tool_sysinfo() {
    printf 'bash %s on %s\n' "$BASH_VERSION" "$(uname -sr)"
}

tool_slow() {
    local re='"seconds"[[:space:]]*:[[:space:]]*([0-9]+)'
    local s=1
    [[ $1 =~ $re ]] && s=${BASH_REMATCH[1]}
    sleep "$s"
    echo "slept ${s}s"
}
