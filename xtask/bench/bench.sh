#!/usr/bin/env bash
# `cargo xtask bench [POSTGRES_URL]`: in one run on this machine, axum hello-world, the
# hand-written reference (xtask/bench/reference: the vault list and reveal on axum and sqlx, group
# commit included) and the generated routes served by `specwright`, over the same data directory,
# tokens and database (SQLite; PostgreSQL too when a URL is given). wrk -t2 -c32, $DURATION each
# (default 10s), tokens rotated so the vault's plan never answers 429. Prints each figure with its
# ratio to hello-world and, for the vault routes, to the reference.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
cargo build -q --release -p specwright -p bench-reference
sw=target/release/specwright
ref=target/release/bench-reference
dur=${DURATION:-10s}
port=$((20000 + RANDOM % 20000))
base="http://127.0.0.1:$port"
pids=()
admin_url=${1:-} # the trap runs where `$1` may be a function's argument
bench_db=
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$bench_db" ]; then sleep 0.5; psql "$admin_url" -qc "DROP DATABASE IF EXISTS $bench_db" >/dev/null || true; fi' EXIT
up() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return; sleep 0.1; done; echo "no answer at $1" >&2; exit 1; }
stop() { kill "$1"; wait "$1" 2>/dev/null || true; }
source xtask/bench/wrk.sh

"$ref" hello "127.0.0.1:$port" & pids+=($!); up "$base/"
hello=$(wrk -t2 -c32 -d"$dur" "$base/" | awk '/Requests\/sec/ {print $2}')
stop "${pids[-1]}"

bench_backend() { # NAME [DATABASE_URL]
  local name=$1 url=${2:-} data; data=$(mktemp -d)
  local common=(--data-dir "$data" --addr "127.0.0.1:$port")
  [ -n "$url" ] && common+=(--database-url "$url")
  local tenant="bench$RANDOM$RANDOM"
  "$sw" tenant create "$tenant" --admin alice "${common[@]}" >/dev/null
  tokens=$data/tokens
  for _ in $(seq 400); do "$sw" token --sub alice --tenant "$tenant" --scope vault:admin --ttl 3600 "${common[@]}"; done >"$tokens"
  # The seeding token is not among the rotated ones: its 200 writes would otherwise spend its
  # share of the plan's minute and wrk would count the last requests' 429s.
  local tok; tok=$("$sw" token --sub alice --tenant "$tenant" --scope vault:admin --ttl 3600 "${common[@]}")
  RUST_LOG=warn "$sw" serve "${common[@]}" 2>"$data/server.log" & pids+=($!); up "$base/healthz"
  for i in $(seq 1 200); do echo "{\"key\":\"seed-$i\",\"value\":\"seed-secret-$i\",\"tags\":[\"t$((i % 5))\"]}"; done |
    xargs -d "\n" -P 2 -I{} curl -sf -o /dev/null -X POST "$base/api/v1/credentials" -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d {}
  local healthz; healthz=$(wrk -t2 -c32 -d"$dur" "$base/healthz" | awk '/Requests\/sec/ {print $2}')
  local list reveal; list=$(rps GET "/api/v1/credentials?per_page=20"); reveal=$(rps POST /api/v1/credentials/seed-100/reveal '{}')
  local call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault.list_credentials","arguments":{"per_page":20}}}'
  local mcp; mcp=$(MCP=1 rps POST /api/mcp "$call")
  stop "${pids[-1]}"
  if [ -n "$url" ]; then "$ref" vault "127.0.0.1:$port" "$data" "$base" "$url" & else "$ref" vault "127.0.0.1:$port" "$data" "$base" & fi
  pids+=($!); up "$base/api/v1/credentials"
  local rlist rreveal; rlist=$(rps GET "/api/v1/credentials?per_page=20"); rreveal=$(rps POST /api/v1/credentials/seed-100/reveal '{}')
  stop "${pids[-1]}"
  echo "| $name | \`GET /healthz\` (specwright) | $healthz | $(ratio "$healthz" "$hello") | |"
  echo "| $name | vault list 20 of 200, reference | $rlist | $(ratio "$rlist" "$hello") | 1 |"
  echo "| $name | vault list 20 of 200, generated | $list | $(ratio "$list" "$hello") | $(ratio "$list" "$rlist") |"
  echo "| $name | vault reveal, reference | $rreveal | $(ratio "$rreveal" "$hello") | 1 |"
  echo "| $name | vault reveal, generated | $reveal | $(ratio "$reveal" "$hello") | $(ratio "$reveal" "$rreveal") |"
  echo "| $name | MCP tools/call vault.list_credentials (same 20), generated | $mcp | $(ratio "$mcp" "$hello") | $(ratio "$mcp" "$list") × the REST list |"
  rm -rf "$data"
}

echo "| backend | route | requests/s | × hello-world | × reference |"
echo "|---|---|---|---|---|"
echo "| – | axum hello-world | $hello | 1 | |"
bench_backend SQLite
if [ $# -ge 1 ]; then
  # A database of its own on that server, dropped afterwards: the vault's data keys are wrapped
  # by this run's master key, which a database left by an earlier run does not match.
  command -v psql >/dev/null || { echo "psql is needed to create the benchmark's database" >&2; exit 1; }
  bench_db="specwright_bench_$RANDOM$RANDOM"
  psql "$1" -qc "CREATE DATABASE $bench_db" >/dev/null
  server=${1%%\?*}
  bench_backend PostgreSQL "${server%/*}/$bench_db${1#"$server"}"
fi

# The team's hand-written anchor (an axum + rusqlite server doing the list's work, group-committed
# audit included; `../shared/perf` beside the repository, or $SPECWRIGHT_PERF_ANCHOR): three
# side-by-side runs of its own script against this build, each printing hello-world, /healthz, the
# anchor's list and this list with the two ratios.
anchor=${SPECWRIGHT_PERF_ANCHOR:-../shared/perf}
if [ -f "$anchor/run.sh" ]; then
  echo
  echo "anchor ($anchor/run.sh), commit $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs):"
  for run in 1 2 3; do echo "run $run: $(bash "$anchor/run.sh" "$sw" "${dur%s}")"; done
else
  echo
  echo "anchor: skipped ($anchor/run.sh not found; set SPECWRIGHT_PERF_ANCHOR to its folder)"
fi
