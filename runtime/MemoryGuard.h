//===- MemoryGuard.h - refusing what would not fit in memory -----*- C++ -*-===//
//
// Linux overcommits: a malloc far beyond the machine's memory succeeds, and
// the process is killed by the kernel's out-of-memory killer when the pages
// are touched, with no message a user can act on. The tools refuse such a
// run instead: up front from the memory plan where the sizes are static
// (moec run, moe-bench), and here, at the allocation, for the buffers whose
// size depends on the inputs (a dynamic token count), which no plan can
// count before the run.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_MEMORYGUARD_H
#define MOEC_RUNTIME_MEMORYGUARD_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

extern "C" {
/// malloc and aligned_alloc for generated code run by the JIT: a request of
/// 64 MiB or more that exceeds the memory available now (see
/// availableMemoryBytes) prints one error line naming the request and what
/// is available, and ends the process with exit status 1; smaller requests
/// and those that fit go to the C library, the large ones advised onto
/// huge pages (HugePages.h). Generated code does not check malloc's
/// result, so failing with nullptr is not an option.
void *moert_guarded_malloc(size_t bytes);
void *moert_guarded_aligned_alloc(size_t alignment, size_t bytes);
}

namespace moec {

/// What this process can still allocate and touch without swapping or the
/// out-of-memory killer: the kernel's MemAvailable plus what malloc holds
/// free in its heap (moe-bench keeps freed memory there); the physical
/// memory when /proc/meminfo cannot be read.
uint64_t availableMemoryBytes();

/// "1.5 GiB", "300.0 MiB": a size for a message.
std::string memorySizeText(uint64_t bytes);

/// "206.0 GiB<detail>, more than the 20.1 GiB of memory available" when
/// `bytes` exceed availableMemoryBytes(), else "" (also when it is not
/// known): what loaders, moec run and the allocation guard refuse before
/// allocating.
std::string memoryShortfall(uint64_t bytes, const std::string &detail = "");

/// Name -> address of the guarded allocation functions, for the JIT's
/// symbol map (they replace the C library's for generated code only).
std::vector<std::pair<const char *, void *>> memoryGuardSymbols();

} // namespace moec

#endif // MOEC_RUNTIME_MEMORYGUARD_H
