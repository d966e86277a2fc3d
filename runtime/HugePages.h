//===- HugePages.h - large buffers on transparent huge pages -----*- C++ -*-===//
//
// The kernels walk their large buffers a few lines per 4 KiB page: the
// down projection writes one 64-byte line of each output row (rows 4 KiB
// apart at H 2048), the int8 tiles read 16 quantized rows 2112 bytes
// apart. On 4 KiB pages each of those lines is a page of its own for the
// TLB. Debian's kernels give huge pages only where asked (transparent
// huge pages "madvise"), so the allocations of generated code ask.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_HUGEPAGES_H
#define MOEC_RUNTIME_HUGEPAGES_H

#include <cstddef>

namespace moec {

/// Buffers from this size on are advised (each holds at least one whole
/// aligned 2 MiB page).
constexpr size_t kHugePageAdviceBytes = size_t(4) << 20;

/// Asks the kernel for transparent huge pages (madvise MADV_HUGEPAGE) over
/// the 2 MiB-aligned pages that lie wholly inside [data, data + bytes),
/// when bytes >= kHugePageAdviceBytes. Advice only: pages already touched
/// stay as they are, and a kernel without (or with "never") transparent
/// huge pages ignores it. Returns whether madvise accepted it.
bool adviseHugePages(void *data, size_t bytes);

} // namespace moec

#endif // MOEC_RUNTIME_HUGEPAGES_H
