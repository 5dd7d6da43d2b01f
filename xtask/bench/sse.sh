#!/usr/bin/env bash
# The change stream under load: the notes binary on SQLite in a fresh data directory, one client
# then CLIENTS clients of one tenant holding `GET /notes/changes` open while a writer creates
# CHANGES notes, 200 ms apart; prints each run's delivery latency (create answered → event read,
# over every client and change) and the server's memory idle and with the streams open.
#   bash xtask/bench/sse.sh [CLIENTS] [CHANGES]
#     (after cargo build --release -p notes -p notes --example sse_clients)
set -eu
clients=${1:-1000}; changes=${2:-20}
bin=target/release/notes; load=target/release/examples/sse_clients
dir=$(mktemp -d); port=$((20000 + RANDOM % 20000)); addr=127.0.0.1:$port
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
ulimit -n 20000 2>/dev/null || true
NOTES_ADDR=$addr NOTES_DATA_DIR="$dir" RUST_LOG=warn $bin 2>/dev/null & pid=$!
for _ in $(seq 100); do curl -sf "http://$addr/healthz" >/dev/null && break; sleep 0.1; done
$load "http://$addr" "$dir" $pid 1 "$changes"
$load "http://$addr" "$dir" $pid "$clients" "$changes"
