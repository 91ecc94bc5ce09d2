#!/usr/bin/env bash
# Builds both container images where a Docker engine exists.
#   scripts/build-images.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-$(git describe --tags --always 2>/dev/null || echo dev)}
if ! docker info >/dev/null 2>&1; then
    echo "build-images: no Docker engine reachable (docker info failed)" >&2
    exit 1
fi
for flavour in alpine debian; do
    docker build -f "Dockerfile.$flavour" --build-arg "VERSION=$version" -t "mcp-bashd:$version-$flavour" -t "mcp-bashd:$flavour" .
done
