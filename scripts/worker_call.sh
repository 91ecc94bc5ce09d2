# shellcheck shell=bash
# shellcheck disable=SC2154 # the __mcpbashd_* variables come from worker.sh
# mcp-bashd worker, second part: sourced by worker.sh (every mode that runs
# the server's code) once the snapshot is sourced, in the same shell, or by
# a fork server's process (supervisor/zygote_linux.go) forked after it.
if builtin test "$__mcpbashd_mode" = warm; then
    # A warm process (supervisor/warm.go): everything above was done before
    # its call came. Blocked here until the daemon hands it exactly one:
    # the tool's name and the call's root (EOF: the process was retired
    # unused). The root's variables are the ones
    # root.env gives a cold call; fd 4 goes before any of the call's code
    # runs (the daemon does not warm a snapshot that defines exec, or makes
    # IFS read-only).
    # The daemon writes "LENGTH TOOL/ROOT" (tool names hold no slash, the
    # root is absolute). bash reads a pipe one byte per read(2), except
    # with -N (bash 4.1 and later), which takes the message in one.
    builtin read -r -d ' ' -u 4 __mcpbashd_l || builtin exit 125
    # LENGTH counts bytes and -N characters: with a multibyte locale and
    # name, -N asks for more than there is and stops at the EOF that
    # follows the message (a non-zero status, the message read).
    __mcpbashd_root=
    if builtin test "${BASH_VERSINFO[0]}" -ge 5; then
        builtin read -r -N "$__mcpbashd_l" -u 4 __mcpbashd_root
    else
        builtin read -r -d '' -u 4 __mcpbashd_root
    fi
    builtin test -n "$__mcpbashd_root" || builtin exit 125
    exec 4<&-
    __mcpbashd_tool=${__mcpbashd_root%%/*}
    __mcpbashd_root=/${__mcpbashd_root#*/}
    # A forked process's args and values are in its control directory
    # (worker.sh, zygote mode), a spawned one's in its root.
    __mcpbashd_c=${__mcpbashd_ctl:-$__mcpbashd_root}
    # shellcheck disable=SC2034 # exported to the tool and the shim
    builtin export MCP_CALL_TMPDIR="$__mcpbashd_root/tmp" MCP_BASHD_EVENTS="$__mcpbashd_root/events" MCP_BASHD_CONTENT="$__mcpbashd_root/content" MCP_BASHD_ARGS="$__mcpbashd_c/values"
    IFS= builtin read -r -d '' __mcpbashd_args <"$__mcpbashd_c/args"
    builtin unset __mcpbashd_c __mcpbashd_ctl
    # A cold call's shell starts when its call does.
    SECONDS=0
    __mcpbashd_mode=call
fi

case $__mcpbashd_mode in
call)
    if builtin test -n "$__mcpbashd_hook"; then
        { builtin shopt -p; builtin set +o; } >|"$__mcpbashd_root/opts"
        builtin printf hook >|"$__mcpbashd_root/phase"
        mcp_before_tool_call "$__mcpbashd_tool" "$__mcpbashd_args" >|"$__mcpbashd_root/hook" 2>&1
        __mcpbashd_st=$?
        # Each saved line is a shopt or set command; run it as the builtin
        # so functions the hook defined (shopt, set) cannot intercept it.
        while IFS= builtin read -r __mcpbashd_l; do
            builtin eval "builtin $__mcpbashd_l" 2>/dev/null
        done <"$__mcpbashd_root/opts"
        builtin set +e
        if builtin test "$__mcpbashd_st" -ne 0; then
            builtin printf 'refused %d' "$__mcpbashd_st" >|"$__mcpbashd_root/phase"
            builtin exit 0
        fi
        builtin printf tool >|"$__mcpbashd_root/phase"
    fi
    if builtin test -n "$__mcpbashd_func"; then
        "$__mcpbashd_func" ${__mcpbashd_argv[@]+"${__mcpbashd_argv[@]}"}
    else
        "tool_$__mcpbashd_tool" "$__mcpbashd_args"
    fi
    ;;
exec)
    # A --tools-dir executable: EXE NAME ARGS_JSON, as that system ran it.
    "$__mcpbashd_exe" "$__mcpbashd_tool" "$__mcpbashd_args"
    ;;
cancel)
    if builtin test -n "$__mcpbashd_func"; then
        if builtin declare -F "${__mcpbashd_func}_cancel" >/dev/null; then
            "${__mcpbashd_func}_cancel" ${__mcpbashd_argv[@]+"${__mcpbashd_argv[@]}"}
        fi
    elif builtin declare -F "tool_${__mcpbashd_tool}_cancel" >/dev/null; then
        "tool_${__mcpbashd_tool}_cancel" "$__mcpbashd_args"
    fi
    ;;
exit)
    # Installing the captured EXIT trap and leaving runs the server's own
    # handler exactly as bash would at the end of the script.
    __mcpbashd_exit_trap
    builtin exit 0
    ;;
esac
