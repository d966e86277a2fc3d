//===- ParallelLinalg.cpp - the moe-parallel-linalg pass ------------------===//
//
// The linalg ops the moe lowerings leave (the loss's elementwise ops and
// its sum, fills, strided copies; not the router's matmuls, whose loops
// put a reduction before a parallel dimension) as parallel loops, which
// convert-scf-to-openmp runs on the threads, instead of the serial loops
// convert-linalg-to-loops gives. Measured before (bf16 forward_backward,
// T 4096 top-8, 2-core Sapphire Rapids): the loss's squares 9.8 ms and its
// sum 12.5 ms, each on one core while the other waited.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <functional>

namespace mlir::moe {
#define GEN_PASS_DEF_MOEPARALLELLINALG
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
/// Whether `op`'s iteration space is large enough for the threads: a size
/// known only at run time (the tokens), or at least `minElements`.
bool worthThreads(linalg::LinalgOp op, int64_t minElements) {
  int64_t elements = 1;
  for (int64_t size : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return true;
    elements *= size;
  }
  return elements >= minElements;
}

/// The f32 input of `op` when it sums every element of it into a 0-d
/// buffer: every loop a reduction, the body one arith.addf of the element
/// and the accumulator.
Value summedInput(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op.getNumParallelLoops() != 0)
    return {};
  Value in = op.getDpsInputOperand(0)->get();
  auto inType = dyn_cast<MemRefType>(in.getType());
  auto outType = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!inType || !outType || outType.getRank() != 0 || inType.getRank() < 1 || !inType.getElementType().isF32() ||
      !outType.getElementType().isF32())
    return {};
  // The input indexed by the loops in order (a plain walk over it).
  if (!op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity())
    return {};
  Block &body = op->getRegion(0).front();
  if (body.getOperations().size() != 2)
    return {};
  auto add = dyn_cast<arith::AddFOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.back());
  if (!add || !yield || yield->getOperand(0) != add.getResult())
    return {};
  Value element = body.getArgument(0), acc = body.getArgument(1);
  if (!((add.getLhs() == element && add.getRhs() == acc) || (add.getLhs() == acc && add.getRhs() == element)))
    return {};
  return in;
}

/// out[] += the sum of `in`'s elements: rows (the first dimension) in
/// parallel, each row's sum added up by an scf.reduce.
void emitParallelSum(RewriterBase &rewriter, Location loc, Value in, Value out) {
  auto inType = cast<MemRefType>(in.getType());
  Type f32 = rewriter.getF32Type();
  Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < inType.getRank(); ++d)
    sizes.push_back(memref::DimOp::create(rewriter, loc, in, d));
  // Inside a row the additions may be reordered (and vectorized): the
  // order differs from the serial loop's anyway.
  auto reassoc = arith::FastMathFlagsAttr::get(rewriter.getContext(), arith::FastMathFlags::reassoc);
  auto parallel = scf::ParallelOp::create(
      rewriter, loc, ValueRange{c0}, ValueRange{sizes[0]}, ValueRange{c1}, ValueRange{zero},
      [&](OpBuilder &b, Location l, ValueRange rowIndex, ValueRange) {
        // The row's elements, dimension by dimension.
        std::function<Value(OpBuilder &, int64_t, SmallVector<Value>, Value)> sumFrom =
            [&](OpBuilder &ob, int64_t d, SmallVector<Value> indices, Value acc) -> Value {
          if (d == inType.getRank())
            return arith::AddFOp::create(ob, l, acc, memref::LoadOp::create(ob, l, in, indices), reassoc);
          auto loop = scf::ForOp::create(ob, l, c0, sizes[d], c1, ValueRange{acc},
                                         [&](OpBuilder &nb, Location, Value iv, ValueRange carried) {
                                           SmallVector<Value> inner = indices;
                                           inner.push_back(iv);
                                           scf::YieldOp::create(nb, l, sumFrom(nb, d + 1, inner, carried[0]));
                                         });
          return loop.getResult(0);
        };
        Value rowSum = sumFrom(b, 1, {rowIndex[0]}, zero);
        auto reduce = scf::ReduceOp::create(b, l, ValueRange{rowSum});
        Block &combine = reduce.getReductions()[0].front(); // (lhs, rhs), made with the op
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&combine);
        scf::ReduceReturnOp::create(b, l, arith::AddFOp::create(b, l, combine.getArgument(0), combine.getArgument(1)));
      });
  Value init = memref::LoadOp::create(rewriter, loc, out, ValueRange{});
  memref::StoreOp::create(rewriter, loc, arith::AddFOp::create(rewriter, loc, init, parallel.getResult(0)), out,
                          ValueRange{});
}

/// Whether every parallel loop of `op` comes before its reductions: one
/// scf.parallel over them, each iteration's reductions inside. After a
/// reduction, upstream's loops would open a parallel loop per iteration of
/// it (the router's matmul, as moe-lower-to-loops orders its loops: rows,
/// depth, columns; the router bias's gradient, a sum over the rows): those
/// stay serial.
bool parallelLoopsFirst(linalg::LinalgOp op) {
  bool reduction = false;
  for (utils::IteratorType type : op.getIteratorTypesArray()) {
    if (type == utils::IteratorType::reduction)
      reduction = true;
    else if (reduction)
      return false;
  }
  return true;
}

struct MoeParallelLinalgPass : mlir::moe::impl::MoeParallelLinalgBase<MoeParallelLinalgPass> {
  using MoeParallelLinalgBase::MoeParallelLinalgBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Inside a loop: a parallel one has the threads busy already, a
      // serial one would start them once an iteration. (The functions the
      // kernels outline, called inside parallel loops, hold no linalg op.)
      if (op.hasPureBufferSemantics() && !op->getParentOfType<LoopLikeOpInterface>() &&
          worthThreads(op, minElements))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (Value in = summedInput(op)) {
        emitParallelSum(rewriter, op.getLoc(), in, op.getDpsInitOperand(0)->get());
        rewriter.eraseOp(op);
      } else if (op.getNumParallelLoops() > 0 && parallelLoopsFirst(op) &&
                 succeeded(linalg::linalgOpToParallelLoops(rewriter, op))) {
        rewriter.eraseOp(op);
      }
    }
  }
};
} // namespace
