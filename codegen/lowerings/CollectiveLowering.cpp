//===- CollectiveLowering.cpp - collectives to sharded-runtime calls ------===//
//
// moe.psum, moe.all_gather, moe.reduce_scatter, moe.all_to_all and the
// shard dialect's process indices become calls into the sharded runtime's C
// ABI (declared once in runtime/RuntimeAbi.h), which runs them in-process (threads) or over
// MPI, whichever the host bound. Why by hand: MLIR 22's convert-shard-to-mpi
// lowers only all_reduce, has no ragged all-to-all, and calls MPI directly,
// so its output could not run as threads of one process.
//
// The calls take contiguous rank-1 buffers (an external function's memref
// arguments arrive unpacked: pointers, offset, size, stride); each operand is
// copied into a fresh buffer first, which also keeps the collective's input
// and output apart as the runtime requires. A gather or scatter along a
// dimension other than the first reorders the blocks around the call.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/lowerings/Lowerings.h"
#include "passes/PassUtils.h"
#include "runtime/RuntimeAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {

/// The runtime's suffix for an element type, or "" when it has none.
/// The runtime's element kind of `t` (RuntimeAbi.h), if it has one.
std::optional<moec::abi::Element> abiElement(Type t) {
  if (t.isF32())
    return moec::abi::Element::F32;
  if (t.isBF16())
    return moec::abi::Element::BF16;
  if (t.isInteger(32))
    return moec::abi::Element::I32;
  return std::nullopt;
}

/// The runtime entry point of `collective` on `element`, or null.
const char *entryPoint(moec::abi::Collective collective, Type element) {
  std::optional<moec::abi::Element> kind = abiElement(element);
  return kind ? moec::abi::entryPoint(collective, *kind) : nullptr;
}

/// The grid `ref` names from `op`, if the runtime can run on it: static
/// axis sizes, at most abi::kMaxAxes axes (what an axes code holds).
FailureOr<shard::GridOp> runnableGrid(Operation *op, FlatSymbolRefAttr ref) {
  SymbolTableCollection symbols;
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, ref);
  if (!grid)
    return op->emitOpError() << ref << " does not name a shard.grid";
  if (llvm::any_of(grid.getShape(), ShapedType::isDynamic))
    return op->emitOpError("runs on a grid with a dynamic axis size; the sharded "
                           "runtime needs every axis size at compile time");
  if (grid.getShape().size() > size_t(moec::abi::kMaxAxes))
    return op->emitOpError() << "runs on a grid of more than " << moec::abi::kMaxAxes << " axes";
  return grid;
}

/// What a moe collective's call says about its group: the axes' code
/// (ShardComm.h) and the group's size.
struct Group {
  int64_t axesCode = 0;
  int64_t size = 1;
};

FailureOr<Group> resolve(Operation *op, FlatSymbolRefAttr gridRef, ArrayAttr axes) {
  SymbolTableCollection symbols;
  auto resolved = resolveGridAxes(op, symbols, gridRef, axes);
  if (failed(resolved) || failed(runnableGrid(op, gridRef)))
    return failure();
  Group g;
  g.axesCode = moec::abi::encodeAxes(resolved->indices.data(), int(resolved->indices.size()));
  g.size = resolved->shards;
  return g;
}

Value i64(Emitter &e, int64_t v) {
  return arith::ConstantOp::create(e.b, e.b.getI64IntegerAttr(v));
}

/// The dynamic sizes of `type` read off `buffer` (same shape).
SmallVector<Value> dynamicSizes(Emitter &e, RankedTensorType type, Value buffer) {
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(e.dim(buffer, i));
  return dyn;
}

/// A fresh identity-layout copy of tensor `value`.
Value contiguousCopy(Emitter &e, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Value src = e.buffer(value);
  Value copy = e.alloc(type, dynamicSizes(e, type, src));
  memref::CopyOp::create(e.b, src, copy);
  return copy;
}

/// An identity-layout buffer as `memref<?xT>`: the one type every call of a
/// runtime function passes, whatever the operand's shape.
Value flatten(Emitter &e, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value flat = buffer;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < type.getRank(); ++i)
      all[0].push_back(i);
    flat = memref::CollapseShapeOp::create(e.b, buffer, all);
  }
  auto dynamic = MemRefType::get({ShapedType::kDynamic}, type.getElementType());
  if (flat.getType() == dynamic)
    return flat;
  return memref::CastOp::create(e.b, dynamic, flat);
}

Value product(Emitter &e, Value buffer, int64_t from, int64_t to) {
  Value p = e.index(1);
  for (int64_t i = from; i < to; ++i)
    p = e.mul(p, e.dim(buffer, i));
  return p;
}

/// Moves blocks between the dimension-major layout of a tensor split along
/// `dim` into G blocks ([outer, G, chunk], chunk = the block's extent along
/// `dim` times the inner dimensions) and the block-major one ([G, outer,
/// chunk]) the runtime reads and writes. `toBlockMajor` picks the direction.
void reorderBlocks(Emitter &e, Value from, Value to, Value outer, Value groups, Value chunk,
                   bool toBlockMajor) {
  Value zero = e.index(0);
  e.parallelFor(zero, groups, [&](Value g) {
    e.forLoop(zero, outer, [&](Value o) {
      Value dimMajor = e.mul(e.add(e.mul(o, groups), g), chunk);
      Value blockMajor = e.mul(e.add(e.mul(g, outer), o), chunk);
      Value src = toBlockMajor ? dimMajor : blockMajor;
      Value dst = toBlockMajor ? blockMajor : dimMajor;
      e.forLoop(zero, chunk, [&](Value j) {
        e.store(e.load(from, {e.add(src, j)}), to, {e.add(dst, j)});
      });
    });
  });
}

/// The dynamic sizes of a gather's (or scatter's) result: `in`'s, with
/// dimension `dim` times (or divided by) the group size.
SmallVector<Value> resizedSizes(Emitter &e, RankedTensorType result, Value in, int64_t dim,
                                int64_t groupSize, bool gathers) {
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < result.getRank(); ++i) {
    if (!result.isDynamicDim(i))
      continue;
    Value size = e.dim(in, i);
    if (i == dim)
      size = gathers ? e.mul(size, e.index(groupSize)) : e.divs(size, e.index(groupSize));
    dyn.push_back(size);
  }
  return dyn;
}

/// Whether the group's blocks along `dim` are contiguous and in group order
/// in a row-major tensor of `type`: every dimension before `dim` is 1.
bool blocksContiguous(RankedTensorType type, int64_t dim) {
  return llvm::all_of(type.getShape().take_front(dim), [](int64_t s) { return s == 1; });
}

void call(Emitter &e, Operation *op, StringRef name, ValueRange args) {
  SmallVector<Type> types;
  for (Value a : args)
    types.push_back(a.getType());
  auto fn = declareRuntimeFunction(op, name, FunctionType::get(op->getContext(), types, {}));
  func::CallOp::create(e.b, fn, args);
}

LogicalResult unsupportedType(Operation *op, Type t, StringRef what) {
  return op->emitOpError() << "has no sharded-runtime lowering for " << what << " of " << t;
}

} // namespace

LogicalResult mlir::moe::codegen::lowerPsum(RewriterBase &rewriter, PsumOp op) {
  auto g = resolve(op, op.getGridAttr(), op.getAxes());
  if (failed(g))
    return failure();
  auto type = cast<RankedTensorType>(op.getType());
  Type element = type.getElementType();
  const char *entry = entryPoint(moec::abi::Collective::AllReduceSum, element);
  if (!entry)
    return unsupportedType(op, element, "a sum");
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value out = contiguousCopy(e, op.getInput());
  call(e, op, entry,
       {flatten(e, out), i64(e, g->axesCode), i64(e, g->size)});
  rewriter.replaceOp(op, e.tensor(out, type));
  return success();
}

LogicalResult mlir::moe::codegen::lowerAllGather(RewriterBase &rewriter, AllGatherOp op) {
  auto g = resolve(op, op.getGridAttr(), op.getAxes());
  if (failed(g))
    return failure();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  Type element = outType.getElementType();
  const char *entry = entryPoint(moec::abi::Collective::AllGather, element);
  if (!entry)
    return unsupportedType(op, element, "a gather");
  int64_t dim = op.getDim();
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value in = contiguousCopy(e, op.getInput());
  SmallVector<Value> dyn = resizedSizes(e, outType, in, dim, g->size, /*gathers=*/true);
  Value out = e.alloc(outType, dyn);
  // The runtime gathers block after block; along an inner dimension they
  // are reordered into place after.
  bool reorder = !blocksContiguous(inType, dim);
  Value gathered = reorder ? e.alloc(outType, dyn) : out;
  call(e, op, entry,
       {flatten(e, in), flatten(e, gathered), i64(e, g->axesCode), i64(e, g->size)});
  if (reorder)
    reorderBlocks(e, flatten(e, gathered), flatten(e, out), product(e, in, 0, dim),
                  e.index(g->size), product(e, in, dim, inType.getRank()),
                  /*toBlockMajor=*/false);
  rewriter.replaceOp(op, e.tensor(out, outType));
  return success();
}

LogicalResult mlir::moe::codegen::lowerReduceScatter(RewriterBase &rewriter, ReduceScatterOp op) {
  auto g = resolve(op, op.getGridAttr(), op.getAxes());
  if (failed(g))
    return failure();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  Type element = outType.getElementType();
  const char *entry = entryPoint(moec::abi::Collective::ReduceScatterSum, element);
  if (!entry)
    return unsupportedType(op, element, "a sum");
  int64_t dim = op.getDim();
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value in = contiguousCopy(e, op.getInput());
  Value out = e.alloc(outType, resizedSizes(e, outType, in, dim, g->size, /*gathers=*/false));
  // The runtime reads block after block: along an inner dimension they are
  // gathered from their places first.
  Value blocks = in;
  if (!blocksContiguous(inType, dim)) {
    blocks = e.alloc(inType, dynamicSizes(e, inType, in));
    reorderBlocks(e, flatten(e, in), flatten(e, blocks), product(e, in, 0, dim),
                  e.index(g->size), product(e, out, dim, outType.getRank()),
                  /*toBlockMajor=*/true);
  }
  call(e, op, entry,
       {flatten(e, blocks), flatten(e, out), i64(e, g->axesCode), i64(e, g->size)});
  rewriter.replaceOp(op, e.tensor(out, outType));
  return success();
}

LogicalResult mlir::moe::codegen::lowerAllToAll(RewriterBase &rewriter, AllToAllOp op) {
  auto g = resolve(op, op.getGridAttr(), op.getAxes());
  if (failed(g))
    return failure();
  auto rowsType = cast<RankedTensorType>(op.getRows().getType());
  auto outType = cast<RankedTensorType>(op.getReceived().getType());
  auto countsType = cast<RankedTensorType>(op.getRecvCounts().getType());
  Type element = outType.getElementType();
  const char *entry = entryPoint(moec::abi::Collective::AllToAll, element);
  if (!entry)
    return unsupportedType(op, element, "an all-to-all");
  if (outType.isDynamicDim(0))
    return op.emitOpError("needs a static received row count (the capacity) to be lowered");
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  Value rows = contiguousCopy(e, op.getRows());
  Value send = contiguousCopy(e, op.getSendCounts());
  // Rows and received rows agree on every dimension but the first.
  Value received = e.alloc(outType, dynamicSizes(e, outType, rows));
  Value recvCounts = e.alloc(countsType, {});
  Value rowElements = arith::IndexCastOp::create(e.b, e.b.getI64Type(),
                                                 product(e, rows, 1, rowsType.getRank()));
  call(e, op, entry,
       {flatten(e, rows), flatten(e, send), flatten(e, received), flatten(e, recvCounts),
        rowElements, i64(e, g->axesCode), i64(e, g->size)});
  rewriter.replaceOp(op, {e.tensor(received, outType), e.tensor(recvCounts, countsType)});
  return success();
}

namespace {
/// This shard's index along `axis` of `grid`: a runtime call (the shard is
/// not known until the program runs on a mesh).
Value meshCoordinate(Emitter &e, Operation *op, shard::GridOp grid, int64_t axis) {
  auto i64Type = e.b.getI64Type();
  auto fn = declareRuntimeFunction(op, moec::abi::meshCoordinateEntryPoint(),
                            FunctionType::get(op->getContext(),
                                              {i64Type, i64Type, i64Type}, {i64Type}));
  Value coord = func::CallOp::create(e.b, fn,
                                     ValueRange{i64(e, axis), i64(e, grid.getShape()[axis]),
                                                i64(e, grid.getShape().size())})
                    .getResult(0);
  return arith::IndexCastOp::create(e.b, e.b.getIndexType(), coord);
}

} // namespace

LogicalResult mlir::moe::codegen::lowerProcessIndex(RewriterBase &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op->getLoc());
  if (auto multi = dyn_cast<shard::ProcessMultiIndexOp>(op)) {
    auto grid = runnableGrid(op, multi.getGridAttr());
    if (failed(grid))
      return failure();
    SmallVector<Value> coords;
    ArrayRef<int16_t> axes = multi.getAxes();
    if (axes.empty())
      for (int64_t a = 0; a < int64_t(grid->getShape().size()); ++a)
        coords.push_back(meshCoordinate(e, op, *grid, a));
    else
      for (int16_t a : axes)
        coords.push_back(meshCoordinate(e, op, *grid, a));
    rewriter.replaceOp(op, coords);
    return success();
  }
  auto linear = cast<shard::ProcessLinearIndexOp>(op);
  auto grid = runnableGrid(op, linear.getGridAttr());
  if (failed(grid))
    return failure();
  Value index = e.index(0);
  for (int64_t a = 0; a < int64_t(grid->getShape().size()); ++a)
    index = e.add(e.mul(index, e.index(grid->getShape()[a])), meshCoordinate(e, op, *grid, a));
  rewriter.replaceOp(op, index);
  return success();
}
