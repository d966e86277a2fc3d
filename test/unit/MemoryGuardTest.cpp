//===- MemoryGuardTest.cpp - what the allocation guard counts as available -===//
//
// What runtime/MemoryGuard.h's memoryShortfall returns on this host's real
// figures: a request within the kernel's MemAvailable fits, one far past
// the machine's memory is refused with the sizes in the message, and one
// past MemAvailable but within what malloc holds free after a large free
// (the heap kept, as moe-bench keeps it) still fits.
//
//===----------------------------------------------------------------------===//

#include "runtime/HostMemory.h"
#include "runtime/MemoryGuard.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;

/// /proc/meminfo's MemAvailable, as the test reads it.
std::optional<uint64_t> memAvailable() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:")
      return kib * 1024;
  }
  return std::nullopt;
}

TEST(MemoryGuard, ARequestWithinMemAvailableFits) {
  std::optional<uint64_t> available = memAvailable();
  if (!available || *available < 512 * kMiB)
    GTEST_SKIP() << "needs /proc/meminfo and 512 MiB available";
  EXPECT_EQ(moec::memoryShortfall(64 * kMiB), "");
  EXPECT_EQ(moec::memoryShortfall(*available / 2, " (a test)"), "");
}

TEST(MemoryGuard, ARequestPastTheMachinesMemoryIsRefusedWithItsSize) {
  uint64_t huge = uint64_t(1) << 50; // 1 PiB
  std::string shortfall = moec::memoryShortfall(huge, " (a test)");
  EXPECT_EQ(shortfall.rfind("1024.0 TiB (a test), more than the ", 0), 0u) << shortfall;
  EXPECT_NE(shortfall.find(" of memory available"), std::string::npos) << shortfall;
}

TEST(MemoryGuard, MallocsFreeMemoryCountsPastMemAvailable) {
  // 128 MiB touched and freed into a heap that keeps it: MemAvailable drops
  // by about as much as malloc holds free, and a request of MemAvailable
  // plus half of it fits only if the guard counts what malloc holds (64
  // MiB of margin, against what other processes take between the test's
  // read of MemAvailable and the guard's, microseconds apart). It leaves
  // this process's malloc keeping what it frees (keepFreedMemory), which
  // ctest's one process a test confines to it.
  constexpr uint64_t kKept = 128 * kMiB;
#if !(defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)))
  GTEST_SKIP() << "the guard counts malloc's free memory with glibc 2.33's mallinfo2 only";
#endif
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's malloc keeps no glibc heap";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer's malloc keeps no glibc heap";
#endif
#endif
  moec::keepFreedMemory();
  if (!memAvailable() || *memAvailable() < 4 * kKept)
    GTEST_SKIP() << "needs /proc/meminfo and 512 MiB available";
  void *block = std::malloc(kKept);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kKept);
  // The compiler may drop a malloc, memset and free it can see through.
  asm volatile("" : : "r"(block) : "memory");
  std::free(block);
  uint64_t request = *memAvailable() + kKept / 2;
  EXPECT_EQ(moec::memoryShortfall(request), "") << "MemAvailable + " << kKept / 2 / kMiB << " MiB";
  EXPECT_LE(request, moec::availableMemoryBytes());
}

} // namespace
