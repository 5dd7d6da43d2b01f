#!/usr/bin/env bash
# CPU per request of the server for one lead list query over COUNT (default 100,000) seeded leads:
# two 8 s wrk runs (2 threads, 32 connections), the server's user + system time read from
# /proc/PID/stat around each, divided by the requests wrk counted.
# Usage: [BIN=…] [Q=/v1/prospector/leads?…] [COUNT=…] bash xtask/bench/cpu_per_request.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source xtask/bench/seeded.sh
COUNT=${COUNT:-100000} seeded_server
export QUERY=${Q:-/v1/prospector/leads?min_score=70&sort=-score&per_page=100}
ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
sys() { awk '{print $15}' /proc/$1/stat; }
for r in 1 2; do
s0=$(ticks $pid); y0=$(sys $pid)
out=$(wrk -t2 -c32 -d8s --latency -s xtask/bench/rotate.lua "$base")
s1=$(ticks $pid); y1=$(sys $pid)
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}'); n=$(echo "$out" | awk '/requests in/ {print $1}')
p99=$(echo "$out" | awk '$1=="99%" {print $2}')
awk -v r=$r -v q=$rps -v p=$p99 -v n=$n -v t=$((s1 - s0)) -v y=$((y1 - y0)) -v hz=$(getconf CLK_TCK) \
  'BEGIN { printf "run %d: %s req/s, p99 %s; server CPU per request %.0f µs, of which system %.0f µs\n", r, q, p, t * 1e6 / hz / n, y * 1e6 / hz / n }'
done
