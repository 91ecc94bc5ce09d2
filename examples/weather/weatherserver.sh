#!/bin/bash
# Weather API implementation
#
# The weather server of the 2026-07-28 bash SDK's README ("Creating Your Own
# MCP Server"), unchanged in shape: both SDK files (mcpserver_core.sh and
# mcpserver_http.sh) are symlinks to mcp-bashd's shim. The README's tool
# calls a weather API with curl and reads its arguments with jq; this one
# answers from canned data and reads its one argument with a bash regex, so
# the example runs with no network and no jq.

# shellcheck disable=SC2034 # the MCP_* paths are read by the sourced core
# Override configuration paths BEFORE sourcing the core
MCP_CONFIG_FILE="$(dirname "${BASH_SOURCE[0]}")/assets/weatherserver_config.json"
MCP_TOOLS_LIST_FILE="$(dirname "${BASH_SOURCE[0]}")/assets/weatherserver_tools.json"
MCP_LOG_FILE="$(dirname "${BASH_SOURCE[0]}")/logs/weatherserver.log"

source "$(dirname "${BASH_SOURCE[0]}")/mcpserver_core.sh"
source "$(dirname "${BASH_SOURCE[0]}")/mcpserver_http.sh"

API_KEY="${MCP_API_KEY:-default_key}"

# The value of "location" in the arguments JSON, escapes kept as written.
# The daemon has already checked the arguments against the inputSchema.
LOCATION_RE='"location"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'

# Stands in for: curl -s "https://api.example.com/weather?location=...&apikey=..."
weather_api() {
  if [[ "$API_KEY" == "invalid" ]]; then
    echo "Weather API rejected the API key"
    return 1
  fi
  case "$1" in
    London) echo '{"location":"London","temperature_c":11,"conditions":"Light rain","humidity":82}' ;;
    Paris) echo '{"location":"Paris","temperature_c":14,"conditions":"Partly cloudy","humidity":64}' ;;
    Tokyo) echo '{"location":"Tokyo","temperature_c":19,"conditions":"Clear","humidity":55}' ;;
    *)
      echo "No weather data for location: $1"
      return 1
      ;;
  esac
}

# Tool: Get current weather for a location
tool_get_weather() {
  local args="$1"
  local location=""
  if [[ $args =~ $LOCATION_RE ]]; then
    location="${BASH_REMATCH[1]}"
  fi

  if [[ -z "$location" || "$location" == "null" ]]; then
    echo "Missing required parameter: location"   # reaches the model as isError
    return 1
  fi

  weather_api "$location" || return 1
  return 0
}

# stdio by default; --http serves the same tools over Streamable HTTP.
case "${1:-}" in
  --http)            shift; run_mcp_http_server "$@" ;;
  handle-connection) run_mcp_http_server handle-connection ;;
  *)                 run_mcp_server "$@" ;;
esac
