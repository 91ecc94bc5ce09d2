#!/usr/bin/env bash
# A notes server: tools, resources, a resource template, prompts and
# completion together, each a bash function. Serve it with
#   mcp-bashd examples/notes/server.sh          (stdio, as a host runs it)
#   mcp-bashd --http examples/notes/server.sh   (Streamable HTTP)
#
# Declarations beside this file:
#   tools.json      add_note, delete_note            -> tool_NAME "$ARGS_JSON"
#   resources.json  notes://index, notes://logo      -> resource_NAME URI {}
#                   notes://note/{title} (template)  -> resource_note URI '{"title":"…"}'
#   prompts.json    summarize, describe_logo         -> prompt_NAME "$ARGS_JSON"
# completion/complete runs complete_NAME ARGUMENT VALUE CONTEXT_JSON for the
# prompt or template NAME; each line printed is a candidate.
#
# A resource function prints the resource (bytes that are not UTF-8 go out
# as a blob); a prompt function prints one user message, and mcp_message
# ROLE … adds others. mcp_resource_updated URI tells the clients that
# subscribed to URI that it changed. Notes live in $NOTES_DIR.

NOTES_DIR=${NOTES_DIR:-${HOME:-/tmp}/.mcp-bashd-notes}
mkdir -p "$NOTES_DIR"

# notes_arg NAME JSON — the string member NAME of a flat JSON object, with
# its escapes undone (\uXXXX is kept as written). Returns 1 when absent.
# (Tools read theirs with mcp_arg, exact for every string; resource and
# prompt functions get their arguments as JSON positional ones.)
notes_arg() {
    local re="\"$1\"[[:space:]]*:[[:space:]]*\"((\\\\.|[^\"\\\\])*)\"" s out='' c
    [[ $2 =~ $re ]] || return 1
    s=${BASH_REMATCH[1]}
    while [ -n "$s" ]; do
        c=${s:0:1} s=${s:1}
        if [ "$c" = "\\" ]; then
            c=${s:0:1} s=${s:1}
            case $c in n) c=$'\n' ;; t) c=$'\t' ;; r) c=$'\r' ;; esac
        fi
        out+=$c
    done
    printf '%s' "$out"
}

# notes_titles PREFIX — the titles of the notes starting with PREFIX.
notes_titles() {
    local f t
    for f in "$NOTES_DIR"/*.md; do
        [ -e "$f" ] || continue
        t=${f##*/}
        t=${t%.md}
        case $t in "$1"*) printf '%s\n' "$t" ;; esac
    done
}

# notes_logo — the notes logo, a 1x1 yellow PNG.
notes_logo() {
    printf '\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90\x77\x53\xde'
    printf '\x00\x00\x00\x0cIDAT\x78\xda\x63\xf8\xff\x9f\x01\x00\x04\xff\x01\xff\x63\x80\xd1\x2b'
    printf '\x00\x00\x00\x00IEND\xae\x42\x60\x82'
}

# ---- tools ----

tool_add_note() {
    local title text
    title=$(mcp_arg title) || return 1
    mcp_arg -v text text
    printf '%s\n' "$text" >"$NOTES_DIR/$title.md"
    mcp_resource_updated "notes://note/$title"
    mcp_resource_updated notes://index
    printf 'Saved note %s.\n' "$title"
}

tool_delete_note() {
    local title
    title=$(mcp_arg title) || return 1
    if ! rm -- "$NOTES_DIR/$title.md" 2>/dev/null; then
        printf 'There is no note %s.\n' "$title"
        return 1
    fi
    mcp_resource_updated "notes://note/$title"
    mcp_resource_updated notes://index
    printf 'Deleted note %s.\n' "$title"
}

# ---- resources ----

resource_index() {
    local t n=0
    printf '# Notes\n\n'
    while IFS= read -r t; do
        printf -- '- [%s](notes://note/%s)\n' "$t" "$t"
        n=$((n + 1))
    done < <(notes_titles '')
    [ "$n" -gt 0 ] || printf 'No notes yet: add one with the add_note tool.\n'
}

resource_note() {
    local title
    title=$(notes_arg title "$2")
    if [ ! -f "$NOTES_DIR/$title.md" ]; then
        mcp_resource_not_found
        return
    fi
    cat -- "$NOTES_DIR/$title.md"
}

resource_logo() {
    notes_logo
}

# ---- prompts ----

prompt_summarize() {
    local title style
    title=$(notes_arg title "$1")
    style=$(notes_arg style "$1") || style=brief
    if [ ! -f "$NOTES_DIR/$title.md" ]; then
        printf 'There is no note %s.\n' "$title" >&2
        return 1
    fi
    mcp_message user --resource "notes://note/$title" text/markdown "$(cat -- "$NOTES_DIR/$title.md")"
    printf 'Summarize the note above; keep it %s.\n' "$style"
}

prompt_describe_logo() {
    local png="$MCP_CALL_TMPDIR/logo.png"
    notes_logo >"$png"
    mcp_message user --image "$png" image/png
    mcp_message assistant 'That is the logo of the notes server.'
    printf 'Describe its colours in one sentence.\n'
}

# ---- completion ----

complete_summarize() {
    case $1 in
    title) notes_titles "$2" ;;
    style)
        local s
        for s in brief detailed bulleted; do
            case $s in "$2"*) printf '%s\n' "$s" ;; esac
        done
        ;;
    esac
}

complete_note() {
    [ "$1" = title ] && notes_titles "$2"
}
