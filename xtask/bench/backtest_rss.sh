#!/usr/bin/env bash
# Backtest end to end and the server's peak memory: serves DATA_DIR with BINARY, runs three backtests
# for TENANT (seeded by `cargo run --release -p prospector --example seed_leads -- DATA_DIR TENANT N`),
# prints each time and the server's RSS at idle and its peak (VmHWM) after them.
#   bash xtask/bench/backtest_rss.sh BINARY DATA_DIR TENANT
set -u
bin=${1:?binary}; data=${2:?data dir}; tenant=${3:?tenant}; port=$((20000 + RANDOM % 20000))
tok=$($bin token --sub u1 --tenant $tenant --scope prospector --plan team --ttl 3600 --data-dir $data --addr 127.0.0.1:$port)
RUST_LOG=warn $bin serve --data-dir $data --addr 127.0.0.1:$port 2>/dev/null & pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
body='{"weights":{"skill_match":40,"budget":20,"client_history":20,"competition":12,"timeline":8},"parameters":{"skills":["rust","postgresql","docker","rest","go","kubernetes"],"budget_floor":200,"budget_target":5000,"currency":"USD","max_competition":50,"stale_after_days":14,"evidence_prior":5,"top_tier_min_confidence":0.5}}'
for run in 1 2 3; do curl -s -o $data/bt_report.json -w '%{time_total}s ' -X POST "http://127.0.0.1:$port/v1/prospector/scoring/backtest" -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d "$body"; done
echo "| rss before ${base} kB, peak $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB | $(grep -o '"leads":[0-9]*' $data/bt_report.json | head -1) $(grep -o '"auc":[0-9.]*' $data/bt_report.json | head -2 | tr '\n' ' ')"
kill $pid; wait $pid 2>/dev/null
