# Sourced by the prospector bench scripts: `seeded_server [postgres://…] [-- serve options…]`
# builds the release server and the seed_leads example (unless BIN and SEED name another build's,
# for a side-by-side run; its migrations must match its server's), seeds COUNT leads (default
# 100,000) into a tenant of a new data directory, makes TOKEN_COUNT (default 3,000) Team-plan
# tokens (300 requests a minute each: three 15 s wrk runs at 10,000 requests/s stay under every
# token's limit) into $TOKENS, starts the server
# and waits for it. Sets bin, count, data, backend, base and pid; the server stops on exit. With a
# PostgreSQL URL the run gets a database of its own beside that URL's (dropped on exit).
bench_cleanup() {
  kill "$pid" 2>/dev/null
  kill $(jobs -p) 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$data" ${feed:+"$feed"}
  if [ -n "${fresh_db:-}" ]; then psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $fresh_db" >/dev/null; fi
}

seeded_server() {
  command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)" >&2; exit 1; }
  [ -n "${BIN:-}" ] || cargo build -q --release -p specwright --bin specwright
  [ -n "${SEED:-}" ] || cargo build -q --release -p prospector --example seed_leads
  bin=${BIN:-target/release/specwright}
  count=${COUNT:-100000}
  data=$(mktemp -d)
  local port=$((20000 + RANDOM % 20000)) tenant
  local common=(--data-dir "$data" --addr "127.0.0.1:$port")
  fresh_db=
  if [ $# -ge 1 ] && [ "$1" != "--" ]; then
    # A database of its own, dropped on exit: a server's keys live in its data directory, which
    # this run makes anew, so a database another run left behind would not open.
    fresh_db="bench_$port"
    psql -q "$1" -c "CREATE DATABASE $fresh_db" >/dev/null
    export DATABASE_URL="${1%/*}/$fresh_db"
    common+=(--database-url "$DATABASE_URL")
    admin_url=$1
    shift
  fi
  [ "${1:-}" = "--" ] && shift
  backend=${DATABASE_URL:+PostgreSQL}; backend=${backend:-SQLite}
  tenant="bench$port"
  ${SEED:-target/release/examples/seed_leads} "$data" "$tenant" "$count"
  export TOKENS="$data/tokens"
  # One token first, so that builds before the first key was created atomically never race on it.
  $bin token --sub u0 --tenant "$tenant" --scope prospector --plan team --ttl 3600 "${common[@]}" >/dev/null
  seq 1 "${TOKEN_COUNT:-3000}" | xargs -P 2 -I{} $bin token --sub "u{}" --tenant "$tenant" --scope prospector --plan team --ttl 3600 "${common[@]}" >"$TOKENS"
  RUST_LOG=warn $bin serve "${common[@]}" "$@" 2>"$data/server.log" &
  pid=$!
  trap 'bench_cleanup' EXIT
  base="http://127.0.0.1:$port"
  for _ in $(seq 600); do curl -sf "$base/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "the server did not answer /healthz within 60 s; its log:" >&2
  tail -n 20 "$data/server.log" >&2
  exit 1
}
