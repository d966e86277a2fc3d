//===- HostMemory.cpp - how the hosts ask glibc to keep freed memory ------===//

#include "runtime/HostMemory.h"

#include <cstdlib> // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void moec::keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);           // no mmap per allocation: the heap serves all
  mallopt(M_TRIM_THRESHOLD, -1);    // never give the heap's top back
  // One arena for every thread: a thread's own arena grows in heaps of at
  // most 64 MiB, so a larger request from a thread (an in-process shard's
  // gradients) is mmapped whatever M_MMAP_MAX says, and unmapped when freed.
  mallopt(M_ARENA_MAX, 1);
#endif
}
