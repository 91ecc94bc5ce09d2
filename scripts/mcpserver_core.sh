# shellcheck shell=bash
# mcp-bashd drop-in for bash-mcp-sdk's lib/mcpserver_core.sh.
#
# Source this file in place of the SDK's. Top-level code of the server script
# runs once, as before; run_mcp_server then hands the running shell's state
# (functions, variables, shell options, EXIT trap, working directory) to the
# mcp-bashd daemon, which serves every call in a fresh bash process group.
# No jq or ps is needed (only the ask helpers run mkfifo, for their reply
# FIFO): the logic lives in the Go binary.
#
# Kept bash 3.2-compatible (macOS /bin/bash): no {var} redirections, no
# mapfile, no ${var,,}, no printf %(...)T without a fallback.

# Read by `mcp-bashd check` to spot a stale vendored copy.
# shellcheck disable=SC2034
MCP_BASHD_SHIM_VERSION=3

# Bash 3.2 (macOS's /bin/bash) or later: another shell (dash as sh, zsh)
# or an older bash is told so here, in words any POSIX shell parses,
# before a construct it lacks is a syntax error.
case ${BASH_VERSION:-} in
'' | [12].* | 3.[01].*)
    if [ -n "${BASH_VERSION:-}" ]; then
        printf 'mcpserver_core.sh: this is bash %s; the mcp-bashd shim needs bash 3.2 or later\n' "$BASH_VERSION" >&2
    else
        printf 'mcpserver_core.sh: not running under bash (BASH_VERSION is unset); source it from a bash 3.2 or later script\n' >&2
    fi
    # shellcheck disable=SC2317 # exit: when it was run, not sourced
    return 1 2>/dev/null || exit 1
    ;;
esac

# Where the daemon is: MCP_BASHD (a path) or mcp-bashd on PATH.
__mcpbashd_bin() {
    if [ -n "${MCP_BASHD:-}" ] && [ -f "${MCP_BASHD}" ] && [ -x "${MCP_BASHD}" ]; then
        printf '%s\n' "$MCP_BASHD"
        return 0
    fi
    command -v mcp-bashd 2>/dev/null && return 0
    {
        printf 'mcpserver_core.sh: the mcp-bashd binary was not found'
        if [ -n "${MCP_BASHD:-}" ]; then
            printf ' (MCP_BASHD=%s is not an executable file)' "$MCP_BASHD"
        fi
        printf '.\n'
        printf 'Install it on PATH (for example: CGO_ENABLED=0 go install github.com/mcp-bashd/mcp-bashd/cmd/mcp-bashd@latest)\n'
        printf 'or set MCP_BASHD to the path of the binary.\n'
    } >&2
    return 127
}

# log LEVEL MESSAGE — the SDK's format: [YYYY-mm-dd HH:MM:SS] [LEVEL] message
log() {
    local __line __ts
    if [ "${BASH_VERSINFO[0]}" -ge 5 ] || { [ "${BASH_VERSINFO[0]}" -eq 4 ] && [ "${BASH_VERSINFO[1]}" -ge 2 ]; }; then
        printf -v __ts '%(%Y-%m-%d %H:%M:%S)T' -1
    else
        __ts=$(date '+%Y-%m-%d %H:%M:%S')
    fi
    __line="[${__ts}] [${1:-}] ${2:-}"
    printf '%s\n' "$__line" >>"${MCP_LOG_FILE:-/dev/null}"
    if [ -n "${MCP_EXTRA_LOG_FILE:-}" ]; then
        printf '%s\n' "$__line" >>"$MCP_EXTRA_LOG_FILE"
    fi
    if [ "${MCP_LOG_STDERR:-0}" = "1" ]; then
        printf '%s\n' "$__line" >&2
    fi
    return 0
}

# _configure_extra_log_file PATH — the SDK's second log target: a relative
# PATH resolves against PROJECT_ROOT; a missing parent directory is logged
# and the extra log stays off.
_configure_extra_log_file() {
    local __raw="${1:-}" __resolved __parent
    [ -z "$__raw" ] && return 0
    __resolved=$__raw
    case $__raw in
    /*) ;;
    *) __resolved="${PROJECT_ROOT:-}/${__raw}" ;;
    esac
    __parent=${__resolved%/*}
    [ -z "$__parent" ] && __parent=/
    if [ ! -d "$__parent" ]; then
        log "WARN" "log_file parent directory does not exist: ${__parent} — extra log file disabled"
        return 0
    fi
    MCP_EXTRA_LOG_FILE=$__resolved
    export MCP_EXTRA_LOG_FILE
    log "INFO" "Extra log file configured: ${MCP_EXTRA_LOG_FILE}"
}

# create_response ID RESULT_JSON — a compact JSON-RPC result envelope.
# create_response ID — the 2026 SDK's form: the result object on stdin,
# given resultType and serverInfo, and logged, as that SDK did.
create_response() {
    local __b __out
    __b=$(__mcpbashd_bin) || return $?
    if [ "$#" -ne 1 ]; then
        "$__b" json response "$@"
        return
    fi
    if ! __out=$(MCP_CONFIG_FILE="${MCP_CONFIG_FILE:-config.json}" "$__b" json response "$1"); then
        log "ERROR" "Failed to build response for id $1"
        return 1
    fi
    log "RESPONSE" "$__out"
    printf '%s\n' "$__out"
}

# create_error_response ID CODE MESSAGE [DATA_JSON]
create_error_response() {
    local __b
    __b=$(__mcpbashd_bin) || return $?
    "$__b" json error "$@"
}

# read_json_file FILE — prints the file's single JSON object, compacted;
# returns 1 (nothing printed, the reason logged) for anything else.
read_json_file() {
    local __b __out __st=0
    __b=$(__mcpbashd_bin) || return $?
    __out=$("$__b" json read-file "${1:-}" 2>&1) || __st=$?
    if [ "$__st" -ne 0 ]; then
        log "ERROR" "$__out"
        return 1
    fi
    printf '%s\n' "$__out"
}

# Rich results and notifications, without jq. Records go to files in the
# call's root that the daemon reads (see supervisor/events.go); they work
# from the tool and from any child it starts. Outside a call they do
# nothing.
__mcpbashd_esc() {
    __mcpbashd_e=${1//\\/\\\\}
    __mcpbashd_e=${__mcpbashd_e//$'\n'/\\n}
    __mcpbashd_e=${__mcpbashd_e//$'\t'/\\t}
    __mcpbashd_e=${__mcpbashd_e//$'\r'/\\r}
}
# mcp_progress PROGRESS [TOTAL] [MESSAGE] — notifications/progress for the
# request's progressToken (dropped when the request had none).
mcp_progress() {
    [ -n "${MCP_BASHD_EVENTS:-}" ] || return 0
    __mcpbashd_esc "${3:-}"
    printf 'progress\t%s\t%s\t%s\n' "${1:-}" "${2:-}" "$__mcpbashd_e" >>"$MCP_BASHD_EVENTS"
}

# mcp_log LEVEL MESSAGE — notifications/message, when the client asked for
# that level (logging/setLevel, or _meta logLevel in 2026-07-28).
mcp_log() {
    [ -n "${MCP_BASHD_EVENTS:-}" ] || return 0
    __mcpbashd_esc "${2:-}"
    printf 'log\t%s\t%s\n' "${1:-info}" "$__mcpbashd_e" >>"$MCP_BASHD_EVENTS"
}

# mcp_arg [-v VAR] NAME — the tool's argument NAME (NAME.KEY or NAME.N for
# one inside an object or array), decoded by the daemon, no jq: a string as
# itself, a number or boolean as $1 writes it, an object or array as compact
# JSON, null as nothing. Printed with no newline added, or assigned to VAR
# (exact, trailing newlines too). Status 1: no such argument; 2: a string
# holding NUL (bash cannot hold one), a path too deep in large arguments,
# or not inside a tool call. ($MCP_BASHD_ARGS: supervisor/argvalues.go.)
mcp_arg() {
    local __mcpbashd_to='' __mcpbashd_v='' __mcpbashd_st=0
    if [ "${1:-}" = -v ] && [ "$#" -eq 3 ]; then
        __mcpbashd_to=$2
        shift 2
    fi
    if [ "$#" -ne 1 ]; then
        printf 'mcp_arg: usage: mcp_arg [-v VAR] NAME\n' >&2
        return 2
    fi
    if ! declare -F __mcpbashd_av >/dev/null; then
        if [ -z "${MCP_BASHD_ARGS:-}" ] || [ ! -f "$MCP_BASHD_ARGS" ]; then
            printf 'mcp_arg: not inside a tool call\n' >&2
            return 2
        fi
        # shellcheck source=/dev/null
        . "$MCP_BASHD_ARGS"
    fi
    __mcpbashd_av "${1:-}" || __mcpbashd_st=$?
    case $__mcpbashd_st:$__mcpbashd_v in
    0:!*)
        # shellcheck disable=SC2016 # $1 is named, not expanded
        printf 'mcp_arg: argument %s holds a NUL character, which a bash string cannot hold (read it from $1 with a JSON tool)\n' "${1:-}" >&2
        return 2
        ;;
    3:*)
        # shellcheck disable=SC2016 # $1 is named, not expanded
        printf 'mcp_arg: %s: the arguments are too large to index below the top level (read it from $1 with a JSON tool)\n' "${1:-}" >&2
        return 2
        ;;
    0:*) ;;
    *) return 1 ;;
    esac
    if [ -n "$__mcpbashd_to" ]; then
        printf -v "$__mcpbashd_to" '%s' "${__mcpbashd_v#?}"
    else
        printf '%s' "${__mcpbashd_v#?}"
    fi
}

# Asking the client (elicitation, sampling, roots): each helper prints the
# client's result JSON and returns 0, or prints why not on stderr and
# returns 1 (the client lacks the capability, declined or failed, the call
# ended). They work from the tool and from any child it starts; the daemon
# speaks the protocol (supervisor/ask.go says how they reach it).
# mcp_ask METHOD [PARAMS_JSON] — any server-to-client request.
mcp_ask() { __mcpbashd_ask mcp_ask one "${1:-}" "${2:-}"; }
# mcp_ask_all REQUESTS_JSON — several as one unit, {KEY: {"method": M,
# "params": P}, ...}; prints {KEY: result, ...}.
mcp_ask_all() { __mcpbashd_ask mcp_ask_all all "${1:-}"; }
# mcp_elicit MESSAGE SCHEMA_JSON — elicitation/create; prints the answer
# ({"action": "accept", "content": {...}}); when the user declines or
# cancels it prints that answer too, but returns 1.
mcp_elicit() { __mcpbashd_ask mcp_elicit elicit "${1:-}" "${2:-}"; }
# mcp_sample REQUEST_JSON — sampling/createMessage with those params.
mcp_sample() { __mcpbashd_ask mcp_sample one sampling/createMessage "${1:-}"; }
# mcp_roots — roots/list; prints {"roots": [...]}.
mcp_roots() { __mcpbashd_ask mcp_roots one roots/list ""; }

# __mcpbashd_ask WHO FORM FIELDS... — makes a reply FIFO next to the events
# file (mkfifo creates or fails, so concurrent helpers never share one),
# appends the ask record naming it, and reads the daemon's reply to EOF:
# "0", a newline and the result; "1", a newline and a message; or "2", a
# newline, a message, a newline and the result (a refused elicitation).
__mcpbashd_ask() {
    local __who=$1 __n=0 __rec __f __reply='' __gone=0
    shift
    if [ -z "${MCP_BASHD_EVENTS:-}" ]; then
        printf '%s: not inside a tool call\n' "$__who" >&2
        return 1
    fi
    until mkfifo -m 600 "$MCP_BASHD_EVENTS.$__n" 2>/dev/null; do
        if [ ! -e "$MCP_BASHD_EVENTS.$__n" ] && [ ! -L "$MCP_BASHD_EVENTS.$__n" ]; then
            # Gone since mkfifo found it (another helper's question was
            # answered and its FIFO removed): that name again. Twice more
            # and mkfifo cannot make FIFOs here at all.
            __gone=$((__gone + 1))
            if [ "$__gone" -gt 2 ]; then
                printf '%s: cannot make a reply FIFO (mkfifo) in the call directory\n' "$__who" >&2
                return 1
            fi
            continue
        fi
        __n=$((__n + 1))
    done
    __rec="ask	${MCP_BASHD_EVENTS##*/}.$__n"
    for __f in "$@"; do
        __mcpbashd_esc "$__f"
        __rec="$__rec	$__mcpbashd_e"
    done
    printf '%s\n' "$__rec" >>"$MCP_BASHD_EVENTS"
    IFS= read -r -d '' __reply <"$MCP_BASHD_EVENTS.$__n"
    case $__reply in
    "0
"*)
        printf '%s\n' "${__reply#??}"
        return 0
        ;;
    "1
"*) printf '%s: %s\n' "$__who" "${__reply#??}" >&2 ;;
    "2
"*)
        __reply=${__reply#??}
        printf '%s\n' "${__reply#*
}"
        printf '%s: %s\n' "$__who" "${__reply%%
*}" >&2
        ;;
    *) printf '%s: no answer from mcp-bashd\n' "$__who" >&2 ;;
    esac
    return 1
}

# mcp_text TEXT — a text item in the result.
mcp_text() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    __mcpbashd_esc "${1:-}"
    printf 'text\t%s\n' "$__mcpbashd_e" >>"$MCP_BASHD_CONTENT"
}

# mcp_image FILE MIME / mcp_audio FILE MIME — binary content: FILE's bytes
# (base64-encoded by the daemon).
mcp_image() { __mcpbashd_binary image "${1:-}" "${2:-image/png}"; }
mcp_audio() { __mcpbashd_binary audio "${1:-}" "${2:-audio/wav}"; }

# __mcpbashd_binary KIND FILE MIME — copies FILE into the call's root as
# content.N and records that name; the daemon reads only the copy. The copy
# is made here, in the tool's own process, so FILE means what it means to
# the tool (/dev/stdin is the tool's stdin, a relative path is the tool's),
# and a FIFO nobody writes blocks the tool, whose timeout and cancel apply,
# never the daemon. ulimit -f stops the copy just past the output cap, so
# /dev/zero ends too (the daemon refuses what is over the cap). cat, not a
# read loop: bash variables cannot hold NUL bytes; cat is POSIX and on
# every host, unlike head -c.
__mcpbashd_binary() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    __mcpbashd_esc "${2:-}"
    (
        # cat's complaints are not the tool's output; the record says it failed.
        exec 2>/dev/null
        # noclobber: a name is taken with O_EXCL, so concurrent helpers
        # (the tool's children) never share one.
        set -C
        __mcpbashd_n=0
        until : >"$MCP_BASHD_CONTENT.$__mcpbashd_n"; do
            [ -e "$MCP_BASHD_CONTENT.$__mcpbashd_n" ] || [ -L "$MCP_BASHD_CONTENT.$__mcpbashd_n" ] || exit 0
            __mcpbashd_n=$((__mcpbashd_n + 1))
        done
        # Past the limit a write fails (EFBIG) rather than killing cat.
        trap '' XFSZ
        __mcpbashd_st=0
        (
            set +o posix # ulimit -f counts KiB outside POSIX mode
            case ${MCP_BASHD_OUTPUT_CAP:-} in
            '' | *[!0-9]*) ;;
            *) ulimit -f $((MCP_BASHD_OUTPUT_CAP / 1024 + 1)) || : ;;
            esac
            exec cat -- "$2"
        ) >|"$MCP_BASHD_CONTENT.$__mcpbashd_n" || __mcpbashd_st=$?
        printf '%s\t%s\t%s.%s\t%s\t%s\n' "$1" "$3" "${MCP_BASHD_CONTENT##*/}" "$__mcpbashd_n" "$__mcpbashd_st" \
            "$__mcpbashd_e" >>"$MCP_BASHD_CONTENT"
    )
}

# mcp_resource URI MIME TEXT — an embedded text resource.
mcp_resource() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    __mcpbashd_esc "${3:-}"
    printf 'resource\t%s\t%s\t%s\n' "${1:-}" "${2:-text/plain}" "$__mcpbashd_e" >>"$MCP_BASHD_CONTENT"
}

# mcp_structured JSON — structuredContent (validated against the tool's
# outputSchema when it declares one).
mcp_structured() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    __mcpbashd_esc "${1:-}"
    printf 'structured\t%s\n' "$__mcpbashd_e" >>"$MCP_BASHD_CONTENT"
}

# mcp_result JSON — the whole CallToolResult, replacing everything else.
mcp_result() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    __mcpbashd_esc "${1:-}"
    printf 'result\t%s\n' "$__mcpbashd_e" >>"$MCP_BASHD_CONTENT"
}

# Resources, prompts and resource updates (mcp-bashd's own; the SDK has
# none). A resource_NAME function's stdout is the resource's text; a
# prompt_NAME function's stdout is one user message.

# mcp_message ROLE TEXT — one prompt message of ROLE (user or assistant).
# Other contents: mcp_message ROLE --image FILE [MIME],
# mcp_message ROLE --audio FILE [MIME],
# mcp_message ROLE --resource URI MIME TEXT, and mcp_message ROLE -- TEXT
# for a TEXT that starts with --.
mcp_message() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    __mcpbashd_esc "${1:-user}"
    printf 'role\t%s\n' "$__mcpbashd_e" >>"$MCP_BASHD_CONTENT"
    case ${2:-} in
    --image) mcp_image "${3:-}" "${4:-image/png}" ;;
    --audio) mcp_audio "${3:-}" "${4:-audio/wav}" ;;
    --resource) mcp_resource "${3:-}" "${4:-text/plain}" "${5:-}" ;;
    --) mcp_text "${3:-}" ;;
    *) mcp_text "${2:-}" ;;
    esac
}

# mcp_blob FILE [MIME] — binary contents for the resource being read
# (base64-encoded by the daemon); MIME defaults to the resource's declared
# mimeType.
mcp_blob() { __mcpbashd_binary blob "${1:-}" "${2:-}"; }

# mcp_resource_not_found — in a resource_NAME function: the URI (which
# matched a template) names nothing, so the client gets the protocol's
# resource-not-found error instead of the function's output.
mcp_resource_not_found() {
    [ -n "${MCP_BASHD_CONTENT:-}" ] || return 0
    printf 'notfound\n' >>"$MCP_BASHD_CONTENT"
}

# mcp_resource_updated URI — tells clients subscribed to URI that it
# changed (notifications/resources/updated). Works from any process the
# daemon started: a tool, a hook, a child or a detached process (export -f
# mcp_resource_updated __mcpbashd_esc to a bash it starts). <>: the
# daemon's FIFO is opened read-write, so the open never waits, even when
# the daemon is gone.
mcp_resource_updated() {
    [ -n "${MCP_BASHD_NOTIFY:-}" ] && [ -p "$MCP_BASHD_NOTIFY" ] || return 0
    __mcpbashd_esc "${1:-}"
    if [ "${#__mcpbashd_e}" -gt 3072 ]; then
        printf 'mcp_resource_updated: URI longer than 3072 bytes; not sent\n' >&2
        return 1
    fi
    # Through fd 4, not 1<>: bash prints "1<>F" back as "<> F" (stdin) in
    # declare -f, so a function exported to a child would lose its fd.
    printf 'updated\t%s\n' "$__mcpbashd_e" 4<>"$MCP_BASHD_NOTIFY" >&4
}

# __mcpbashd_out CMD... — CMD's output in __mcpbashd_os (less its final
# newline) and its non-empty lines in __mcpbashd_o. While the daemon loads
# the script, through a file beside the snapshot: each $(...) forks this
# shell, and the load is what a client's first initialize waits for. The
# file is read whole (read -d ''): a `while read` loop takes two syscalls a
# line. Elsewhere (the drop-in's dump runs in a process substitution, with
# no such file) by $(...), which bash 3.2 and 5 run with this shell's traps
# still shown to `trap -p`.
__mcpbashd_out() {
    __mcpbashd_o=() __mcpbashd_os=
    if [ -n "${__MCPBASHD_SNAPSHOT_OUT:-}" ]; then
        "$@" >|"$__MCPBASHD_SNAPSHOT_OUT.lines" || :
        IFS= read -r -d '' __mcpbashd_os <"$__MCPBASHD_SNAPSHOT_OUT.lines" || :
        __mcpbashd_os=${__mcpbashd_os%$'\n'}
        IFS=$'\n' read -r -d '' -a __mcpbashd_o <"$__MCPBASHD_SNAPSHOT_OUT.lines" || :
        return 0
    fi
    __mcpbashd_os=$("$@") || :
    IFS=$'\n' read -r -d '' -a __mcpbashd_o <<<"$__mcpbashd_os" || :
}

# The shell's state as a file the daemon sources into every call. Variables
# first (bash's own special and read-only ones skipped; the daemon silences
# errors while restoring), then functions, then options, the EXIT trap and
# the working directory.
__mcpbashd_dump() {
    local __mcpbashd_n __mcpbashd_d __mcpbashd_xd=0
    local -a __mcpbashd_fns __mcpbashd_vs
    __mcpbashd_vs=()
    printf '# mcp-bashd snapshot v1\n'
    # How this bash prints "1<>F" back (before 5.3 as "<> F", fd 0): the
    # daemon puts the 1 back in the functions below. Not defined inside a
    # $(...): bash 5.2 reprints that text, and runs the <> as fd 0 there.
    # shellcheck disable=SC2317 # the probe is printed, never run
    __mcpbashd_p() { : 1<>/dev/null; }
    __mcpbashd_out declare -f __mcpbashd_p
    unset -f __mcpbashd_p
    printf '#rdwr %s\n' "${__mcpbashd_os//$'\n'/ }"
    __mcpbashd_out compgen -A function
    __mcpbashd_fns=(${__mcpbashd_o[@]+"${__mcpbashd_o[@]}"})
    [ ${#__mcpbashd_fns[@]} = 0 ] || printf '#fn %s\n' "${__mcpbashd_fns[@]}"
    printf '{\n'
    __mcpbashd_out compgen -v
    for __mcpbashd_n in ${__mcpbashd_o[@]+"${__mcpbashd_o[@]}"}; do
        case $__mcpbashd_n in
        BASH | BASH_* | BASHOPTS | BASHPID | __mcpbashd_* | __MCPBASHD_* | COMP_* | DIRSTACK | \
            EPOCHREALTIME | EPOCHSECONDS | EUID | FUNCNAME | GROUPS | HISTCMD | LINENO | OLDPWD | \
            OPTARG | OPTIND | PIPESTATUS | PPID | PWD | RANDOM | SECONDS | SHELLOPTS | SHLVL | \
            SRANDOM | UID | _ | MCP_CALL_TMPDIR | MCP_BASHD_SERVER_PID | COLUMNS | LINES) ;;
        *) __mcpbashd_vs[${#__mcpbashd_vs[@]}]=$__mcpbashd_n ;;
        esac
    done
    # One declare for them all: one redirection, not one per variable.
    [ ${#__mcpbashd_vs[@]} = 0 ] || declare -p "${__mcpbashd_vs[@]}" 2>/dev/null || :
    # The shim's server entry points are of no use inside a call. Each
    # function is preceded by where it was defined (extdebug's declare -F,
    # "NAME LINE FILE"): the daemon replaces the shim's own, unchanged ones
    # by stubs that load the shim on first use, so calls that never use
    # them parse less.
    printf '#shim %s\n' "${BASH_SOURCE[0]}"
    shopt -q extdebug && __mcpbashd_xd=1
    shopt -s extdebug
    __mcpbashd_o=()
    [ ${#__mcpbashd_fns[@]} = 0 ] || __mcpbashd_out declare -F "${__mcpbashd_fns[@]}"
    [ "$__mcpbashd_xd" = 1 ] || shopt -u extdebug
    for __mcpbashd_d in ${__mcpbashd_o[@]+"${__mcpbashd_o[@]}"}; do
        __mcpbashd_n=${__mcpbashd_d%% *}
        case $__mcpbashd_n in
        run_mcp_server | run_mcp_http_server | __mcpbashd_serve | __mcpbashd_pass) ;;
        *)
            printf '#def %s\n' "$__mcpbashd_d"
            declare -f "$__mcpbashd_n"
            ;;
        esac
    done
    printf '} 2>/dev/null\n'
    printf '__mcpbashd_options() {\n'
    shopt -p
    set +o
    printf '}\n__mcpbashd_exit_trap() {\n:\n'
    printf '%s\n' "${__mcpbashd_trap:-}"
    printf '}\nbuiltin cd -- %q 2>/dev/null\n' "$PWD"
}

# __mcpbashd_bashflag — sets __mcpbashd_bash, the bash the daemon runs
# calls with: this one, unless MCP_BASHD_FLAGS names another (--bash).
__mcpbashd_bashflag() {
    __mcpbashd_bash=${BASH:-}
    case " ${MCP_BASHD_FLAGS:-} " in *" --bash"* | *" -bash"*) __mcpbashd_bash= ;; esac
}

# __mcpbashd_posix_off / __mcpbashd_posix_on — POSIX mode off for a
# moment, and back on if it was on (__mcpbashd_px).
__mcpbashd_posix_off() {
    __mcpbashd_px=
    case :${SHELLOPTS:-}: in *:posix:*) __mcpbashd_px=1 && set +o posix ;; esac
}
__mcpbashd_posix_on() {
    [ -z "${__mcpbashd_px:-}" ] || set -o posix
}

# run_mcp_server — serves this shell's tools with mcp-bashd until the input
# ends, then returns the daemon's status: statements after it run, as under
# the SDK. When the daemon itself is loading the script (manifest mode or a
# reload), it only writes the snapshot and ends the load.
run_mcp_server() {
    # The EXIT handler is captured only in the shell that installed it, as
    # the SDK does: `( run_mcp_server )` leaves it to the enclosing shell,
    # which runs it once, at its own exit. POSIX lets $(trap -p) see this
    # shell's traps; the process substitution below no longer has them.
    __mcpbashd_trap=
    if [ "${BASH_SUBSHELL:-0}" = 0 ]; then
        __mcpbashd_out trap -p EXIT
        __mcpbashd_trap=$__mcpbashd_os
    fi
    if [ -n "${__MCPBASHD_SNAPSHOT_OUT:-}" ]; then
        __mcpbashd_dump >"$__MCPBASHD_SNAPSHOT_OUT" || exit 1
        # The server's EXIT trap is the daemon's to run, at shutdown.
        trap - EXIT
        exit 0
    fi
    local __b __script
    __b=$(__mcpbashd_bin) || exit $?
    __script=${BASH_SOURCE[${#BASH_SOURCE[@]} - 1]}
    export MCP_TOOLS_LIST_FILE="${MCP_TOOLS_LIST_FILE:-tools.json}"
    export __MCPBASHD_CONFIG_NAMED="${MCP_CONFIG_FILE:+1}" MCP_CONFIG_FILE="${MCP_CONFIG_FILE:-config.json}"
    [ -n "${MCP_LOG_FILE:-}" ] && export MCP_LOG_FILE
    [ -n "${MCP_EXTRA_LOG_FILE:-}" ] && export MCP_EXTRA_LOG_FILE
    [ -n "${MCP_LOG_STDERR:-}" ] && export MCP_LOG_STDERR
    # The script's own arguments ("$@" here is this function's): taken from
    # /proc so every call's processes show them, as bash subshells did.
    local __a __seen=0
    local -a __args
    __args=()
    if [ -r "/proc/$$/cmdline" ]; then
        while IFS= read -r -d '' __a; do
            if [ "$__seen" = 1 ]; then
                __args[${#__args[@]}]=$__a
            elif [ "$__a" = "$__script" ] || [ "$__a" = "$0" ]; then
                __seen=1
            fi
        done <"/proc/$$/cmdline"
    fi
    __mcpbashd_serve "$__b" "$__script" ${__args[@]+"${__args[@]}"}
}

# __mcpbashd_serve BIN SCRIPT [ARGS...] — runs the daemon beside this shell
# and waits for it. Meanwhile the shell passes on the signals the host sends
# it (the host knows only this pid); the daemon dies with it (the kernel
# kills it when its parent dies). Then the shell ends as the daemon did: by
# its signal, or by returning its status.
__mcpbashd_serve() {
    local __b=$1 __script=$2 __me='' __st=0 __again __sig='' __traps __monitor=''
    shift 2
    # This shell's own pid, in a subshell too (BASHPID is bash 4+): the
    # daemon's parent. A builtin's redirection opens /proc/self here;
    # without /proc (macOS) it is the parent of a child sh.
    read -r __me __traps 2>/dev/null </proc/self/stat || __me=$(exec sh -c 'echo "$PPID"' 2>/dev/null)
    __traps=$(trap -p INT TERM HUP)
    __mcpbashd_daemon='' __mcpbashd_signal='' __mcpbashd_trapped=''
    trap '__mcpbashd_pass INT' INT
    trap '__mcpbashd_pass TERM' TERM
    trap '__mcpbashd_pass HUP' HUP
    # In this shell's process group whatever the script set (job control
    # would give it one of its own, which a signal to the group misses).
    case $- in *m*) __monitor=1 && set +m ;; esac
    # A background command ignores SIGINT and SIGQUIT and reads /dev/null
    # unless told otherwise; the daemon must be as the host started this
    # shell. "--": the script's arguments are its own, never the daemon's
    # flags. --bash: calls run under this bash, as the SDK's subshells did,
    # and the bash that wrote the snapshot is the one that restores it (a
    # bash 5 script's declare -A means nothing to a bash 3.2 on PATH).
    # The snapshot through a process substitution, which is a syntax error
    # in POSIX mode before bash 5.1 (macOS's 3.2 too): parsed by eval, with
    # posix off for that moment; the dump still sees the script's options.
    __mcpbashd_bashflag
    __mcpbashd_posix_off
    # shellcheck disable=SC2016 # expanded by the eval
    eval '{
        trap - INT QUIT
        exec "$__b" ${__MCPBASHD_SERVE_FLAGS:+"$__MCPBASHD_SERVE_FLAGS"} ${__mcpbashd_bash:+--bash "$__mcpbashd_bash"} ${__mcpbashd_trap:+--shell-exit-trap} --snapshot-fd 3 --server-pid "$$" \
            ${__me:+--shell-pid "$__me"} "$__script" -- ${1+"$@"}
    } 3< <(__mcpbashd_posix_on; __mcpbashd_dump) <&0 &'
    __mcpbashd_daemon=$!
    __mcpbashd_posix_on
    [ -z "$__monitor" ] || set -m
    if [ -n "$__mcpbashd_signal" ] && kill -s "$__mcpbashd_signal" "$__mcpbashd_daemon" 2>/dev/null; then
        __mcpbashd_signal= # came before the daemon did
    fi
    wait "$__mcpbashd_daemon" || __st=$?
    # A trap that ran made wait return early, or ran right after it had
    # returned: waiting again gets the daemon's status (bash before 5.1
    # says 127 when the first wait had it).
    while [ -n "$__mcpbashd_trapped" ]; do
        __mcpbashd_trapped='' __again=0
        wait "$__mcpbashd_daemon" 2>/dev/null || __again=$?
        [ "$__again" = 127 ] && break
        __st=$__again
    done
    __mcpbashd_daemon=
    # Exit 0 or death by a signal: the daemon's teardown ran, and the EXIT
    # handler captured above (--shell-exit-trap left it to this shell)
    # runs now, once, as the last step of the SDK's teardown; this shell
    # must not run it again at its exit. Any other status: the daemon
    # stopped before serving (it said why); the handler is still this
    # shell's.
    if [ -n "$__mcpbashd_trap" ] && { [ "$__st" = 0 ] || [ "$__st" -gt 128 ]; }; then
        trap - EXIT
        __mcpbashd_exit_handler
    fi
    trap - INT TERM HUP
    eval "$__traps"
    if [ "$__st" -gt 128 ]; then
        __sig=$((__st - 128))
    elif [ -n "$__mcpbashd_signal" ]; then
        # It came after the daemon was gone: still the server's to end by.
        __sig=$__mcpbashd_signal
        __st=$((128 + $(kill -l "$__sig")))
    fi
    if [ -n "$__sig" ]; then
        trap - "$__sig"
        [ -z "$__me" ] || kill -"$__sig" "$__me"
        exit "$__st" # PID 1: the kernel does not let it die by its own signal
    fi
    return "$__st"
}

# __mcpbashd_exit_handler — the EXIT handler run_mcp_server captured, run
# in a subshell of this shell once the daemon has ended, as the SDK's
# teardown ran it: $$ is the server's pid (`kill -TERM $$` ends the
# server by SIGTERM, and what follows run_mcp_server does not run), the
# state is the script's own, stdin is /dev/null and stdout goes to stderr
# (the protocol is over), errexit off. In a process group of its own
# (set -m), killed with it after 2 s (the daemon's hook budget,
# supervisor.DefaultHookBudget); a signal that comes meanwhile is kept by
# __mcpbashd_pass and ends the shell once the handler is done.
__mcpbashd_exit_handler() {
    __mcpbashd_inexit=1
    {
        trap - INT QUIT
        set +e +o pipefail
        {
            set -m
            (
                set +m
                exec </dev/null >&2
                eval "$__mcpbashd_trap"
            ) &
            __mcpbashd_h=$!
            set +m
            printf '%s\n' "$__mcpbashd_h"
            wait "$__mcpbashd_h" 2>/dev/null
            printf '%s\n' "$?"
        } | __mcpbashd_exit_watch
    } &
    __mcpbashd_h=$!
    # A trap that runs makes wait return early: wait again.
    __mcpbashd_trapped=1
    while [ -n "$__mcpbashd_trapped" ]; do
        __mcpbashd_trapped=
        wait "$__mcpbashd_h" 2>/dev/null || :
    done
    __mcpbashd_inexit=
}

# __mcpbashd_exit_watch — reads the handler's pid, then its status within
# the budget, and logs the SDK's sentences.
__mcpbashd_exit_watch() {
    local __pid='' __st=''
    IFS= read -r __pid || return 0
    if IFS= read -r -t 2 __st; then
        [ "$__st" = 0 ] || __mcpbashd_warn "Chained caller EXIT trap failed with status $__st"
    elif kill -s KILL -- "-$__pid" 2>/dev/null; then
        # The budget passed (bash 3.2's read -t says 1, as at EOF, not 142).
        __mcpbashd_warn "Chained caller EXIT trap did not finish within 2s; killed"
    fi
    return 0
}

# __mcpbashd_warn MESSAGE — a warning where the daemon's would go: the log
# file, and stderr unless MCP_LOG_STDERR=0 (with 1, log put it there).
__mcpbashd_warn() {
    log "WARN" "$1"
    case ${MCP_LOG_STDERR:-} in
    0 | 1) ;;
    *) printf 'mcp-bashd: WARN %s\n' "$1" >&2 ;;
    esac
}

# __mcpbashd_pass SIG — a signal for the server goes to the daemon; one
# that finds no daemon (not started yet, or gone) is kept for
# __mcpbashd_serve.
__mcpbashd_pass() {
    __mcpbashd_trapped=1
    if [ -n "${__mcpbashd_inexit:-}" ] && [ -z "$__mcpbashd_signal" ]; then
        log "INFO" "signal received while shutting down; exiting by it after the teardown (signal $1)"
    fi
    if [ -z "$__mcpbashd_daemon" ] || ! kill -s "$1" "$__mcpbashd_daemon" 2>/dev/null; then
        __mcpbashd_signal=$1
    fi
}

# run_mcp_http_server [handle-connection] — the 2026 SDK's HTTP entry
# point: the same server over Streamable HTTP (MCP_HTTP_PORT,
# MCP_HTTP_BIND, MCP_HTTP_PATH, MCP_ALLOWED_ORIGINS, set in the script or
# its environment). "handle-connection" serves the one connection on
# stdin/stdout and returns, for socat/ncat/inetd/systemd to run per
# connection. Other arguments are ignored, as the SDK ignored them.
run_mcp_http_server() {
    [ -n "${MCP_HTTP_PORT:-}" ] && export MCP_HTTP_PORT
    [ -n "${MCP_HTTP_BIND:-}" ] && export MCP_HTTP_BIND
    [ -n "${MCP_HTTP_PATH:-}" ] && export MCP_HTTP_PATH
    [ -n "${MCP_ALLOWED_ORIGINS:-}" ] && export MCP_ALLOWED_ORIGINS
    if [ "${1:-}" = handle-connection ]; then
        __MCPBASHD_SERVE_FLAGS=--http-connection run_mcp_server "$@"
    else
        __MCPBASHD_SERVE_FLAGS=--http run_mcp_server "$@"
    fi
}

# The SDK's in-process API, for authors' own tests and for nested dispatch
# from inside a tool: each is a one-shot run of the daemon with this
# shell's functions and variables (never reading this shell's stdin).
process_request() {
    local __b __script
    __b=$(__mcpbashd_bin) || return $?
    __script=${BASH_SOURCE[${#BASH_SOURCE[@]} - 1]}
    # A one-shot run never runs the EXIT handler (it is the caller's).
    __mcpbashd_trap=
    # Nested in a call, the server is the one serving that call. (eval:
    # see __mcpbashd_serve.)
    local __st=0
    __mcpbashd_bashflag
    __mcpbashd_posix_off
    # shellcheck disable=SC2016 # expanded by the eval
    eval 'MCP_TOOLS_LIST_FILE="${MCP_TOOLS_LIST_FILE:-tools.json}" \
        MCP_CONFIG_FILE="${MCP_CONFIG_FILE:-config.json}" \
        "$__b" --oneshot ${__mcpbashd_bash:+--bash "$__mcpbashd_bash"} --snapshot-fd 3 --server-pid "${MCP_BASHD_SERVER_PID:-$$}" "$__script" <<<"${1:-}" \
        3< <(__mcpbashd_posix_on; __mcpbashd_dump)' || __st=$?
    __mcpbashd_posix_on
    return "$__st"
}

# handle_tools_call ID PARAMS_JSON (bash-mcp-sdk), or ID NAME [ARGS_JSON]
# (the 2026 SDK: a 2026-07-28 request, answered in that SDK's shape).
handle_tools_call() { __mcpbashd_direct __mcpbashd_call_req "$@"; }
__mcpbashd_call_req() {
    local __b
    __b=$(__mcpbashd_bin) || return $?
    "$__b" json call-request "$@"
}

# handle_initialize ID [PARAMS_JSON]
handle_initialize() { __mcpbashd_direct __mcpbashd_init_req "$@"; }
__mcpbashd_init_req() {
    printf '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":%s}' "${1:-null}" "${2:-{\}}"
}

# handle_tools_list ID
handle_tools_list() { __mcpbashd_direct __mcpbashd_list_req "$@"; }
__mcpbashd_list_req() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/list"}' "${1:-null}"; }

# __mcpbashd_direct MAKE ID [ARGS...] — process_request of the request
# `MAKE ID ARGS...` prints. The SDK's direct handlers take ID as any JSON
# literal and echo it (null, 1.5, true, {}): the id gate (a string or an
# integer) is the stream's. Such an ID goes in as a string of this call's
# own and is put back in the answer; one that is not JSON goes in as it is
# (and is refused as before).
__mcpbashd_direct() {
    local __mk=$1 __id=${2:-null} __b __lit __tok __pre __out __st=0 __line __re='^-?(0|[1-9][0-9]*)$'
    shift
    [ "$#" -eq 0 ] || shift
    case $__id in
    \"*) ;;
    *)
        if ! [[ $__id =~ $__re ]] && __b=$(__mcpbashd_bin) && __lit=$("$__b" json response "$__id" '{}' 2>/dev/null); then
            # The id compacted: {"jsonrpc":"2.0","id":ID,"result":{}}.
            __lit=${__lit#'{"jsonrpc":"2.0","id":'}
            __lit=${__lit%',"result":{}}'}
            __tok="mcp-bashd-direct-$$-$RANDOM$RANDOM"
        fi
        ;;
    esac
    if [ -z "${__tok:-}" ]; then
        process_request "$("$__mk" "$__id" "$@")"
        return
    fi
    __out=$(process_request "$("$__mk" "\"$__tok\"" "$@")") || __st=$?
    __pre="{\"jsonrpc\":\"2.0\",\"id\":\"$__tok\""
    if [ -n "$__out" ]; then
        while IFS= read -r __line; do
            case $__line in
            "$__pre"*) __line="{\"jsonrpc\":\"2.0\",\"id\":$__lit${__line#"$__pre"}" ;;
            esac
            printf '%s\n' "$__line"
        done <<<"$__out"
    fi
    return "$__st"
}

# validate_tool_arguments NAME ARGS_JSON — prints why the arguments are
# rejected and returns 1, or returns 0.
validate_tool_arguments() {
    local __b
    __b=$(__mcpbashd_bin) || return $?
    "$__b" json validate "${MCP_TOOLS_LIST_FILE:-tools.json}" "${1:-}" "${2:-}"
}

# Sourcing without the binary cannot serve anything: say so now, with the
# fix, rather than at the first call.
# (Not when a call's stub loads the helpers: the call is already served.)
[ -n "${__mcpbashd_lazy:-}" ] || __mcpbashd_bin >/dev/null || return 127 2>/dev/null || exit 127

# Whether the script was written for the 2026 SDK (mcp-server-bash-sdk),
# whose file sets no shell options: its config (MCP_CONFIG_FILE, set before
# sourcing as that SDK asks, or that SDK's default beside its file)
# declares supportedVersions, which a bash-mcp-sdk config never does (the
# daemon tells the two dialects apart the same way).
__mcpbashd_sdk2026() {
    local __f="${MCP_CONFIG_FILE:-${BASH_SOURCE[0]%/*}/assets/mcpserverconfig.json}" __c=
    { [ -f "$__f" ] && [ -r "$__f" ]; } || return 1
    IFS= read -r -d '' __c <"$__f" || :
    case $__c in *'"supportedVersions"'*) return 0 ;; esac
    return 1
}

# Sourcing bash-mcp-sdk's file left `set -euo pipefail` on in the server's
# shell, and scripts and their tools were written against that: an unset
# variable or a failed stage of a pipeline fails a tool. The same here,
# after the check above (a refused source leaves the caller's options
# alone), so the snapshot records what the SDK would have left, and a
# script that turns an option off afterwards keeps it off. Calls turn
# errexit off (worker.sh). Not when a call's stub loads the helpers (the
# call's options are set), nor when the daemon loads the shim ahead of a
# script (supervisor/load.go: the script's own source of the shim does it,
# as it did the SDK's), nor for a 2026 SDK server.
if [ -z "${__mcpbashd_lazy:-}" ] && [ -z "${__mcpbashd_preload:-}" ] && ! __mcpbashd_sdk2026; then
    set -euo pipefail
fi
