//===- RuntimeAbi.h - the generated code's calls into the runtime -*- C++ -*-===//
//
// Declared once for both sides. Codegen (lowerings/CollectiveLowering.cpp)
// and the partition pass name their calls with entryPoint() and the name
// constants below; the runtime defines the functions (ShardComm.cpp) and
// builds the JIT's symbol map from MOERT_ENTRY_POINTS. Every name is
// spelled by the macros from the declared function itself, so a name one
// side uses and the other does not declare fails to compile, not at link
// or run time. Plain C++ with no LLVM, as the runtime is.
//
// How arguments arrive: a memref argument comes unpacked as MLIR's
// func-to-llvm passes it to an external function: allocated and aligned
// pointers, offset and size (in elements), stride (rank 1 here: the
// lowering hands over contiguous buffers). `axesCode` lists the group's
// mesh axes in the op's order (which orders the group: the first listed
// most significant), kAxisBits each, the first in the lowest bits, ended by
// kAxesEnd (encodeAxes/decodeAxis). `groupSize` is the group's size the
// program was compiled for; a bound mesh that disagrees is an error.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_RUNTIMEABI_H
#define MOEC_RUNTIME_RUNTIMEABI_H

#include <cstdint>

#define MOERT_MEMREF(T, name)                                                           \
  T *name##Allocated, T *name, int64_t name##Offset, int64_t name##Size, int64_t name##Stride

extern "C" {
// Sums run in f32 (bf16 is widened, summed, rounded once); gathers and
// all-to-alls copy elements of their type.
#define MOERT_SUM_COLLECTIVES(T, suffix)                                                    \
  void moert_all_reduce_sum_##suffix(MOERT_MEMREF(T, data), int64_t axesCode,               \
                                     int64_t groupSize);                                    \
  void moert_reduce_scatter_sum_##suffix(MOERT_MEMREF(T, in), MOERT_MEMREF(T, out),         \
                                         int64_t axesCode, int64_t groupSize);
#define MOERT_COPY_COLLECTIVES(T, suffix)                                                   \
  void moert_all_gather_##suffix(MOERT_MEMREF(T, in), MOERT_MEMREF(T, out), int64_t axesCode, \
                                 int64_t groupSize);                                        \
  /* rows [R, rowElements] flattened; received holds the capacity's rows */                 \
  void moert_all_to_all_##suffix(MOERT_MEMREF(T, rows), MOERT_MEMREF(int32_t, sendCounts),  \
                                 MOERT_MEMREF(T, received),                                 \
                                 MOERT_MEMREF(int32_t, recvCounts), int64_t rowElements,    \
                                 int64_t axesCode, int64_t groupSize);
MOERT_SUM_COLLECTIVES(float, f32)
MOERT_SUM_COLLECTIVES(uint16_t, bf16)
MOERT_COPY_COLLECTIVES(float, f32)
MOERT_COPY_COLLECTIVES(uint16_t, bf16)
MOERT_COPY_COLLECTIVES(int32_t, i32)
#undef MOERT_SUM_COLLECTIVES
#undef MOERT_COPY_COLLECTIVES
/// This rank's index along `axis` of a grid whose size on that axis is
/// `axisSize` (checked against the bound mesh).
int64_t moert_mesh_coordinate(int64_t axis, int64_t axisSize, int64_t meshRank);
// Counts `localRows` assignment rows routed to this shard's experts, of
// which `droppedRows` did not fit the capacity (CommCounters).
void moert_count_dropped_rows(int64_t localRows, int64_t droppedRows);
// Stage `stage` of a function marked by moe-mark-stages starts now (-1: the
// function ends); runtime/StageTimer.h adds up the times.
void moert_stage_mark(int64_t stage);
}

/// Every entry point above but moert_stage_mark, X(function) for each: the
/// sharded runtime's symbol map (ShardComm.cpp) is made from this list; the
/// stage mark's comes from runtime/StageTimer.h (stageTimerSymbols).
#define MOERT_ENTRY_POINTS(X)                                                               \
  X(moert_all_reduce_sum_f32)                                                               \
  X(moert_all_reduce_sum_bf16)                                                              \
  X(moert_reduce_scatter_sum_f32)                                                           \
  X(moert_reduce_scatter_sum_bf16)                                                          \
  X(moert_all_gather_f32)                                                                   \
  X(moert_all_gather_bf16)                                                                  \
  X(moert_all_gather_i32)                                                                   \
  X(moert_all_to_all_f32)                                                                   \
  X(moert_all_to_all_bf16)                                                                  \
  X(moert_all_to_all_i32)                                                                   \
  X(moert_mesh_coordinate)                                                                  \
  X(moert_count_dropped_rows)

/// The name of a declared entry point: `sizeof` makes the compiler check
/// the function is declared above without referring to it at link time
/// (codegen does not link the runtime).
#define MOERT_NAME(function) ((void)sizeof(&function), #function)

namespace moec::abi {

enum class Collective { AllReduceSum, ReduceScatterSum, AllGather, AllToAll };
enum class Element { F32, BF16, I32 };

/// The entry point running `collective` on elements of `element`, or
/// nullptr where the runtime has none (sums of i32).
inline const char *entryPoint(Collective collective, Element element) {
  switch (collective) {
  case Collective::AllReduceSum:
    return element == Element::F32    ? MOERT_NAME(moert_all_reduce_sum_f32)
           : element == Element::BF16 ? MOERT_NAME(moert_all_reduce_sum_bf16)
                                      : nullptr;
  case Collective::ReduceScatterSum:
    return element == Element::F32    ? MOERT_NAME(moert_reduce_scatter_sum_f32)
           : element == Element::BF16 ? MOERT_NAME(moert_reduce_scatter_sum_bf16)
                                      : nullptr;
  case Collective::AllGather:
    return element == Element::F32    ? MOERT_NAME(moert_all_gather_f32)
           : element == Element::BF16 ? MOERT_NAME(moert_all_gather_bf16)
                                      : MOERT_NAME(moert_all_gather_i32);
  case Collective::AllToAll:
    return element == Element::F32    ? MOERT_NAME(moert_all_to_all_f32)
           : element == Element::BF16 ? MOERT_NAME(moert_all_to_all_bf16)
                                      : MOERT_NAME(moert_all_to_all_i32);
  }
  return nullptr;
}

inline const char *meshCoordinateEntryPoint() { return MOERT_NAME(moert_mesh_coordinate); }
inline const char *countDroppedRowsEntryPoint() { return MOERT_NAME(moert_count_dropped_rows); }
inline const char *stageMarkEntryPoint() { return MOERT_NAME(moert_stage_mark); }

/// The axes code: kAxisBits per axis index, ended by kAxesEnd, so at most
/// kMaxAxes axes fit an int64_t with its end marker.
constexpr int kAxisBits = 4;
constexpr int64_t kAxesEnd = (int64_t(1) << kAxisBits) - 1;
constexpr int kMaxAxes = 64 / kAxisBits - 1;

/// The code of `count` axis indices (each < kAxesEnd; count <= kMaxAxes).
template <typename Index> int64_t encodeAxes(const Index *axes, int count) {
  int64_t code = 0;
  int shift = 0;
  for (int i = 0; i < count; ++i, shift += kAxisBits)
    code |= int64_t(axes[i]) << shift;
  return code | (kAxesEnd << shift);
}

/// The `i`th axis of `code`, or kAxesEnd past its last.
inline int64_t decodeAxis(int64_t code, int i) {
  if (i >= 64 / kAxisBits)
    return kAxesEnd;
  return int64_t((uint64_t(code) >> (i * kAxisBits)) & uint64_t(kAxesEnd));
}

} // namespace moec::abi

#endif // MOEC_RUNTIME_RUNTIMEABI_H
