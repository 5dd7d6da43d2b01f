#!/usr/bin/env bash
# MCP reads of one note side by side, in one run: `GET /api/v1/notes/{id}` (REST), `tools/call
# notes.get` and `resources/read notes://notes/{id}`, all reaching the same operation, against the
# release `notes` binary on SQLite; $ROUNDS rounds (default 2) of $DURATION each (default 6s),
# wrk -t2 -c32, $TOKENS tokens (default 3000) rotated so the plan never answers 429. Prints
# requests/s and the ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
cargo build -q --release -p notes
bin=target/release/notes
dur=${DURATION:-6s}
rounds=${ROUNDS:-2}
port=$((20000 + RANDOM % 20000))
base="http://127.0.0.1:$port"
data=$(mktemp -d)
export NOTES_ADDR="127.0.0.1:$port" NOTES_DATA_DIR="$data" NOTES_LOG_FORMAT=json
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
tokens=$data/tokens
for _ in $(seq "${TOKENS:-3000}"); do "$bin" token acme notes:read; done >"$tokens"
write=$("$bin" token acme notes:write)
RUST_LOG=warn "$bin" 2>"$data/server.log" & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
id=$(curl -sf "$base/api/v1/notes" -H "Authorization: Bearer $write" -H 'content-type: application/json' \
  -d '{"title":"Measured","tags":["bench"]}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
source xtask/bench/wrk.sh
tool="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"notes.get\",\"arguments\":{\"id\":\"$id\"}}}"
read="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"notes://notes/$id\"}}"
echo "| round | REST GET | tools/call notes.get | resources/read | read ÷ tools/call | tools/call ÷ REST |"
echo "|---|---|---|---|---|---|"
for r in $(seq "$rounds"); do
  rest=$(rps GET "/api/v1/notes/$id")
  call=$(MCP=1 rps POST /api/mcp "$tool")
  res=$(MCP=1 rps POST /api/mcp "$read")
  echo "| $r | $rest | $call | $res | $(ratio "$res" "$call") | $(ratio "$call" "$rest") |"
done
