#!/usr/bin/env bash
# One route of the vault under load, as `cargo xtask bench` seeds it (200 credentials, 200 rotated
# admin tokens, wrk -t2 -c32, $DUR, default 8s): the REST list of 20, the same list as the MCP
# tools/call, or the reveal of one credential. Run it alternately for two builds to compare them in
# one sitting; `perf` as a third argument records the server (perf.MODE at the repository root).
#   bash xtask/bench/vault_route.sh BINARY rest|mcp|reveal [perf]
set -u
cd "$(dirname "$0")/../.."
sw=$1; mode=$2; port=$((20000 + RANDOM % 20000)); base="http://127.0.0.1:$port"
data=$(mktemp -d); common=(--data-dir "$data" --addr "127.0.0.1:$port")
tenant="bench$RANDOM"
"$sw" tenant create "$tenant" --admin alice "${common[@]}" >/dev/null
tokens=$data/tokens
for _ in $(seq 200); do "$sw" token --sub alice --tenant "$tenant" --scope vault:admin --ttl 3600 "${common[@]}"; done >"$tokens"
tok=$(head -n1 "$tokens")
RUST_LOG=warn "$sw" serve "${common[@]}" 2>"$data/server.log" & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
for i in $(seq 1 200); do echo "{\"key\":\"seed-$i\",\"value\":\"seed-secret-$i\",\"tags\":[\"t$((i % 5))\"]}"; done |
  xargs -d "\n" -P 2 -I{} curl -sf -o /dev/null -X POST "$base/api/v1/credentials" -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d {}
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault.list_credentials","arguments":{"per_page":20}}}'
run() {
  local load=(wrk -t2 -c32 -d"${DUR:-8s}" -s xtask/bench/rotate.lua "$base")
  case $mode in
    mcp) METHOD=POST QUERY=/api/mcp BODY="$call" MCP=1 TOKENS=$tokens "${load[@]}" ;;
    reveal) METHOD=POST QUERY=/api/v1/credentials/seed-100/reveal BODY='{}' TOKENS=$tokens "${load[@]}" ;;
    *) METHOD=GET QUERY="/api/v1/credentials?per_page=20" TOKENS=$tokens "${load[@]}" ;;
  esac
}
if [ "${3:-}" = perf ]; then perf record -g -p $pid -o perf.$mode 2>/dev/null & ppid=$!; fi
run | grep -E "Requests/sec|Non-2xx"
if [ "${3:-}" = perf ]; then kill -INT $ppid; wait $ppid 2>/dev/null; fi
kill $pid; wait $pid 2>/dev/null; rm -rf "$data"
