#!/usr/bin/env bash
# Proof without a Mac: every package of the product builds, vets and
# compiles its tests for darwin/arm64 and darwin/amd64 (CGO_ENABLED=0, as
# released), and the portable build — the POSIX process logic macOS runs,
# selected on Linux by -tags portable — builds and vets here. What runs
# is tested elsewhere: scripts/test.sh runs the contract and lifecycle
# tests under -tags portable. Nothing here runs a darwin binary.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export CGO_ENABLED=0
for arch in arm64 amd64; do
    echo "== darwin/$arch: build, vet, test compilation of every package"
    GOOS=darwin GOARCH=$arch go build ./...
    GOOS=darwin GOARCH=$arch go vet ./...
    GOOS=darwin GOARCH=$arch go test -c -o "$out/" ./...
    GOOS=darwin GOARCH=$arch go build -o "$out/mcp-bashd-darwin-$arch" ./cmd/mcp-bashd
done
echo "== linux, -tags portable: build, vet"
go build -tags portable ./...
go vet -tags portable ./...
echo "crosscheck: ok"
