//===- PassUtils.h - IR-building helpers the moe passes share ------*- C++ -*-===//
#ifndef MOEC_PASSES_PASSUTILS_H
#define MOEC_PASSES_PASSUTILS_H

#include "dialect/MoeOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::moe {

/// `a` and `b` concatenated along `dim`: folded into one constant when both
/// are dense constants (weights known at compile time), else a tensor.concat
/// that runs with the function.
Value concatWeights(OpBuilder &b, Location loc, Value a, Value c, int64_t dim);

/// The private declaration of runtime function `name` (runtime/ShardComm.h)
/// in `op`'s module, made on first use. Calls of one name must agree on the
/// type.
func::FuncOp declareRuntimeFunction(Operation *op, StringRef name, FunctionType type);

/// `v` as a tensor of `type`'s element type (same shape), by extf or truncf:
/// the backward's adjoints take their value's type, and moe-quantize's
/// dequantized weights their float weight's.
Value castTo(OpBuilder &b, Location loc, Value v, Type type);

/// lhs [T, K] @ rhs [K, N] with an f32 accumulator whatever the storage
/// type, as upstream's linalg.matmul (nothing MoE-specific about it).
Value matmulF32(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// Which rows a pack of the routed experts forms groups for: all experts
/// (the default), or the `local` experts [0, local) of ids already shifted
/// by the shard's first expert, into `capacity` rows when given (the
/// expert-parallel dispatches).
struct PackScope {
  std::optional<int64_t> localExperts;
  std::optional<int64_t> capacity;
};

/// The routed experts of `block` over tokens `x` with the given routing:
/// pack, the up gmm(s) over `gateUp` (one fused w13 or w1 and w3), swiglu,
/// the routing weight when the block preweights, the down gmm over `down`,
/// combine. Pack and combine strategies come from `block`. Returns [T, H]
/// (f32 or x's type, as combine infers).
Value buildRoutedExperts(OpBuilder &b, Location loc, BlockOp block, Value x, Value ids,
                         Value weights, int64_t experts, ValueRange gateUp, Value gateUpBias,
                         Value down, Value downBias, PackScope scope = {});

/// The expert MLP over packed `rows` in groups `sizes`: the up gmm(s) with
/// their bias (null when none), `block`'s activation, the per-row
/// `preweight` scale if given, the down gmm with its bias.
Value buildExpertMlp(OpBuilder &b, Location loc, BlockOp block, Value rows, Value sizes,
                     ValueRange gateUp, Value gateUpBias, Value down, Value downBias,
                     Value preweight);

/// `block`'s activation (moe.swiglu with its activation attributes) of `h`.
Value buildActivation(OpBuilder &b, Location loc, BlockOp block, ValueRange h);

/// m [T, N] + bias [N] on every row (the router bias), in m's type.
Value addRowBias(OpBuilder &b, Location loc, Value m, Value bias);

/// A block's routing: ids [T, K] (i32) and weights [T, K] (f32).
struct Routing {
  Value ids, weights;
};

/// Routes the tokens with `block`'s router: its logits, or x @ its router
/// weight (`x` defaults to the block's), then, with benchmark null routing,
/// moe.null_slots over its draws (`draws` defaults to the block's; a sharded
/// block passes the rows its shard routes).
Routing buildRoute(OpBuilder &b, Location loc, BlockOp block, Value x = {},
                   Value logits = {}, Value draws = {});

/// The shared expert over `x`: silu(x @ sw1) * (x @ sw3) @ sw2, in f32,
/// times sigmoid(x @ w_gate) per token with a shared gate, returned in the
/// element type of x.
Value buildSharedExpert(OpBuilder &b, Location loc, BlockOp block, Value x);

/// A shared expert's matmul (buildSharedExpert's): from a zero accumulator,
/// with plain maps and static weights, either feeding a swiglu (gate, up)
/// or reading one, maybe truncated to bf16 (down). The router's matmul does
/// neither.
bool isSharedExpertMatmul(linalg::MatmulOp mm);

/// The lowering moe-select-lowering chose for a gmm or tgmm; none (null)
/// without one or with the reference loops.
GmmLoweringAttr fastLoweringOf(Operation *op);

/// A gmm whose lowering reads its rows through a moe.gather_rows (fuses the
/// gather).
bool readsThroughGather(Operation *op);

/// A gather_rows every user of which reads it as kernel rows: it has no
/// code of its own (moe-lower-to-loops leaves it to the gmms, which erase
/// it; moe-mark-stages gives it no stage).
bool gatherFusedIntoUsers(GatherRowsOp gather);

/// Replaces matmul `mm` by `result` (cast to its type when only the static
/// sizes differ) and erases it, with its zero accumulator (fill, empty) when
/// nothing else reads that.
void replaceMatmul(OpBuilder &b, linalg::MatmulOp mm, Value result);

/// A dense matmul `x [T, K] @ w [K, N]` as a grouped one: `w` as one
/// expert `[1, K, N]` (asOneExpert) and one group of all T rows.
Value asOneExpert(OpBuilder &b, Location loc, Value w);

/// The rows of one-group gmms and their group sizes ({T}), made once per
/// row tensor and element type, right after the rows are defined: two
/// matmuls of the same rows (the shared expert's gate and up) then read the
/// same values, which the SwiGLU fusion of moe-lower-to-loops requires.
class OneGroupRows {
public:
  /// `x` in `element` (widened if needed) and its sizes.
  std::pair<Value, Value> get(OpBuilder &b, Location loc, Value x, Type element);

private:
  DenseMap<std::pair<Value, Type>, std::pair<Value, Value>> made;
};


} // namespace mlir::moe

#endif // MOEC_PASSES_PASSUTILS_H
