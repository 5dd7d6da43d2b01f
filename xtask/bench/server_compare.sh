#!/usr/bin/env bash
# Same-run comparison of two release binaries of `specwright` (OLD and NEW, paths as arguments):
# GET /healthz, the vault list (20 credentials, admin JWTs rotated so the plan limit never answers 429, SQLite)
# and the vault's create (a write: a new credential per request, sealed and audited), wrk -t2 -c32 -d10s each,
# alternating three rounds so drift on the shared machine hits both alike.
#   bash xtask/bench/server_compare.sh OLD_BINARY NEW_BINARY
# OLD_ARGS and NEW_ARGS (environment) add `serve` flags to either side, so one binary can be
# compared with itself under two settings (e.g. NEW_ARGS="--metrics-addr 127.0.0.1:19464").
set -u
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
cd "$(dirname "$0")/../.."
OLD=${1:?old binary}; NEW=${2:?new binary}
# Two trees built into one target directory can leave the second build's binary stale (cargo
# judges workspace crates by relative paths and times): identical files are refused, unless the
# two sides differ by their flags.
if cmp -s "$OLD" "$NEW" && [ "${OLD_ARGS:-}" = "${NEW_ARGS:-}" ]; then
  echo "$OLD and $NEW are the same file: nothing to compare" >&2; exit 1
fi
run() { # name bin port [serve flags]
  local name=$1 bin=$2 port=$3 extra=${4:-} dir; dir=$(mktemp -d)
  $bin tenant create acme --admin alice --data-dir $dir --addr 127.0.0.1:$port >/dev/null
  local tok; tok=$($bin token --sub alice --tenant acme --scope vault:admin --data-dir $dir --addr 127.0.0.1:$port)
  # The vault's `standard` plan allows 600 requests a minute per token: the list rotates over 400.
  for i in $(seq 400); do $bin token --sub alice --tenant acme --scope vault:admin --data-dir $dir --addr 127.0.0.1:$port; done >$dir/tokens
  $bin serve --data-dir $dir --addr 127.0.0.1:$port $extra >/dev/null 2>&1 & local pid=$!
  for i in $(seq 50); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
  for i in $(seq 20); do curl -s -X POST http://127.0.0.1:$port/api/v1/credentials -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d "{\"key\":\"k$i\",\"value\":\"v\"}" >/dev/null; done
  local h l
  h=$(wrk -t2 -c32 -d10s http://127.0.0.1:$port/healthz | awk '/Requests\/sec/ {print $2}')
  local out; out=$(TOKENS=$dir/tokens QUERY="/api/v1/credentials?per_page=20" wrk -t2 -c32 -d10s -s xtask/bench/rotate.lua http://127.0.0.1:$port)
  l=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  local bad; bad=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  out=$(TOKENS=$dir/tokens METHOD=POST BODY='{"key":"w{n}","value":"v"}' QUERY="/api/v1/credentials" wrk -t2 -c32 -d10s -s xtask/bench/rotate.lua http://127.0.0.1:$port)
  local c; c=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  local cbad; cbad=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  echo "$name healthz=$h list=$l list_non2xx=${bad:-0} create=$c create_non2xx=${cbad:-0}"
  kill $pid; wait $pid 2>/dev/null; rm -rf $dir
}
for round in 1 2 3; do
  run old "$OLD" 18081 "${OLD_ARGS:-}"
  run new "$NEW" 18082 "${NEW_ARGS:-}"
done
