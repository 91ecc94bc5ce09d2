# shellcheck shell=bash
# shellcheck disable=SC2153 # the __MCPBASHD_* variables come from the daemon
# mcp-bashd worker prelude. Every process the daemon starts is
#   bash --noprofile --norc -c '. "$__MCPBASHD_WORKER"[THEN] # MODE [TOOL]' ZERO [ARGS...]
# in a new process group with stdin /dev/null, stdout and stderr on files
# of the daemon's choosing and the lifeline FIFO's read end on fd 3
# (supervisor/spawn.go; the call root's files: supervisor/callroot.go).
# What a call does once its shell is ready — a warm process's wait for its
# call, the hook and the tool — is worker_call.sh, sourced last; a fork
# server's processes (zygote mode) source it too.
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
if builtin test "$__MCPBASHD_MODE" = keeper; then
    # The keeper of forked calls' groups (supervisor/keeper_linux.go): no
    # sentinel (one would kill it with the daemon, before it has killed
    # its list). "+PGID" and "-PGID" lines on fd 4, the daemon's pipe;
    # EOF: the daemon is gone, and every group still listed is killed.
    builtin trap '' TERM INT HUP
    exec 3<&-
    __mcpbashd_g=()
    while IFS= builtin read -r -u 4 __mcpbashd_l; do
        case $__mcpbashd_l in
        +[0-9]*) __mcpbashd_g[${__mcpbashd_l#+}]=1 ;;
        -[0-9]*) builtin unset "__mcpbashd_g[${__mcpbashd_l#-}]" ;;
        esac
    done
    for __mcpbashd_l in "${!__mcpbashd_g[@]}"; do
        builtin kill -KILL "-$__mcpbashd_l"
    done 2>/dev/null
    builtin exit 0
fi
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
case $__MCPBASHD_MODE in
warm)
    # The sentinel's pid, for the daemon to show the call's tool in its
    # command line too (supervisor/warm.go): its argv is a copy of ours.
    builtin echo "$!" >&5
    exec 5>&-
    ;;
zygote)
    # Ready to be read (supervisor/zygote_linux.go); fd 5 stays for the
    # reports of the processes it forks.
    builtin echo "$!" >&5
    ;;
esac
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
__mcpbashd_call_sh=${__MCPBASHD_WORKER%/*}/worker_call.sh
__mcpbashd_snapshot=$__MCPBASHD_SNAPSHOT
__mcpbashd_exe=${__MCPBASHD_EXE:-}
# A resource, prompt or completion function (resource_NAME, …): its
# arguments are NUL-terminated in the args file (supervisor/funcs.go).
__mcpbashd_func=${__MCPBASHD_FUNC:-}
# The shim, for the snapshot's stubs of its helpers (loaded on first use).
__mcpbashd_shim_file=${__MCPBASHD_SHIM:-}
__mcpbashd_args=
__mcpbashd_argv=()
if builtin test "$__mcpbashd_mode" != warm && builtin test "$__mcpbashd_mode" != zygote; then
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


if builtin test "$__mcpbashd_mode" = zygote; then
    # A fork server (supervisor/zygote_linux.go): this shell has sourced the
    # snapshot once, and each "SEED DIR" it reads (NUL-ended) on fd 4 becomes
    # a warm process without an exec — a subshell J that, with job control
    # on, forks W into a group of W's own and exits, so W is reparented to
    # the daemon (the child subreaper) and the daemon alone reaps it. EOF:
    # retired. A second record, CTL, names W's control directory on a
    # tmpfs, where its FIFO, args and values are (empty: they are in DIR).
    while IFS= builtin read -r -d '' -u 4 __mcpbashd_l && IFS= builtin read -r -d '' -u 4 __mcpbashd_ctl; do
        (
            builtin set -m
            (
                builtin set +m
                exec 4<&-
                # DIR is the warm root the daemon made: its out file is fds
                # 1 and 2, its FIFO "hand" is where the call comes (fd 4), as
                # a spawned warm process's pipe. The working directory stays
                # the one the snapshot set.
                exec >>"${__mcpbashd_l#* }/out" 2>&1
                # No sentinel: the daemon's keeper lists W's group once W
                # has registered (supervisor/keeper_linux.go). Until then W
                # runs nothing of the server's, and a daemon that dies
                # leaves it EOF on the FIFO, which the daemon holds open.
                exec 4<"${__mcpbashd_ctl:-${__mcpbashd_l#* }}/hand"
                # No descriptor W inherited beyond its own (0-2, the FIFO,
                # the report pipe) may reach the tool, as none reaches a
                # spawned call's (what job control or a redirection left
                # open in the zygote or J when they forked).
                __mcpbashd_st=$-
                builtin set +f
                for __mcpbashd_p in /proc/self/fd/*; do
                    __mcpbashd_p=${__mcpbashd_p##*/}
                    case $__mcpbashd_p in
                    0 | 1 | 2 | 4 | 5 | *[!0-9]*) ;;
                    *) builtin eval "exec $__mcpbashd_p>&-" ;;
                    esac
                done
                case $__mcpbashd_st in *f*) builtin set -f ;; esac
                # A spawned call's shell starts at subshell level 0 with
                # RANDOM seeded of its own (bash 3.2 does not reseed forks).
                RANDOM=${__mcpbashd_l%% *}
                BASH_SUBSHELL=0
                # W reports itself once J is gone (its parent is the
                # daemon, PPID here): from then on only the daemon can
                # reap it, so the pid it registers stays W's. bash 3.2 has
                # no BASHPID; /proc/self/stat has the pid and the parent.
                __mcpbashd_i=0
                while :; do
                    IFS= builtin read -r -d '' __mcpbashd_st </proc/self/stat
                    __mcpbashd_p=${__mcpbashd_st%% *}
                    __mcpbashd_st=${__mcpbashd_st##*) }
                    __mcpbashd_st=${__mcpbashd_st#* }
                    builtin test "${__mcpbashd_st%% *}" = "$PPID" && builtin break
                    __mcpbashd_i=$((__mcpbashd_i + 1))
                    builtin test "$__mcpbashd_i" -lt 100000 || builtin exit 125
                done
                builtin printf '%s %s\n' "$__mcpbashd_p" "${__mcpbashd_l#* }" >&5
                exec 5>&-
                builtin unset __mcpbashd_l __mcpbashd_st __mcpbashd_p __mcpbashd_i
                __mcpbashd_mode=warm
                builtin . "$__mcpbashd_call_sh"
                builtin exit
            ) &
            builtin exit 0
        )
    done
    builtin exit 125
fi

builtin . "$__mcpbashd_call_sh"
