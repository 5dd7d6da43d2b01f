#!/usr/bin/env bash
# The rebuild after a one-route spec change, in the workspace at TREE (default: this one): three
# runs of changing one route's summary in spec/vault/vault.toml, timing `cargo xtask generate`, then the
# debug rebuilds of `vault-api` and of the `specwright` binary, and restoring the spec.
#   bash xtask/bench/rebuild.sh [TREE]
# Compare two commits by running it on a worktree of each, with CARGO_TARGET_DIR shared.
set -u
cd "${1:-$(dirname "$0")/../..}"
tree=$(pwd)
trap 'git checkout -q spec/vault/vault.toml; cargo xtask generate >/dev/null' EXIT
cargo build -q -p specwright --bin specwright -p vault-api -p xtask
for i in 1 2 3; do
  sed -i 's/^summary = "Revoke a lease"$/summary = "Revoke one lease"/' spec/vault/vault.toml
  g=$({ /usr/bin/time -f %e cargo xtask generate >/dev/null; } 2>&1 | tail -1)
  a=$({ /usr/bin/time -f %e cargo build -q -p vault-api; } 2>&1 | tail -1)
  b=$({ /usr/bin/time -f %e cargo build -q -p specwright --bin specwright; } 2>&1 | tail -1)
  echo "$tree run $i: cargo xtask generate ${g}s, vault-api ${a}s, specwright ${b}s"
  git checkout -q spec/vault/vault.toml && cargo xtask generate >/dev/null && cargo build -q -p specwright --bin specwright -p vault-api
done
