#!/usr/bin/env bash
# Builds side by side, alternated in one sitting: the vault's reveal, list of 20 and the same list
# as an MCP tools/call, over the seeding of `cargo xtask bench` (200 credentials, SQLite), each
# with requests/s and the server's CPU time per request (user + system, from /proc: steadier
# than the rate on a shared machine, whose speed can change between runs).
#   bash xtask/bench/ab.sh BINARY... [REFERENCE...]
# A path containing `ref` is run as the bench reference (`bench-reference vault`: no MCP).
# ROUNDS (3), DUR (6s), TOKENS_N (600 admin tokens, so no plan answers 429).
set -u
cd "$(dirname "$0")/../.."
sw=$1
port=$((20000 + RANDOM % 20000)); base="http://127.0.0.1:$port"
data=$(mktemp -d); common=(--data-dir "$data" --addr "127.0.0.1:$port")
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
tenant="bench$RANDOM"
"$sw" tenant create "$tenant" --admin alice "${common[@]}" >/dev/null
tokens=$data/tokens
for _ in $(seq "${TOKENS_N:-600}"); do "$sw" token --sub alice --tenant "$tenant" --scope vault:admin --ttl 3600 "${common[@]}"; done >"$tokens"
tok=$(head -n1 "$tokens")
up() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return; sleep 0.1; done; }
RUST_LOG=warn "$sw" serve "${common[@]}" 2>"$data/server.log" & pid=$!
up "$base/healthz"
for i in $(seq 1 200); do echo "{\"key\":\"seed-$i\",\"value\":\"seed-secret-$i\",\"tags\":[\"t$((i % 5))\"]}"; done |
  xargs -d "\n" -P 2 -I{} curl -sf -o /dev/null -X POST "$base/api/v1/credentials" -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d {}
kill $pid; wait $pid 2>/dev/null
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault.list_credentials","arguments":{"per_page":20}}}'
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
load() { # requests/s (server µs of CPU per request), and the count of non-2xx answers if any
  local c0 c1 out; c0=$(cpu)
  out=$(wrk -t2 -c32 -d"${DUR:-6s}" -s xtask/bench/rotate.lua "$base"); c1=$(cpu)
  echo "$out" | awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n=$1} /Requests\/sec/ {r=$2} /Non-2xx/ {b=$5}
    END {printf "%s (%.0f us)%s", r, c * 1e6 / hz / n, (b ? " NON-2XX " b : "")}'
}
for round in $(seq "${ROUNDS:-3}"); do
  for b in "$@"; do
    if [[ $(basename "$b") == *ref* ]]; then "$b" vault "127.0.0.1:$port" "$data" "$base" & pid=$!; up "$base/api/v1/credentials"
    else RUST_LOG=warn "$b" serve "${common[@]}" 2>>"$data/server.log" & pid=$!; up "$base/healthz"; fi
    reveal=$(METHOD=POST QUERY=/api/v1/credentials/seed-100/reveal BODY='{}' TOKENS=$tokens load)
    list=$(METHOD=GET QUERY="/api/v1/credentials?per_page=20" TOKENS=$tokens load)
    mcp=-
    [[ $(basename "$b") == *ref* ]] || mcp=$(METHOD=POST QUERY=/api/mcp BODY="$call" MCP=1 TOKENS=$tokens load)
    echo "round $round $(basename "$b"): reveal $reveal | list $list | mcp $mcp"
    kill $pid; wait $pid 2>/dev/null
  done
done
