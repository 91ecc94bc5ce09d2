#!/usr/bin/env bash
# The example tool provider of the "tools/ directory" bash MCP server
# (shared/seeds/001): `list` prints one tool JSON object per line, and
# `NAME ARGS_JSON` runs tool NAME and prints an MCP tool result. Served by
#   mcp-bashd --tools-dir examples/toolsdir/tools
# The original uses jq; this one is plain bash, so it needs nothing but bash.
set -Eeuo pipefail

# json_field KEY JSON — the raw JSON value of a top-level string or number
# member: a string's contents stay escaped exactly as written, which is
# what a JSON string literal in the output needs.
json_field() {
    local str_re="\"$1\"[[:space:]]*:[[:space:]]*\"(([^\"\\\\]|\\\\.)*)\""
    local num_re="\"$1\"[[:space:]]*:[[:space:]]*(-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?)"
    if [[ $2 =~ $str_re ]] || [[ $2 =~ $num_re ]]; then
        printf '%s' "${BASH_REMATCH[1]}"
        return 0
    fi
    return 1
}

# result TEXT — a text result; TEXT must already be JSON-escaped.
result() {
    printf '{"content":[{"type":"text","text":"%s"}],"isError":false}\n' "$1"
}

# add_decimal A B — A+B for decimals of the form -?D+(.D+)?, exactly, in
# bash integer arithmetic (no bc, no awk).
add_decimal() {
    local a=$1 b=$2 sa=1 sb=1 fa fb scale i n sign int frac
    [[ $a =~ ^-?[0-9]+(\.[0-9]+)?$ && $b =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || return 1
    [[ $a == -* ]] && { sa=-1; a=${a#-}; }
    [[ $b == -* ]] && { sb=-1; b=${b#-}; }
    fa=; [[ $a == *.* ]] && fa=${a#*.}
    fb=; [[ $b == *.* ]] && fb=${b#*.}
    scale=$(( ${#fa} > ${#fb} ? ${#fa} : ${#fb} ))
    (( scale <= 15 )) || return 1
    # Scale both to integers: drop the dot, pad the fraction with zeros.
    a=${a%%.*}$fa; b=${b%%.*}$fb
    for (( i = ${#fa}; i < scale; i++ )); do a=${a}0; done
    for (( i = ${#fb}; i < scale; i++ )); do b=${b}0; done
    # 10# reads leading zeros as decimal, not octal.
    n=$(( sa * 10#$a + sb * 10#$b ))
    sign=
    if (( n < 0 )); then sign=-; n=$(( -n )); fi
    n=$(printf "%0$((scale + 1))d" "$n")
    int=${n:0:${#n}-scale} frac=${n:${#n}-scale}
    while [[ $frac == *0 ]]; do frac=${frac%0}; done
    printf '%s%s%s' "$sign" "$int" "${frac:+.$frac}"
}

case "${1:-}" in
list)
    printf '%s\n' '{ "name": "echo", "title": "Echo Tool", "description": "Echoes the input text.", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] } }'
    printf '%s\n' '{ "name": "add", "title": "Addition Tool", "description": "Adds two numbers.", "inputSchema": { "type": "object", "properties": { "a": { "type": "number" }, "b": { "type": "number" } }, "required": ["a","b"] } }'
    ;;
echo)
    text=$(json_field text "${2:-}") || { echo "missing argument: text" >&2; exit 1; }
    result "$text"
    ;;
add)
    a=$(json_field a "${2:-}") || { echo "missing argument: a" >&2; exit 1; }
    b=$(json_field b "${2:-}") || { echo "missing argument: b" >&2; exit 1; }
    sum=$(add_decimal "$a" "$b") || { echo "cannot add $a and $b without jq (exponents, or more than 15 decimals)" >&2; exit 1; }
    result "$sum"
    ;;
*)
    echo '{"error":{"message":"Unknown"}}'
    exit 1
    ;;
esac
