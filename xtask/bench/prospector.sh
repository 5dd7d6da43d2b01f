#!/usr/bin/env bash
# Loopback load test of the prospector with COUNT (default 100,000) stored leads:
# GET /leads?min_score=…&sort=-score with wrk, and POST /scoring/backtest over all of them.
# Usage: bash xtask/bench/prospector.sh [postgres://…]   (no argument: the embedded SQLite default)
# BIN=path/to/specwright serves with another build (an earlier release, for a side-by-side run), and
# SEED=path/to/seed_leads seeds with that build's example (its migrations must match the server's).
set -euo pipefail
cd "$(dirname "$0")/../.."
source xtask/bench/seeded.sh
seeded_server "$@"
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
