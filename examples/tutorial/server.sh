#!/usr/bin/env bash
# The "math" server of the tutorial "Minimalistic MCP Server in bash script"
# (shared/seeds/003, github.com/antonum/mcp-server-bash), as mcp-bashd
# tools. The tutorial's script is its own read loop answering each method
# with a fixed echo; here the loop, initialize, the empty resources/prompts
# lists and tools/list are the daemon's, driven by config.json and
# tools.json beside this file, and the tool is one bash function. Serve it
# with (the host manifest form):
#   {"mcpServers": {"math": {"command": "mcp-bashd", "args": ["/abs/path/server.sh"]}}}

# The tutorial's addition: num1 + num2 (strings holding integers). Its
# result text, leading newline included, is the tutorial's.
tool_addition() {
    local args="$1" num1 num2
    local re1='"num1"[[:space:]]*:[[:space:]]*"([^"]*)"'
    local re2='"num2"[[:space:]]*:[[:space:]]*"([^"]*)"'
    [[ $args =~ $re1 ]] && num1=${BASH_REMATCH[1]}
    [[ $args =~ $re2 ]] && num2=${BASH_REMATCH[1]}
    # The tutorial ran $((num1 + num2)) on whatever the client sent, and bash
    # arithmetic evaluates a string like 'a[$(cmd)]': accept integers only.
    if ! [[ $num1 =~ ^-?[0-9]{1,18}$ && $num2 =~ ^-?[0-9]{1,18}$ ]]; then
        echo "num1 and num2 must be integers"
        return 1
    fi
    # 10# reads "007" as decimal seven, not octal.
    local a=$((10#${num1#-})) b=$((10#${num2#-}))
    [[ $num1 == -* ]] && a=$((-a))
    [[ $num2 == -* ]] && b=$((-b))
    printf '\n sum of two numbers is %d' "$((a + b))"
}
