#!/usr/bin/env bash
# The main job on the shipped examples: set up, build, then run moe-opt's
# default pipeline (expand moe.block into route/pack/gmm/swiglu/combine,
# canonicalize, CSE) over every example and show one result in full.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" moe-opt >/dev/null
opt=${MOEC_BUILD_DIR:-$root/build}/bin/moe-opt

shown=${1:-$root/examples/small-e60-top8.mlir}
echo "== moe-opt --pass-pipeline='builtin.module(moe-default)' $(basename "$shown")"
"$opt" --pass-pipeline='builtin.module(moe-default)' "$shown"
echo
echo "== every example through moe-default"
for f in "$root"/examples/*.mlir; do
  out=$("$opt" --pass-pipeline='builtin.module(moe-default)' "$f")
  # Ops only: a dialect-qualified name at the start of a statement or
  # right after "= " (not attribute names such as moe.axes).
  ops=$(grep -oE '(^ *|= )(moe|linalg|shard|arith|tensor)\.[a-z_]+' <<<"$out" | sed -E 's/^ *(= )?//')
  printf '%-28s %3d ops: %s\n' "$(basename "$f")" "$(wc -l <<<"$ops")" \
    "$(grep -E '^(moe|linalg|shard)' <<<"$ops" | sort | uniq -c | sort -rn |
       awk '{printf "%s%s x%d", (NR>1?", ":""), $2, $1}')"
done
