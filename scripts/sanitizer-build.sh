# Sourced by scripts/test.sh and scripts/fuzz.sh: the one sanitizer build
# both use (build-asan/): clang-22 with AddressSanitizer + UBSan, and
# libFuzzer's coverage on every object so that the same build also makes
# the fuzz targets (fuzz/).
moec_sanitizer_cmake_args="-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
-DMOEC_ENABLE_SANITIZERS=ON -DMOEC_ENABLE_FUZZERS=ON"
# Leak detection off: LeakSanitizer's stop-the-world tracer crashes at
# random under load here (ptrace in this sandbox; seen in 2 of 40 runs of
# one test, in any thread configuration), which would fail runs that have
# no leak. Memory errors and undefined behaviour are still fatal.
moec_asan_options=detect_leaks=0:abort_on_error=0
moec_ubsan_options=halt_on_error=1:print_stacktrace=1
