#!/usr/bin/env bash
# A 100 MiB file streamed up to the notes binary (a raw PUT of an attachment) and back down, on
# SQLite in a fresh data directory: the time of each, and the server's resident memory at idle
# and at its peak (VmHWM) after each, beside the time the same disk takes to copy the file and
# sync it (what storing 100 MiB durably costs at the least).
#   bash xtask/bench/files.sh [BINARY] [MIB]     (after cargo build --release -p notes)
set -eu
bin=${1:-target/release/notes}; mib=${2:-100}
dir=$(mktemp -d); port=$((20000 + RANDOM % 20000)); addr=127.0.0.1:$port
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
head -c $((mib * 1024 * 1024)) /dev/urandom > "$dir/file.bin"
start=$(date +%s.%N); cp "$dir/file.bin" "$dir/copy.bin"; sync "$dir/copy.bin"; end=$(date +%s.%N)
copy=$(echo "$end - $start" | bc); rm "$dir/copy.bin"
export NOTES_ADDR=$addr NOTES_DATA_DIR="$dir/data"
tok=$($bin token bench notes:write)
RUST_LOG=warn $bin 2>/dev/null & pid=$!
for _ in $(seq 100); do curl -sf "http://$addr/healthz" >/dev/null && break; sleep 0.1; done
kb() { awk "/$1/ {print \$2}" /proc/$pid/status; }
idle=$(kb VmRSS)
note=$(curl -sf -H "Authorization: Bearer $tok" -H 'content-type: application/json' -d '{"title":"bench"}' "http://$addr/api/v1/notes" | sed 's/.*"id":"\([^"]*\)".*/\1/')
url="http://$addr/api/v1/notes/$note/attachments/file.bin"
up=$(curl -sf -o /dev/null -w '%{time_total}' -T "$dir/file.bin" -H "Authorization: Bearer $tok" -H 'content-type: application/pdf' "$url")
after_up=$(kb VmHWM)
down=$(curl -sf -o "$dir/back.bin" -w '%{time_total}' -H "Authorization: Bearer $tok" "$url")
after_down=$(kb VmHWM)
cmp -s "$dir/file.bin" "$dir/back.bin" && same=identical || same=DIFFERENT
rate() { echo "scale=1; $mib / $1" | bc; }
echo "| ${mib} MiB | upload ${up} s ($(rate $up) MiB/s) | download ${down} s ($(rate $down) MiB/s) | disk copy+sync ${copy} s | upload ÷ copy $(echo "scale=2; $up / $copy" | bc) | RSS idle ${idle} kB, peak after upload ${after_up} kB, after download ${after_down} kB | content ${same} |"
