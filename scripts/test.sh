#!/usr/bin/env bash
# Sets up, builds and runs every test: the lit suite (FileCheck tests beside
# every op and pass, moec end to end) and the GoogleTest suites (ctest: the
# C++ API, compiled blocks against the C++ reference). Under CI (CI=true), or
# with MOEC_TEST_SANITIZERS=1, it then builds everything again with
# AddressSanitizer + UndefinedBehaviorSanitizer (in build-asan/) and runs it
# all once more. Ends with one line, "moec tests: N passed, M failed", and a
# non-zero exit on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" || exit 1

passed=0 failed=0

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
  passed=$((passed + ${ct_total:-0} - ${ct_failed:-0})) failed=$((failed + ${ct_failed:-0}))
  [[ $ctest_status -ne 0 && ${ct_failed:-0} -eq 0 ]] && failed=$((failed + 1))
  rm -f "$out"
}

run_suite "${MOEC_BUILD_DIR:-$root/build}" "${MOEC_CMAKE_ARGS:-}"
if [[ "${CI:-}" == "true" || "${MOEC_TEST_SANITIZERS:-}" == "1" ]]; then
  echo "== again under AddressSanitizer + UndefinedBehaviorSanitizer"
  # Leak detection off: LeakSanitizer's stop-the-world tracer crashes at
  # random under load here (ptrace in this sandbox; seen in 2 of 40 runs of
  # one test, in any thread configuration), which would fail runs that have
  # no leak. Memory errors and undefined behaviour are still fatal.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite "$root/build-asan" "-DMOEC_ENABLE_SANITIZERS=ON"
fi

echo "moec tests: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
