# shellcheck shell=bash
# shellcheck disable=SC2153 # the __MCPBASHD_* variables come from the daemon
# mcp-bashd worker prelude. Every process the daemon starts is
#   bash --noprofile --norc -c '. "$__MCPBASHD_WORKER"[THEN] # MODE [TOOL]' ZERO [ARGS...]
# in a new process group with stdin /dev/null, stdout and stderr on files
# of the daemon's choosing and the lifeline FIFO's read end on fd 3
# (supervisor/spawn.go; the call root's files: supervisor/callroot.go).
# The lifeline steps come first, for every MODE. Everything after the
# snapshot is sourced uses builtin-prefixed commands and plain
# redirections, so a server's functions, PATH and options cannot change
# what these steps do.

# The daemon is gone (the FIFO is already at EOF): never start the tool.
if builtin read -r -t 0 -u 3; then builtin exit 125; fi
# A plain exec: `builtin exec 3<&-` would treat the redirection as that one
# command's and restore fd 3. Nothing can shadow exec yet except a function
# exported through the environment, so drop that first.
builtin unset -f exec
# The sentinel: it ignores the signals a cancellation sends, waits for EOF
# on the lifeline and then kills everything left in the call's group. (Fd 5
# is a warm process's report pipe, the daemon's to read: not held here.)
(
    builtin trap '' TERM INT HUP
    exec 5>&-
    builtin read -r -u 3
    builtin kill -KILL 0
) &
# Not one of the tool's jobs: a plain `wait` or `jobs` in the tool must see
# only what the tool itself started.
builtin disown $!
if builtin test "$__MCPBASHD_MODE" = warm; then
    # The sentinel's pid, for the daemon to show the call's tool in its
    # command line too (supervisor/warm.go): its argv is a copy of ours.
    builtin echo "$!" >&5
    exec 5>&-
fi
exec 3<&-

# The modes that run no code of the server's snapshot.
case $__MCPBASHD_MODE in
load)
    # THEN goes on in this shell: the shim, the script's top level and
    # run_mcp_server, in the shell they would see without the prelude.
    builtin unset __MCPBASHD_WORKER __MCPBASHD_MODE
    builtin return 0
    ;;
check)
    # A syntax error does not stop a load; bash -n finds it.
    builtin unset __MCPBASHD_WORKER __MCPBASHD_MODE
    builtin exec "$BASH" --noprofile --norc -n "$0"
    ;;
list)
    # A --tools-dir executable lists its tools. A child, not an exec: the
    # sentinel must not become the executable's own child (a wait for all
    # its children would wait for the sentinel too).
    __mcpbashd_exe=$__MCPBASHD_EXE
    builtin unset __MCPBASHD_WORKER __MCPBASHD_MODE __MCPBASHD_EXE
    "$__mcpbashd_exe" list
    builtin exit
    ;;
esac

__mcpbashd_mode=$__MCPBASHD_MODE
__mcpbashd_snapshot=$__MCPBASHD_SNAPSHOT
__mcpbashd_exe=${__MCPBASHD_EXE:-}
# A resource, prompt or completion function (resource_NAME, …): its
# arguments are NUL-terminated in the args file (supervisor/funcs.go).
__mcpbashd_func=${__MCPBASHD_FUNC:-}
# The shim, for the snapshot's stubs of its helpers (loaded on first use).
__mcpbashd_shim_file=${__MCPBASHD_SHIM:-}
__mcpbashd_args=
__mcpbashd_argv=()
if builtin test "$__mcpbashd_mode" != warm; then
    __mcpbashd_root=$__MCPBASHD_ROOT
    __mcpbashd_tool=$__MCPBASHD_TOOL
    IFS= builtin read -r -d '' __mcpbashd_args <"$__mcpbashd_root/args"
    if builtin test -n "$__mcpbashd_func"; then
        while IFS= builtin read -r -d '' __mcpbashd_a; do
            __mcpbashd_argv[${#__mcpbashd_argv[@]}]=$__mcpbashd_a
        done <"$__mcpbashd_root/args"
    fi
fi
builtin unset __MCPBASHD_ROOT __MCPBASHD_TOOL __MCPBASHD_MODE __MCPBASHD_SNAPSHOT __MCPBASHD_WORKER __MCPBASHD_EXE __MCPBASHD_SHIM __MCPBASHD_FUNC

builtin . "$__mcpbashd_snapshot"
{ __mcpbashd_options; } 2>/dev/null
builtin set +e
# Whether the server has a before-tool hook is the snapshot's to say:
# known here, before a warm process blocks, not on its call's path.
__mcpbashd_hook=
if builtin declare -F mcp_before_tool_call >/dev/null; then __mcpbashd_hook=1; fi

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
    # shellcheck disable=SC2034 # exported to the tool and the shim
    builtin export MCP_CALL_TMPDIR="$__mcpbashd_root/tmp" MCP_BASHD_EVENTS="$__mcpbashd_root/events" MCP_BASHD_CONTENT="$__mcpbashd_root/content" MCP_BASHD_ARGS="$__mcpbashd_root/values"
    IFS= builtin read -r -d '' __mcpbashd_args <"$__mcpbashd_root/args"
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
