#!/usr/bin/env bash
# Sets up, builds and runs every test: the lit suite (FileCheck tests beside
# every op and pass) and the GoogleTest suite (ctest). Ends with one line,
# "moec tests: N passed, M failed", and a non-zero exit on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MOEC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" || exit 1
"$root/scripts/build.sh" all moe-docs || { echo "moec tests: build failed"; exit 1; }

passed=0 failed=0
lit_out=$(mktemp)
/usr/lib/llvm-22/bin/lit -sv "$build/test" | tee "$lit_out"
lit_status=${PIPESTATUS[0]}
# lit's summary: "  Passed: 12 (100.00%)", "  Failed: 1 (8.33%)", ...
count() { sed -nE "s/^ *($1): *([0-9]+).*/\2/p" "$lit_out" | awk '{n += $1} END {print n + 0}'; }
lit_passed=$(count 'Passed')
lit_failed=$(count 'Failed|Unresolved|Timed Out|Unexpectedly Passed')
rm -f "$lit_out"
passed=$((passed + ${lit_passed:-0})) failed=$((failed + lit_failed))
[[ $lit_status -ne 0 && $lit_failed -eq 0 ]] && failed=$((failed + 1))

ctest_out=$(mktemp)
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" | tee "$ctest_out"
ctest_status=${PIPESTATUS[0]}
read -r ct_failed ct_total < <(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1 \2/p' "$ctest_out")
rm -f "$ctest_out"
passed=$((passed + ${ct_total:-0} - ${ct_failed:-0})) failed=$((failed + ${ct_failed:-0}))
[[ $ctest_status -ne 0 && ${ct_failed:-0} -eq 0 ]] && failed=$((failed + 1))

echo "moec tests: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
