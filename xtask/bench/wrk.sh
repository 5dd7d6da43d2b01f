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
