#!/usr/bin/env bash
# Loopback load test of the prospector with COUNT (default 100,000) stored leads:
# GET /leads?min_score=…&sort=-score with wrk, and POST /scoring/backtest over all of them.
# Usage: bash xtask/bench/prospector.sh [postgres://…]   (no argument: the embedded SQLite default)
# BIN=path/to/specwright serves with another build (an earlier release, for a side-by-side run), and
# SEED=path/to/seed_leads seeds with that build's example (its migrations must match the server's).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)" >&2; exit 1; }
cargo build -q --release -p specwright --bin specwright
cargo build -q --release -p prospector --example seed_leads
bin=${BIN:-target/release/specwright}
count=${COUNT:-100000}
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
common=(--data-dir "$data" --addr "127.0.0.1:$port")
[ $# -ge 1 ] && { common+=(--database-url "$1"); export DATABASE_URL=$1; }
backend=${1:+PostgreSQL}; backend=${backend:-SQLite}
tenant="bench$port"
${SEED:-target/release/examples/seed_leads} "$data" "$tenant" "$count"
# Team plan: 300/minute per token; 600 tokens keep a 15 s run well under every token's limit.
export TOKENS="$data/tokens"
# One token first, so that builds before the first key was created atomically never race on it.
$bin token --sub u0 --tenant "$tenant" --scope prospector --plan team --ttl 3600 "${common[@]}" >/dev/null
seq 1 600 | xargs -P 2 -I{} $bin token --sub "u{}" --tenant "$tenant" --scope prospector --plan team --ttl 3600 "${common[@]}" >"$TOKENS"
RUST_LOG=warn $bin serve "${common[@]}" 2>"$data/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"
dur=${DURATION:-15s}
source xtask/bench/wrk.sh
row() {
  export QUERY=$2
  echo "| $backend | $count | $1 | $(wrk_cells rotate.lua "$base") |"
}
echo "| backend | leads | scenario | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|---|---|"
row "min_score=70, -score, first page of 20" "/v1/prospector/leads?min_score=70&sort=-score&per_page=20"
row "min_score=40, -score, page 50 of 20" "/v1/prospector/leads?min_score=40&sort=-score&per_page=20&page=50"
row "min_score=70, -score, 100 per page" "/v1/prospector/leads?min_score=70&sort=-score&per_page=100"
body='{"weights":{"skill_match":40,"budget":20,"client_history":20,"competition":12,"timeline":8},
 "parameters":{"skills":["rust","postgresql","docker","rest","go","kubernetes"],"budget_floor":200,"budget_target":5000,
 "currency":"USD","max_competition":50,"stale_after_days":14,"evidence_prior":5,"top_tier_min_confidence":0.5}}'
token=$(head -1 "$TOKENS")
for run in 1 2 3; do
  t=$(curl -s -o "$data/report.json" -w '%{time_total}' -X POST "$base/v1/prospector/scoring/backtest" \
      -H "Authorization: Bearer $token" -H 'content-type: application/json' -d "$body")
  echo "backtest run $run over $count leads ($backend): ${t}s; $(grep -o '"leads":[0-9]*' "$data/report.json" | head -1)"
done
