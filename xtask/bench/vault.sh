#!/usr/bin/env bash
# Loopback load test of the vault: authenticated list (REST and MCP), reveal and store, with wrk.
# Usage: bash xtask/bench/vault.sh [postgres://…]   (no argument: the embedded SQLite default)
# Prints one Markdown row per scenario: requests/s, p50, p99, errors.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)" >&2; exit 1; }
cargo build -q --release -p specwright
bin=target/release/specwright
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
common=(--data-dir "$data" --addr "127.0.0.1:$port")
[ $# -ge 1 ] && common+=(--database-url "$1")
backend=${1:+PostgreSQL}; backend=${backend:-SQLite}
$bin tenant create "bench$port" --admin alice "${common[@]}" >/dev/null
export TOKEN=$($bin token --sub alice --tenant "bench$port" --scope vault:admin --ttl 3600 "${common[@]}")
RUST_LOG=warn $bin serve "${common[@]}" 2>"$data/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"
export FOLDER=$(curl -s -X POST "$base/api/v1/folders" -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"bench"}' | sed -E 's/.*"id":"([^"]+)".*/\1/')
# 1,000 credentials to list and reveal from.
for i in $(seq 1 1000); do echo "{\"key\":\"seed-$i\",\"value\":\"seed-secret-$i\",\"folder_id\":\"$FOLDER\"}"; done |
  xargs -d "\n" -P 2 -I{} curl -s -o /dev/null -X POST "$base/api/v1/credentials" -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d {}
export KEY=seed-500
dur=${DURATION:-15s}
source xtask/bench/wrk.sh
row() {
  export RUN="r$RANDOM"
  echo "| $backend | $1 | $(wrk_cells "$2" "$base") |"
}
echo "| backend | scenario | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|---|"
row "list (20 of 1,000)" list.lua
row "MCP tools/call vault.list_credentials (same 20)" mcp_list.lua
row "reveal" reveal.lua
row "store (new key each)" store.lua
