#!/usr/bin/env bash
# Same-run comparison of two release binaries of `specwright` (OLD and NEW, paths as arguments):
# GET /healthz and the vault list (20 credentials, admin JWT, SQLite), wrk -t2 -c32 -d10s each,
# alternating three rounds so drift on the shared machine hits both alike.
#   bash xtask/bench/server_compare.sh OLD_BINARY NEW_BINARY
set -u
OLD=${1:?old binary}; NEW=${2:?new binary}
run() { # name bin port
  local name=$1 bin=$2 port=$3 dir; dir=$(mktemp -d)
  $bin tenant create acme --admin alice --data-dir $dir --addr 127.0.0.1:$port >/dev/null
  local tok; tok=$($bin token --sub alice --tenant acme --scope vault:admin --data-dir $dir --addr 127.0.0.1:$port)
  $bin serve --data-dir $dir --addr 127.0.0.1:$port >/dev/null 2>&1 & local pid=$!
  for i in $(seq 50); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
  for i in $(seq 20); do curl -s -X POST http://127.0.0.1:$port/api/v1/credentials -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d "{\"key\":\"k$i\",\"value\":\"v\"}" >/dev/null; done
  local h l
  h=$(wrk -t2 -c32 -d10s http://127.0.0.1:$port/healthz | awk '/Requests\/sec/ {print $2}')
  l=$(wrk -t2 -c32 -d10s -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/api/v1/credentials?per_page=20" | awk '/Requests\/sec/ {print $2}')
  echo "$name healthz=$h list=$l"
  kill $pid; wait $pid 2>/dev/null; rm -rf $dir
}
for round in 1 2 3; do
  run old "$OLD" 18081
  run new "$NEW" 18082
done
