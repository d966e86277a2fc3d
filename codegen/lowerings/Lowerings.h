//===- Lowerings.h - moe ops to loops over buffers ---------------*- C++ -*-===//
//
// One function per op family; each builds the loops before the op and
// replaces it. They assume verified IR.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_LOWERINGS_LOWERINGS_H
#define MOEC_CODEGEN_LOWERINGS_LOWERINGS_H

#include "codegen/Int8Arithmetic.h"
#include "dialect/MoeOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe::codegen {

class Emitter;

/// Calls `body(group, firstRow, endRow)` for every group of a grouped
/// matmul's `sizes`, with the rows clamped to [0, rowCount) and negative
/// sizes taken as zero.
void forEachGroup(Emitter &e, Value sizes, Value rowCount,
                  function_ref<void(Value, Value, Value)> body);

/// The same bounds as two index buffers [groups], first and end row of
/// each group: what a parallel loop over groups (or tasks within them)
/// reads.
std::pair<Value, Value> groupBounds(Emitter &e, Value sizes, Value rowCount);

void lowerRoute(RewriterBase &rewriter, RouteOp op);
/// moe.route_grad: the same top-k selection as lowerRoute, then the chain
/// rule per token (RouteLowering.cpp).
void lowerRouteGrad(RewriterBase &rewriter, RouteGradOp op);
/// moe.null_slots: the benchmark null routing, per token (NullSlotsLowering.cpp).
void lowerNullSlots(RewriterBase &rewriter, NullSlotsOp op);
void lowerPack(RewriterBase &rewriter, PackOp op);
void lowerGatherRows(RewriterBase &rewriter, GatherRowsOp op);
/// The grouped matmuls. Kept apart from the rest so that a tiled or
/// microkernel strategy can replace this one lowering.
void lowerGmm(RewriterBase &rewriter, GmmOp op);
void lowerTgmm(RewriterBase &rewriter, TgmmOp op);
/// moe.tgmm as register tiles, in tasks of an expert's depth block that
/// walk its column blocks (TgmmMicrokernel.cpp): the microkernel
/// strategies' form.
void lowerTgmmMicrokernel(RewriterBase &rewriter, TgmmOp op);
/// moe.pack_weights: the weights in a kernel's layout (PackWeightsLowering.cpp).
void lowerPackWeights(RewriterBase &rewriter, PackWeightsOp op);
void lowerSigmoid(RewriterBase &rewriter, SigmoidOp op);
void lowerSwiglu(RewriterBase &rewriter, SwigluOp op);

/// The int8 ops (QuantizeLowering.cpp).
void lowerQuantize(RewriterBase &rewriter, QuantizeOp op);
void lowerDequantize(RewriterBase &rewriter, DequantizeOp op);
void lowerFakeQuant(RewriterBase &rewriter, FakeQuantOp op);
/// max_d |rows[r, d]| over d in [0, depth), as f32.
Value rowAbsMax(Emitter &e, Value rows, Value r, Value depth);
/// The scale of weight column n of expert g: scales [E] or [E, N].
Value weightScale(Emitter &e, Value scales, Value g, Value n);
void lowerSwigluGrad(RewriterBase &rewriter, SwigluGradOp op);
void lowerScaleRows(RewriterBase &rewriter, ScaleRowsOp op);
void lowerCombine(RewriterBase &rewriter, CombineOp op);
void lowerScatterSlots(RewriterBase &rewriter, ScatterSlotsOp op);

/// The collectives as calls into the sharded runtime (runtime/ShardComm.h;
/// CollectiveLowering.cpp). They fail, with a message, on a grid or type
/// the runtime cannot run.
LogicalResult lowerPsum(RewriterBase &rewriter, PsumOp op);
LogicalResult lowerAllGather(RewriterBase &rewriter, AllGatherOp op);
LogicalResult lowerReduceScatter(RewriterBase &rewriter, ReduceScatterOp op);
LogicalResult lowerAllToAll(RewriterBase &rewriter, AllToAllOp op);
/// shard.process_multi_index and shard.process_linear_index.
LogicalResult lowerProcessIndex(RewriterBase &rewriter, Operation *op);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_LOWERINGS_LOWERINGS_H
