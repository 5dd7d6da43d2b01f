#!/usr/bin/env bash
# MCP tasks side by side, in one run, against the release conformance service (`everything`) on
# SQLite, on the 2026-07-28 wire: `tools/call slow_compute {seconds: 0}` answered in the call (a
# client without the tasks extension) and `tasks/get` of a task of the same call, finished
# (its result read back from the platform's database). $ROUNDS rounds (default 2) of $DURATION
# each (default 6s), wrk -t2 -c32, $TOKENS tokens (default 3000) rotated so the plan never
# answers 429. Prints requests/s and the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
cargo build -q --release -p everything
bin=target/release/everything
dur=${DURATION:-6s}
rounds=${ROUNDS:-2}
port=$((20000 + RANDOM % 20000))
base="http://127.0.0.1:$port"
data=$(mktemp -d)
export EVERYTHING_ADDR="127.0.0.1:$port" EVERYTHING_DATA_DIR="$data" EVERYTHING_LOG_FORMAT=json
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
tokens=$data/tokens
for _ in $(seq "${TOKENS:-3000}"); do "$bin" token acme everything:read; done >"$tokens"
RUST_LOG=warn "$bin" 2>"$data/server.log" & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
meta() { # client capabilities → the request's _meta
  echo "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"bench\",\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":$1}"
}
tasks='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
create="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0},$(meta "$tasks")}}"
id=$(curl -sf "$base/mcp" -H "Authorization: Bearer $(head -1 "$tokens")" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' -H 'mcp-protocol-version: 2026-07-28' \
  -H 'mcp-method: tools/call' -H 'mcp-name: slow_compute' -d "$create" | sed 's/.*"taskId":"\([^"]*\)".*/\1/')
sleep 1
source xtask/bench/wrk.sh
call="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow_compute\",\"arguments\":{\"seconds\":0},$(meta '{}')}}"
get="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$id\",$(meta "$tasks")}}"
echo "| round | tools/call slow_compute (in the call) | tasks/get (finished task) | tasks/get ÷ tools/call |"
echo "|---|---|---|---|"
for r in $(seq "$rounds"); do
  c=$(MCP=2026 MCP_METHOD=tools/call MCP_NAME=slow_compute rps POST /mcp "$call")
  g=$(MCP=2026 MCP_METHOD=tasks/get MCP_NAME="$id" rps POST /mcp "$get")
  echo "| $r | $c | $g | $(ratio "$g" "$c") |"
done
