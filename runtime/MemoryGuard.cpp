//===- MemoryGuard.cpp - refusing what would not fit in memory ------------===//

#include "runtime/MemoryGuard.h"

#include "runtime/HugePages.h"
#include "runtime/RunTimeChecks.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
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

uint64_t moec::availableMemoryBytes() {
  uint64_t available = 0;
  bool found = false;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      available = kib * 1024;
      found = true;
      break;
    }
  }
  if (!found)
    return physicalMemoryBytes();
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  // Freed memory malloc keeps (moe-bench asks it to) serves the next
  // requests without the kernel: it is available too.
  available += mallinfo2().fordblks;
#endif
  return available;
}

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
  uint64_t available = availableMemoryBytes();
  if (available == 0 || bytes <= available)
    return "";
  return memorySizeText(bytes) + detail + ", more than the " + memorySizeText(available) +
         " of memory available";
}
