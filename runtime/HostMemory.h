//===- HostMemory.h - how the hosts ask glibc to keep freed memory -*- C++ -*-===//
#ifndef MOEC_RUNTIME_HOSTMEMORY_H
#define MOEC_RUNTIME_HOSTMEMORY_H

namespace moec {

/// Makes glibc's malloc serve every size, from every thread, from its main
/// heap and keep what is freed instead of returning it to the kernel (a
/// thread's own arena would still map and unmap each large buffer: 10 s of
/// an in-process DP training step that computes in 1.3 s, at T 512 on 2
/// cores, docs/sharding.md). Each call of a generated
/// function allocates its results and scratch afresh; with the defaults
/// every block of 32 MiB or more (and, after a free, the top of the heap) is
/// a fresh mapping whose every page faults on first touch, a fixed cost per
/// call that the benchmarks would time as the block's (9 ms of a 28 ms gmm
/// here). A serving runtime pools its buffers the same way. Call once, at
/// start, before any other thread allocates (a thread keeps the arena it
/// first took). moe-bench and moe-kernel-bench do; moec run does not: its
/// peak-RSS report holds the memory plan to the allocations as made, and it
/// times one call, in which each shard thread's arena maps its large
/// buffers afresh anyway.
void keepFreedMemory();

} // namespace moec

#endif
