#!/usr/bin/env bash
# Sets up, builds and runs every test: the lit suite (FileCheck tests beside
# every op and pass, moec end to end) and the GoogleTest suites (ctest: the
# C++ API, compiled blocks against the C++ reference, ThreadSanitizer over the
# threaded runtime, and two short fuzz rounds: random blocks against the
# reference, mutated programs through the compiler). This is what CI runs:
# 26-28 minutes from a fresh clone on the 2-core AMD EPYC VM with the packages
# installed (the build 12, lit 7, ctest 7; 2026-12-02), 28 in a CI run there,
# which installs them; 15-17 on the 2-core Sapphire Rapids VM. Close to CI's
# 30-minute budget on the slower machine: mind it when adding tests.
#
# MOEC_TEST_SANITIZERS=only: instead, build everything with AddressSanitizer +
# UndefinedBehaviorSanitizer (clang-22, in build-asan/), run the whole suite
# there, and fuzz for a minute per libFuzzer target (scripts/fuzz.sh): about
# 20 minutes from scratch when last measured. MOEC_TEST_SANITIZERS=1: both,
# one after the other (more than CI's 30-minute budget for the suite, hence
# the split). Ends with one line, "moec tests: N passed, M failed", and a
# non-zero exit on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" || exit 1

passed=0 failed=0 skipped=0

# run_suite BUILD_DIR [CMAKE_ARGS]: builds into BUILD_DIR, runs lit and
# ctest, adds to the counts.
run_suite() {
  local build=$1
  if ! MOEC_BUILD_DIR=$build MOEC_CMAKE_ARGS=${2:-} "$root/scripts/build.sh" all moe-docs; then
    echo "moec tests: build failed in $build"
    failed=$((failed + 1))
    return
  fi
  local out
  out=$(mktemp)
  /usr/lib/llvm-22/bin/lit -sv "$build/test" | tee "$out"
  local lit_status=${PIPESTATUS[0]}
  # lit's summary: "  Passed: 12 (100.00%)", "  Failed: 1 (8.33%)", ...
  count() { sed -nE "s/^ *($1) *: *([0-9]+).*/\\2/p" "$out" | awk '{n += $1} END {print n + 0}'; }
  local lit_passed lit_failed
  lit_passed=$(count 'Passed')
  lit_failed=$(count 'Failed|Unresolved|Timed Out|Unexpectedly Passed')
  passed=$((passed + lit_passed)) failed=$((failed + lit_failed))
  [[ $lit_status -ne 0 && $lit_failed -eq 0 ]] && failed=$((failed + 1))

  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" | tee "$out"
  local ctest_status=${PIPESTATUS[0]} ct_failed ct_total
  read -r ct_failed ct_total < <(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1 \2/p' "$out")
  # ctest counts a skipped test (GTEST_SKIP: a kernel kind this CPU lacks)
  # as passed; here it is neither.
  local ct_skipped
  ct_skipped=$(grep -cE '^[[:space:]]+[0-9]+ - .*\(Skipped\)$' "$out")
  passed=$((passed + ${ct_total:-0} - ${ct_failed:-0} - ct_skipped)) failed=$((failed + ${ct_failed:-0}))
  skipped=$((skipped + ct_skipped))
  [[ $ctest_status -ne 0 && ${ct_failed:-0} -eq 0 ]] && failed=$((failed + 1))
  rm -f "$out"
}

sanitizers=${MOEC_TEST_SANITIZERS:-0}
if [[ "$sanitizers" != 0 && "$sanitizers" != 1 && "$sanitizers" != only ]]; then
  echo "test: MOEC_TEST_SANITIZERS must be 0, 1 or only (got '$sanitizers')" >&2
  exit 2
fi
[[ "$sanitizers" != only ]] && run_suite "${MOEC_BUILD_DIR:-$root/build}" "${MOEC_CMAKE_ARGS:-}"
if [[ "$sanitizers" != 0 ]]; then
  echo "== under AddressSanitizer + UndefinedBehaviorSanitizer (clang-22)"
  source "$root/scripts/sanitizer-build.sh"
  ASAN_OPTIONS=$moec_asan_options UBSAN_OPTIONS=$moec_ubsan_options \
    run_suite "$root/build-asan" "$moec_sanitizer_cmake_args"
  # A short round of both libFuzzer targets on the same build (the long
  # run: docs/testing.md); a finding fails the suite.
  if MOEC_BUILD_DIR="$root/build-asan" "$root/scripts/fuzz.sh" "${MOEC_FUZZ_SECONDS:-60}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
fi
[[ $skipped -gt 0 ]] && echo "moec tests: $skipped skipped (listed under 'did not run' above)"
echo "moec tests: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
