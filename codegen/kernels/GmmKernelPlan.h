//===- GmmKernelPlan.h - what one fast gmm computes -------------*- C++ -*-===//
//
// What every kind of the gmm kernel family (GmmKernel.h) computes, on
// buffers, and the vector pieces their loads and epilogues share
// (VectorPieces.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_KERNELS_GMMKERNELPLAN_H
#define MOEC_CODEGEN_KERNELS_GMMKERNELPLAN_H

#include "codegen/ActivationMath.h"
#include "strategy/GmmTiling.h"
#include "mlir/IR/Value.h"

namespace mlir::moe::codegen {

using strategy::GmmTiling;
class Emitter;

/// What one kernel computes, on buffers.
struct GmmKernelPlan {
  Value lhs;            // [rows, D], or [tokens, D] when gathered through perm
  Value perm;           // i32 [R]: row r reads lhs[perm[r] / topK], zero if < 0
  int64_t topK = 1;
  Value gateRhs;        // [E, D, Nw], innermost stride 1; [E, N, D] transposed;
                        // null with packedRhs (never read then)
  bool transposeRhs = false; // the backward's row gradient: lhs @ rhs[g]^T
  Value upRhs;          // with swiglu: the up columns' weight (may be gateRhs;
                        // null with packedRhs)
  // The weights already in the kinds' layout (moe.pack_weights, made once
  // at load time; strategy/PackedLayout.h), [E, tiles, depth rows, lanes x
  // tile columns]: the kinds read a block of it per task and pack nothing.
  Value packedRhs;
  int64_t upOffset = 0; // first up column in upRhs
  bool swiglu = false;
  Value sizes;          // i32 [E]
  Value rowCount;       // R
  int64_t depth = 0;    // D
  int64_t width = 0;    // output columns N
  Value out;            // [R, N], identity layout
  // #moe.gmm_lowering's numbers the kinds read.
  strategy::GmmTiling tiling; // the fma kind's tiles
  int64_t packedColumns = 0;  // weight columns of a packed kind's task
  int64_t amxMinRows = 0;     // AMX for groups of at least as many rows
  int64_t dotRows = 0;        // rows of an avx512bf16_dot row block (weights packed at load time)
  // int8 weights (moe.gmm with scales): the rows are quantized per row
  // (PackedOperands.h); the scales are [E] or [E, N] (`perChannel`).
  bool int8 = false;
  Value gateScales, upScales; // upScales may be gateScales (fused w13)
  bool perChannel = false;
  // The epilogue's extras (the open models' experts): biases [E, Nw] in the
  // weights' column space, added to the f32 sums before the activation
  // (gateBias for gateRhs's columns, upBias for upRhs's; either may be
  // null); GPT-OSS's clamped activation; gate/up columns interleaved in
  // gateRhs (gate 2j, up 2j + 1) instead of N apart.
  Value gateBias, upBias;
  ActivationSpec activation;
  bool interleaved = false;
};

// Vector pieces the kinds' loads and epilogues use (VectorPieces.cpp).
/// The mask of the first clamp(limit - col, 0, lanes) lanes: a row's columns
/// (or depth) that exist.
Value lanesBelow(Emitter &e, Value col, Value limit, int64_t lanes);
/// Two vectors of interleaved columns (g0 u0 g1 u1 ...) as the gate and up
/// vectors (g0 g1 ... and u0 u1 ...).
std::pair<Value, Value> deinterleave(Emitter &e, Value first, Value second);
/// The inverse of deinterleave: `gate` and `up` as two vectors of
/// alternating columns (g0 u0 g1 u1 ...).
std::pair<Value, Value> interleave(Emitter &e, Value gate, Value up);
/// Row `r`'s f32 vector `v` into `dst` from column `col`, rounded to its
/// type, the lanes below `limit`.
void storeColumns(Emitter &e, Value v, Value dst, Value r, Value col, Value limit);
/// The gate and up columns of a SwiGLU's M outputs in row-major buffers:
/// one [R, 2M] buffer (`gate` == `up`: up M columns on, or interleaved
/// gate, up, gate, ...) or two [R, M]. Vectors of the values of outputs
/// [col, col + lanes), those below M.
struct GateUpColumns {
  Value gate, up, width; // width: M
  bool interleaved = false;
  std::pair<Value, Value> load(Emitter &e, Value r, Value col, int64_t lanes) const;
  void store(Emitter &e, Value r, Value col, Value gateValues, Value upValues) const;

private:
  std::pair<Value, Value> upColumns(Emitter &e, Value col) const; // column, limit
};
/// `lanes` columns of `src` at `outer` indices then column `col`, as f32,
/// zero at and past `limit` (all zeros when `col` >= `limit`, reading only
/// columns below it): a plain load where all are
/// inside, with no bf16 vector crossing a branch (see VectorPieces.cpp).
Value loadColumnsAsF32(Emitter &e, Value src, ValueRange outer, Value col, Value limit, int64_t lanes);
/// Values of `memref`'s element a prefetch spreading `values` of them over
/// `steps` loop steps moves on a step: ceil(values / steps), at least 1 and
/// at most a 64-byte line's (a prefetch fetches one line).
Value fetchStride(Emitter &e, Value memref, Value values, Value steps);
/// `v` plus the bias values (one per lane of `v`) of group `g` from column
/// `col` (those below `limit`), when `bias` is given.
Value plusBias(Emitter &e, Value v, Value bias, Value g, Value col, Value limit);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_GMMKERNELPLAN_H
