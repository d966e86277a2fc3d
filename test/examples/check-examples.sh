#!/usr/bin/env bash
# Every example under examples/ must parse and verify, print back to a form
# that parses to the same text (custom and generic syntax), and go through
# the moe-default pipeline leaving no moe.block behind.
# Usage: check-examples.sh EXAMPLES_DIR MOE_OPT TMPDIR
set -u
dir=$1 opt=$2 tmp=$3
mkdir -p "$tmp"
count=0 failed=0
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
for f in "$dir"/*.mlir; do
  name=$(basename "$f" .mlir)
  count=$((count + 1))
  "$opt" "$f" > "$tmp/$name.1.mlir" || { fail "$name" "does not parse or verify"; continue; }
  "$opt" "$tmp/$name.1.mlir" > "$tmp/$name.2.mlir" || { fail "$name" "printed form does not parse"; continue; }
  cmp -s "$tmp/$name.1.mlir" "$tmp/$name.2.mlir" || fail "$name" "round trip changed the text"
  "$opt" --mlir-print-op-generic "$f" | "$opt" > "$tmp/$name.3.mlir" || { fail "$name" "generic form does not parse"; continue; }
  cmp -s "$tmp/$name.1.mlir" "$tmp/$name.3.mlir" || fail "$name" "generic round trip changed the text"
  "$opt" --pass-pipeline='builtin.module(moe-default)' "$f" > "$tmp/$name.4.mlir" || { fail "$name" "moe-default pipeline failed"; continue; }
  if grep -qF "= moe.block " "$tmp/$name.4.mlir"; then fail "$name" "moe.block left after moe-default"; fi
done
echo "checked $count examples, $failed failed"
[ "$count" -gt 0 ] && [ "$failed" -eq 0 ]
