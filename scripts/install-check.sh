#!/usr/bin/env bash
# The release installed for real (run by .ci/run after the tests): makes a
# release, installs its .deb for this machine with dpkg -i, checks that
# `mcp-bashd version` prints the stamped version and that the greeter
# (examples/greeter/server.sh, whose shim finds mcp-bashd on PATH) answers
# the README's five requests through the installed binary, then purges the
# package. tests/release_test.go checks every file of every archive and
# package without installing anything.
#
# dpkg -i needs root: without it (a developer's run of .ci/run), it says so
# and skips. An mcp-bashd package already installed that this script did not
# leave (another version than its own) is yours: it skips rather than
# replace and purge it.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.0.0-pre
deb_version=${version/-/\~}

skip() {
    echo "== install check: SKIPPED ($1)"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "dpkg -i needs root; run it as root: scripts/install-check.sh"
command -v dpkg >/dev/null 2>&1 || skip "no dpkg on this machine"
have=$(dpkg-query -W -f='${Status} ${Version}' mcp-bashd 2>/dev/null || true)
case $have in
*" ok installed $deb_version" | "" | *" not-installed "*) ;;
*) skip "an mcp-bashd package is installed: $have" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bashd-install.XXXXXX")
installed=
cleanup() {
    if [ -n "$installed" ]; then
        dpkg --purge mcp-bashd >/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "== release $version"
go run ./scripts/release -version "$version" -out "$work/dist"
deb=$work/dist/mcp-bashd_${deb_version}_$(dpkg --print-architecture).deb

echo "== dpkg -i $(basename "$deb")"
installed=yes
dpkg -i "$deb"

# Only the system directories on PATH: what answers is the installed binary.
sys_path=/usr/bin:/bin
got=$(PATH=$sys_path mcp-bashd version)
echo "   mcp-bashd version: $got"
[ "$got" = "mcp-bashd $version" ] || { echo "install check: want 'mcp-bashd $version'" >&2; exit 1; }
cmp /usr/share/mcp-bashd/mcpserver_core.sh scripts/mcpserver_core.sh

echo "== the greeter through /usr/bin/mcp-bashd"
responses=$(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}' \
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"count"}}' \
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"count"}}' |
    env -u MCP_BASHD PATH=$sys_path MCP_LOG_FILE=/dev/null ./examples/greeter/server.sh)
printf '%s\n' "$responses" | sed 's/^/   /'
for want in '"id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"greeter"' \
    '"id":2,"result":{"tools":[{"name":"greet"' \
    '"id":3,"result":{"content":[{"type":"text","text":"Hello, Ada"}],"isError":false}'; do
    grep -qF "$want" <<<"$responses" || { echo "install check: no response with $want" >&2; exit 1; }
done
counts=$(grep -oE '"id":[45],"result":\{"content":\[\{"type":"text","text":"[0-9]+"' <<<"$responses" | grep -oE '[0-9]+"$' | sort | tr -d '"\n')
[ "$counts" = 12 ] || { echo "install check: the two count calls answered '$counts', want 1 and 2" >&2; exit 1; }

echo "== dpkg --purge mcp-bashd"
dpkg --purge mcp-bashd >/dev/null
installed=
if [ -e /usr/bin/mcp-bashd ] || [ -e /usr/share/mcp-bashd ]; then
    echo "install check: files left after dpkg --purge" >&2
    exit 1
fi
echo "INSTALL CHECK PASSED"
