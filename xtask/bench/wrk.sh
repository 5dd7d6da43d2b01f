# Sourced by the bench scripts. `wrk_cells SCRIPT BASE` runs wrk (2 threads, 32 connections,
# $dur, default 15s) with the Lua SCRIPT against BASE and prints the Markdown cells
# "requests/s | p50 | p99 | non-2xx".
wrk_cells() {
  local out rps p50 p99 errs
  out=$(wrk -t2 -c32 -d"${dur:-15s}" --latency -s "xtask/bench/$1" "$2")
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  errs=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  echo "$rps | $p50 | $p99 | ${errs:-0}"
}

# `rps METHOD PATH [BODY]`: requests/s of wrk (2 threads, 32 connections, $dur) against $base,
# rotating over the tokens in the file $tokens (with the MCP request headers when $MCP is set);
# fails on any non-2xx answer.
rps() {
  local out bad
  out=$(METHOD=$1 QUERY=$2 BODY=${3:-} MCP=${MCP:-} TOKENS=$tokens wrk -t2 -c32 -d"$dur" -s xtask/bench/rotate.lua "$base")
  bad=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  [ -z "$bad" ] || { echo "$2 answered $bad non-2xx responses" >&2; exit 1; }
  echo "$out" | awk '/Requests\/sec/ {print $2}'
}

# `ratio A B`: A ÷ B to three places.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
