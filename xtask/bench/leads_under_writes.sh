#!/usr/bin/env bash
# The lead list while leads change: GET /leads?min_score=40&sort=-score&per_page=20&page=50 (and
# a first page with a text search, `q`, whose total is counted rather than summed) with wrk over COUNT
# stored leads (default 100,000), first with no writes, then while one lead's tags are updated
# every 0.5 s, then while also a scan inserts 1,000 new leads every 5 s.
# Usage: COUNT=1000000 bash xtask/bench/leads_under_writes.sh [postgres://…]
#   (no argument: the embedded SQLite default; DURATION per run, default 15s). BIN and SEED name
#   another build's server and seed_leads example (an earlier release, for a side-by-side run).
set -euo pipefail
cd "$(dirname "$0")/../.."
source xtask/bench/seeded.sh
# The scans read this file; the scanner loop below writes 1,000 new postings into it before each.
feed=$(mktemp)
: >"$feed"
seeded_server "$@" -- --lead-source "bulk=$feed"
dur=${DURATION:-15s}
source xtask/bench/wrk.sh
writer=$(sed -n 2p "$TOKENS")
lead=$(curl -s "$base/v1/prospector/leads?per_page=1" -H "Authorization: Bearer $writer" | sed 's/.*"id":"\(lead_[^"]*\)".*/\1/')
patches() { # one lead's tags changed every 0.5 s
  local k=0
  while :; do
    k=$((k + 1))
    curl -s -o /dev/null -X PATCH "$base/v1/prospector/leads/$lead" -H "Authorization: Bearer $writer" \
      -H 'content-type: application/json' -d "{\"tags\":[\"t$k\"]}"
    sleep 0.5
  done
}
scans() { # 1,000 new leads every 5 s
  local s=0 scanner
  scanner=$(sed -n 3p "$TOKENS")
  while :; do
    s=$((s + 1))
    python3 - "$feed" "$s" <<'PY'
import json, sys
path, scan = sys.argv[1], int(sys.argv[2])
with open(path, "w") as out:
    for i in range(1000):
        out.write(json.dumps({
            "id": f"bulk-{scan}-{i}", "platform": "upwork", "title": f"Rust service work {scan}-{i}",
            "url": f"https://example.com/jobs/{scan}-{i}",
            "description": "Build and operate a Rust API with PostgreSQL; async, tokio, axum.",
            "skills": ["Rust", "PostgreSQL", "Docker"][: 1 + i % 3],
            "budget": {"kind": "fixed", "min": 500 + i, "max": 2000 + i, "currency": "USD"},
            "client": {"name": "Bench client", "country": "US", "payment_verified": i % 2 == 0,
                       "jobs_posted": i % 40, "hires": i % 20, "total_spent": 1000 * (i % 50), "rating": 4.5},
            "proposals_count": i % 60, "posted_hours_ago": i % 72}) + "\n")
PY
    curl -s -o /dev/null -X POST "$base/v1/prospector/leads/scan" -H "Authorization: Bearer $scanner" \
      -H 'content-type: application/json' -d '{"sources":["bulk"]}'
    sleep 5
  done
}
run() { # scenario, query
  export QUERY=$2
  echo "| $backend | $count | $1 | $(wrk_cells rotate.lua "$base") |"
}
list="/v1/prospector/leads?min_score=40&sort=-score&per_page=20&page=50"
searched="/v1/prospector/leads?min_score=40&sort=-score&per_page=20&q=rust"
echo "| backend | leads | scenario | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|---|---|"
run "page 50, no writes" "$list"
run "text search, no writes" "$searched"
patches & p=$!
run "page 50, a write every 0.5 s" "$list"
run "text search, a write every 0.5 s" "$searched"
scans & s=$!
run "page 50, a write every 0.5 s and 1,000 new leads every 5 s" "$list"
kill $p $s 2>/dev/null || true
stored=$(curl -s "$base/v1/prospector/leads?per_page=1&status=new" -H "Authorization: Bearer $writer" | grep -o '"total":[0-9]*')
echo "new leads stored by the scans: ${stored#*:}"
