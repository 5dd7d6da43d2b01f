#!/usr/bin/env bash
# Writes on PostgreSQL with and without announcing them to the other replicas, side by side: two
# release `notes` binaries, OLD (built before resource subscriptions) and NEW (which, once a call
# that may change data commits, announces it with `pg_notify` from one batching task, outside the
# call's transaction, and listens on a connection of its own), serve the same PostgreSQL server in
# turn, each on a fresh database; `POST /api/v1/notes` (a new note per request), wrk -t2 -c32 for
# $DURATION (default 10s), $ROUNDS rounds alternated (default 3), $TOKENS tokens rotated so the
# plan never answers 429 (default 1500). Prints requests/s and NEW ÷ OLD per round.
#   bash xtask/bench/pg_announce.sh OLD_BINARY NEW_BINARY [POSTGRES_URL]
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
command -v psql >/dev/null || { echo "psql is needed" >&2; exit 1; }
old=${1:?old binary}; new=${2:?new binary}
pg=${3:-postgres://postgres@127.0.0.1:5432/test}
dur=${DURATION:-10s}
source xtask/bench/wrk.sh

# Requests/s of `bin` creating notes on a database of its own.
writes() {
  local bin=$1 port=$((20000 + RANDOM % 20000)) data db pid rate
  data=$(mktemp -d)
  db="bench_announce_$RANDOM"
  psql -q "$pg" -c "CREATE DATABASE $db"
  base="http://127.0.0.1:$port"
  tokens=$data/tokens
  export NOTES_ADDR="127.0.0.1:$port" NOTES_DATA_DIR="$data" DATABASE_URL="${pg%/*}/$db" NOTES_LOG_FORMAT=json
  for _ in $(seq "${TOKENS:-1500}"); do "$bin" token acme notes:write; done >"$tokens"
  RUST_LOG=warn "$bin" 2>"$data/server.log" & pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
  rate=$(rps POST /api/v1/notes '{"title":"note {n}","tags":["bench"]}')
  kill "$pid"; wait "$pid" 2>/dev/null || true
  psql -q "$pg" -c "DROP DATABASE $db"
  rm -rf "$data"
  echo "$rate"
}

echo "| round | without announcing (OLD) | announcing (NEW) | NEW ÷ OLD |"
echo "|---|---|---|---|"
for r in $(seq "${ROUNDS:-3}"); do
  a=$(writes "$old")
  b=$(writes "$new")
  echo "| $r | $a | $b | $(ratio "$b" "$a") |"
done
