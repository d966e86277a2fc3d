//===- HugePages.cpp - large buffers on transparent huge pages -----------===//

#include "runtime/HugePages.h"

#include <cstdint>
#include <sys/mman.h>

namespace {
constexpr uintptr_t kHugePageBytes = uintptr_t(2) << 20;
} // namespace

bool moec::adviseHugePages(void *data, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  if (!data || bytes < kHugePageAdviceBytes)
    return false;
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  uintptr_t end = (begin + bytes) & ~(kHugePageBytes - 1);
  if (end <= first)
    return false;
  return madvise(reinterpret_cast<void *>(first), end - first, MADV_HUGEPAGE) == 0;
#else
  (void)data, (void)bytes;
  return false;
#endif
}
