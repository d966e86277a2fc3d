#!/usr/bin/env bash
# The main job on a shipped example: set up, build, then
#  1. show what moe-opt's default pipeline makes of a moe.block,
#  2. compile the block to native code with moec and run it on random inputs,
#     printing the result's checksum and the median time,
#  3. compile every example through moe-to-llvm to an object file.
# Usage: scripts/demo.sh [EXAMPLE.mlir] [TOKENS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MOEC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" moe-opt moec >/dev/null
example=${1:-$root/examples/small-e60-top8.mlir}
tokens=${2:-512}

echo "== moe-opt --pass-pipeline='builtin.module(moe-default)' $(basename "$example")"
"$build/bin/moe-opt" --pass-pipeline='builtin.module(moe-default)' "$example"
echo
echo "== moec run $(basename "$example") --random-inputs --dim $tokens --iters 5"
"$build/bin/moec" run "$example" --random-inputs --seed 1 --dim "$tokens" --iters 5
echo
echo "== moec EXAMPLE -o EXAMPLE.o, for every example without collectives"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in "$root"/examples/*.mlir; do
  name=$(basename "$f" .mlir)
  if grep -qE 'moe\.(psum|all_gather|reduce_scatter|all_to_all)' "$f"; then
    printf '%-28s skipped: a per-shard program (needs the sharded runtime)\n' "$name"
    continue
  fi
  start=$(date +%s%N)
  "$build/bin/moec" "$f" -o "$out/$name.o"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '%-28s %7d bytes of x86-64 in %d ms\n' "$name" "$(stat -c %s "$out/$name.o")" "$ms"
done
