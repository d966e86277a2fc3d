#!/usr/bin/env bash
# Configures (once) and builds moec into build/ (or $MOEC_BUILD_DIR).
# Extra arguments go to ninja (e.g. a target name).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MOEC_BUILD_DIR:-$root/build}
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${MOEC_CMAKE_ARGS:-} >"$build.cmake.log" 2>&1 ||
    { cat "$build.cmake.log" >&2; echo "build: cmake configure failed" >&2; exit 1; }
  rm -f "$build.cmake.log"
fi
ninja -C "$build" "$@"
