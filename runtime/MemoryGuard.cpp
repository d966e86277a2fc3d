//===- MemoryGuard.cpp - refusing what would not fit in memory ------------===//

#include "runtime/MemoryGuard.h"

#include "runtime/HugePages.h"
#include "runtime/RunTimeChecks.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

/// Below this a request is not checked: reading /proc/meminfo costs tens of
/// microseconds, noise beside touching 64 MiB, not beside a small buffer.
constexpr size_t kCheckedBytes = size_t(64) << 20;

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

/// Refuses `bytes` if it does not fit; returns only when it does.
void checkRequest(size_t bytes) {
  if (bytes < kCheckedBytes)
    return;
  // Kept in a thread_local, not a local: failRunTime jumps back to the
  // caller of the generated code, skipping this frame's destructors.
  thread_local std::string refusal;
  refusal = moec::memoryShortfall(bytes, " at run time");
  if (refusal.empty())
    return;
  refusal = "the program asked for a buffer of " + refusal +
            ": refused rather than left to the kernel's out-of-memory killer (a buffer "
            "whose size depends on the inputs, which the memory plan cannot count before "
            "the run; give smaller inputs or shard the block)";
  moec::failRunTime(refusal);
}

} // namespace

// Large buffers are advised onto huge pages, usually before anything touches
// them (a reused heap chunk of under 32 MiB may have been; HugePages.h).
void *moert_guarded_malloc(size_t bytes) {
  checkRequest(bytes);
  void *data = std::malloc(bytes);
  moec::adviseHugePages(data, bytes);
  return data;
}

void *moert_guarded_aligned_alloc(size_t alignment, size_t bytes) {
  checkRequest(bytes);
  void *data = std::aligned_alloc(alignment, bytes);
  moec::adviseHugePages(data, bytes);
  return data;
}

namespace {

/// The kernel's MemAvailable, or nothing when /proc/meminfo cannot be read.
std::optional<uint64_t> kernelAvailableBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:")
      return kib * 1024;
  }
  return std::nullopt;
}

/// What malloc holds free in its heap. mallinfo2 walks every free chunk of
/// every bin, serially, before the stage that asked: in moe-bench's kept
/// heap (bf16 T 4096 top-8 on an AMD EPYC, its 88 and 128 MiB buffers
/// checked every call) perf counted 25 samples of int_mallinfo over 8
/// calls, and 480 with --stage-timing, whose calls follow more set-up. So
/// the guard asks only when the kernel's figure alone is short of a request.
uint64_t mallocFreeBytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return mallinfo2().fordblks;
#else
  return 0;
#endif
}

/// availableMemoryBytes from the kernel's figure (kernelAvailableBytes).
uint64_t availableFrom(std::optional<uint64_t> kernel) {
  if (!kernel)
    return physicalMemoryBytes();
  // Freed memory malloc keeps (moe-bench asks it to) serves the next
  // requests without the kernel: it is available too.
  return *kernel + mallocFreeBytes();
}

} // namespace

uint64_t moec::availableMemoryBytes() { return availableFrom(kernelAvailableBytes()); }

std::string moec::memorySizeText(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4)
    value /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit ? "%.1f %s" : "%.0f %s", value, units[unit]);
  return text;
}

std::vector<std::pair<const char *, void *>> moec::memoryGuardSymbols() {
  return {{"malloc", reinterpret_cast<void *>(&moert_guarded_malloc)},
          {"aligned_alloc", reinterpret_cast<void *>(&moert_guarded_aligned_alloc)}};
}

std::string moec::memoryShortfall(uint64_t bytes, const std::string &detail) {
  // The kernel's figure first: a request within it fits whatever malloc
  // holds free, which is slow to count (mallocFreeBytes).
  std::optional<uint64_t> kernel = kernelAvailableBytes();
  if (kernel && bytes <= *kernel)
    return "";
  uint64_t available = availableFrom(kernel);
  if (available == 0 || bytes <= available)
    return "";
  return memorySizeText(bytes) + detail + ", more than the " + memorySizeText(available) +
         " of memory available";
}
