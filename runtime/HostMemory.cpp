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
#endif
}
