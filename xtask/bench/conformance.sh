#!/usr/bin/env bash
# The conformance kit against the release binary: ROUNDS (default 5) rounds, each on a fresh
# `specwright serve` (a fresh data directory, so the kit's 401 checks never meet the prospector's
# anonymous limit of 60 a minute). Per round: `specwright conformance` end to end (process start,
# key and contract loading, every check) with the CPU time the kit process used, the run time it
# reports itself, and, as the reference
# on the same server, as many HTTP requests sent one after another on one connection by curl: the
# same PRM and OpenAPI documents, and /healthz (the least a request costs there) for the rest.
# Prints each figure and their ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed (apt-get install time)" >&2; exit 1; }
cargo build -q --release -p specwright
sw=target/release/specwright
rounds=${ROUNDS:-5}
port=$((20000 + RANDOM % 20000))
base="http://127.0.0.1:$port"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null || true' EXIT
ms() { date +%s%N | awk '{ printf "%d", $1 / 1000000 }'; }
echo "round  checks  requests  kit_wall_ms  kit_cpu_ms  kit_run_ms  curl_same_requests_ms  kit_run/curl"
for r in $(seq "$rounds"); do
  data=$(mktemp -d)
  "$sw" serve --data-dir "$data" --addr "127.0.0.1:$port" 2>/dev/null & pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
  cpu=$(mktemp)
  t0=$(ms); out=$(/usr/bin/time -o "$cpu" -f "%U %S" "$sw" conformance --url "$base" --data-dir "$data"); t1=$(ms)
  cpu_ms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$cpu"); rm -f "$cpu"
  summary=$(echo "$out" | tail -1)
  echo "$summary" | grep -q " 0 failed" || { echo "$out" >&2; exit 1; }
  checks=$(echo "$summary" | awk '{print $1}')
  run_ms=$(echo "$summary" | awk '{print $(NF-1)}')
  # Every check sends one request but a tool's SCOPE line, read from the one tools/list.
  requests=$((checks - $(echo "$out" | grep -c "tool SCOPE line")))
  # The reference fetches the same documents (PRM, OpenAPI), and /healthz for every other request.
  docs=$(echo "$out" | awk '$3 == "PRM" { print $NF } $3 == "OpenAPI" { print $NF }')
  urls=(); for d in $docs; do urls+=(-o /dev/null "$base$d"); done
  for _ in $(seq $((requests - $(echo "$docs" | wc -l)))); do urls+=(-o /dev/null "$base/healthz"); done
  c0=$(ms); curl -s "${urls[@]}"; c1=$(ms)
  curl_ms=$((c1 - c0))
  echo "$r  $checks  $requests  $((t1 - t0))  $cpu_ms  $run_ms  $curl_ms  $(awk -v a="$run_ms" -v b="$curl_ms" 'BEGIN { printf "%.1f", a / b }')"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  rm -rf "$data"
done
