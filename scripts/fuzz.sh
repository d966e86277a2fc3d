#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-22, AddressSanitizer + UBSan, libFuzzer
# coverage on all of moec; in build-asan/ or $MOEC_BUILD_DIR) and runs each
# for a while:
#   moe-fuzz-compile          arbitrary bytes through parse, verify,
#                             moe-default and moe-to-llvm;
#   moe-fuzz-blocks-libfuzzer random valid MoE blocks chosen by the bytes,
#                             compiled and checked against the C++ reference.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60; CI runs 60)
#        scripts/fuzz.sh 3600                   (the long run: docs/testing.md)
# The corpora grow in $build/fuzz-corpus/ across runs; a finding (crash,
# hang, leak-free sanitizer report, mismatch) is saved in $build/fuzz-findings/
# and the script exits non-zero naming it. Reproduce one with
#   $build/bin/moe-fuzz-compile FILE   or   $build/bin/moe-fuzz-blocks-libfuzzer FILE
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number (got '$seconds')" >&2; exit 2; }
build=${MOEC_BUILD_DIR:-$root/build-asan}
"$root/scripts/setup.sh" || exit 1
source "$root/scripts/sanitizer-build.sh"
MOEC_BUILD_DIR=$build MOEC_CMAKE_ARGS=$moec_sanitizer_cmake_args \
  "$root/scripts/build.sh" moe-fuzz-compile moe-fuzz-blocks-libfuzzer || exit 1

# The compile target's seeds: every test program, each `// -----` piece of
# a split-input file on its own.
corpus=$build/fuzz-corpus findings=$build/fuzz-findings
mkdir -p "$corpus/compile" "$corpus/compile-seeds" "$corpus/blocks" "$findings"
/usr/bin/python3 - "$root" "$corpus/compile-seeds" <<'PY'
import pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for f in sorted(list((root / "test").rglob("*.mlir")) + list((root / "examples").rglob("*.mlir"))):
    for piece in f.read_text().split("\n// -----\n"):
        if len(piece) <= 16384:
            (out / f"{n:04d}.mlir").write_text(piece)
            n += 1
PY

status=0
# fuzz TARGET CORPUS... : SECONDS of libFuzzer; a finding fails the run.
fuzz() {
  local target=$1
  shift
  echo "== $target for ${seconds}s"
  ASAN_OPTIONS=$moec_asan_options UBSAN_OPTIONS=$moec_ubsan_options "$build/bin/$target" -max_total_time="$seconds" -timeout=60 \
    -rss_limit_mb=6144 -print_final_stats=1 -artifact_prefix="$findings/$target-" "$@" 2>&1 |
    # Progress lines and the recommended dictionary go; the summary and any
    # finding stay.
    awk '/^###### Recommended dictionary/ {skip = 1} !skip && !/^#[0-9]+[ \t]+(NEW|REDUCE|pulse)/ && !/NEW_FUNC/ {print} /^###### End of recommended/ {skip = 0}'
  local rc=${PIPESTATUS[0]}
  if [[ $rc -ne 0 ]]; then
    echo "fuzz: $target found a failure (exit $rc); input saved under $findings/" >&2
    status=1
  fi
}
fuzz moe-fuzz-compile -dict="$root/fuzz/mlir.dict" -max_len=4096 "$corpus/compile" "$corpus/compile-seeds"
# Full-length inputs from the start: a block needs a few dozen choices.
fuzz moe-fuzz-blocks-libfuzzer -max_len=64 -len_control=0 "$corpus/blocks"
[[ $status -eq 0 ]] && echo "fuzz: no findings in ${seconds}s per target"
exit $status
