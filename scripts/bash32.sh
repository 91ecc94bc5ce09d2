#!/usr/bin/env bash
# Prints the path of a bash 3.2 (the language of macOS's /bin/bash), built
# once from the bash 3.2 source kept beside the repository
# (../shared/tools/bash-3.2, or MCP_BASHD_BASH32_SRC) into a cache directory
# outside it (MCP_BASHD_BASH32_CACHE, default ~/.cache/mcp-bashd/bash-3.2).
# Building needs a C compiler and make (build-essential), about a minute.
# Exit 2: no source here (a user's clone), so the bash 3.2 tests skip.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=${MCP_BASHD_BASH32_SRC:-$root/../shared/tools/bash-3.2}
cache=${MCP_BASHD_BASH32_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-bashd/bash-3.2}
# shellcheck disable=SC2016 # expanded by the bash being checked
is32() { [ -x "$1" ] && "$1" -c '[ "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}" = 3.2 ]' 2>/dev/null; }
if is32 "$cache/bin/bash"; then
    printf '%s\n' "$cache/bin/bash"
    exit 0
fi
if [ ! -f "$src/build.sh" ] || [ ! -f "$src/bash-3.2.tar.gz" ]; then
    echo "bash32.sh: no bash 3.2 source (build.sh and bash-3.2.tar.gz) in $src" >&2
    exit 2
fi
for tool in cc make; do
    command -v "$tool" >/dev/null || { echo "bash32.sh: building bash 3.2 needs $tool (apt-get install build-essential)" >&2; exit 1; }
done
echo "bash32.sh: building bash 3.2 into $cache (about a minute)" >&2
# build.sh's last line is the path; a concurrent build of the same cache
# ends with the same file copied into place.
out=$(bash "$src/build.sh" "$cache")
bin=${out##*$'\n'}
is32 "$bin" || { echo "bash32.sh: $bin is not a bash 3.2" >&2; exit 1; }
printf '%s\n' "$bin"
