//===- GmmMicrokernel.cpp - the fast grouped matmul: tiles, AVX-512 FMA ---===//
//
// moe.gmm (not transposed) as a register-tiled, cache-blocked kernel written
// in the vector dialect, which LLVM turns into AVX-512 FMAs with embedded
// broadcasts:
//
//   tasks  = for each group, column block (nc), row block (mc): ordered so the
//            row blocks sharing a weight block run one after another
//   worker = one per OpenMP thread, taking the next task from an atomic
//            counter: a hot expert's rows are many tasks, not one thread's
//            work, and uneven tasks never leave a core idle
//   task   = for each depth block (kc): pack the weight block into panels of
//            nr = 16*nv columns (f32, contiguous: no cache-set conflicts from
//            the weight's row stride, bf16 widened once), then for each
//            register tile of mr rows and each panel, mr x nv accumulators
//            of vector<16xf32> over the depth block
//
// Fusions, each optional (the caller decides what the IR allows):
//   - gather: rows are read from `x[perm[r] / K]` (the pack's gather), so the
//     packed [T*K, H] rows never exist;
//   - SwiGLU: a panel holds nr/2 gate and nr/2 up columns, and the last depth
//     block writes silu(gate) * up: the [T*K, 2M] hidden never reaches memory.
//
// Why by hand: upstream's linalg tiling + vectorization gives a tiled matmul,
// but not grouped rows with a data-dependent row-to-weight map, a gathered
// left operand, or an epilogue that pairs columns N apart.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/GmmPackedTasks.h"
#include "codegen/GmmKernelPlan.h"
#include "codegen/GmmMicrokernel.h"

#include "strategy/TargetCpu.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
// The task kinds, as the task table stores them.
constexpr int64_t kFmaKind = 0, kAmxKind = 1, kDotKind = 2, kInt8Kind = 3, kVnniKind = 4;

/// `omp_get_max_threads`, declared in the module once: the worker count.
Value maxThreads(Emitter &e, Operation *anchor) {
  auto module = anchor->getParentOfType<ModuleOp>();
  auto i32 = e.b.getI32Type();
  constexpr StringLiteral name = "omp_get_max_threads";
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder mb(module.getBodyRegion());
    fn = func::FuncOp::create(mb, module.getLoc(), name,
                              FunctionType::get(e.b.getContext(), {}, {i32}));
    fn.setPrivate();
  }
  Value n = func::CallOp::create(e.b, fn, ValueRange{}).getResult(0);
  return e.max(e.toIndex(n), e.index(1));
}

} // namespace

namespace {
/// Moves the AMX task's code into a function of its own, called from
/// `region`. LLVM configures the tile registers (ldtilecfg) and releases them
/// (tilerelease) in the prologue and epilogue of every function that uses
/// tiles: left in the kernel's function, those run on every call, and a CPU
/// without AMX stops with SIGILL before the run-time check that would have
/// chosen another task kind. Called only for AMX tasks, they run only there.
void outlineTileCode(Region &region, Operation *anchor) {
  auto module = anchor->getParentOfType<ModuleOp>();
  std::string name;
  for (int i = 0;; ++i) {
    name = "moe_amx_task_" + std::to_string(i);
    if (!module.lookupSymbol(name))
      break;
  }
  IRRewriter rewriter(anchor->getContext());
  auto outlined = outlineSingleBlockRegion(rewriter, region.getLoc(), region, name);
  if (failed(outlined))
    llvm::report_fatal_error("moe-lower-to-loops: cannot outline the AMX task");
  outlined->setPrivate();
  // Kept a call: LLVM would inline a private function called once. (As
  // `passthrough`: convert-func-to-llvm carries it to the llvm.func, not
  // `no_inline`.)
  (*outlined)->setAttr("passthrough", rewriter.getArrayAttr({rewriter.getStringAttr("noinline")}));
}
} // namespace

Value mlir::moe::codegen::lanesBelow(Emitter &e, Value col, Value limit, int64_t lanes) {
  Value n = e.max(e.min(e.sub(limit, col), e.index(lanes)), e.index(0));
  return vector::CreateMaskOp::create(e.b, VectorType::get({lanes}, e.b.getI1Type()), ValueRange{n});
}

namespace {
/// 1 / (1 + exp(-z)) on an f32 vector.
Value vectorSigmoid(Emitter &e, Value z) {
  auto &b = e.b;
  Value one = arith::ConstantOp::create(b, DenseElementsAttr::get(cast<VectorType>(z.getType()), 1.0f));
  return arith::DivFOp::create(
      b, one, arith::AddFOp::create(b, one, math::ExpOp::create(b, arith::NegFOp::create(b, z))));
}
} // namespace

Value mlir::moe::codegen::siluTimes(Emitter &e, Value gate, Value up) {
  auto &b = e.b;
  return arith::MulFOp::create(b, arith::MulFOp::create(b, gate, vectorSigmoid(e, gate)), up);
}

Value mlir::moe::codegen::activate(Emitter &e, const GmmKernelPlan &p, Value gate, Value up) {
  if (!p.gptOss)
    return siluTimes(e, gate, up);
  auto &b = e.b;
  auto type = cast<VectorType>(gate.getType());
  auto splat = [&](double v) {
    return arith::ConstantOp::create(b, DenseElementsAttr::get(type, static_cast<float>(v)));
  };
  Value g = arith::MinimumFOp::create(b, gate, splat(p.limit));
  Value u = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, up, splat(p.limit)),
                                      splat(-p.limit));
  Value sig = vectorSigmoid(e, arith::MulFOp::create(b, g, splat(p.alpha)));
  return arith::MulFOp::create(b, arith::AddFOp::create(b, u, splat(1.0)),
                               arith::MulFOp::create(b, g, sig));
}

std::pair<Value, Value> mlir::moe::codegen::deinterleave(Emitter &e, Value first, Value second) {
  int64_t lanes = cast<VectorType>(first.getType()).getNumElements();
  SmallVector<int64_t> even, odd;
  for (int64_t l = 0; l < lanes; ++l) {
    even.push_back(2 * l);
    odd.push_back(2 * l + 1);
  }
  return {vector::ShuffleOp::create(e.b, first, second, even).getResult(),
          vector::ShuffleOp::create(e.b, first, second, odd).getResult()};
}

Value mlir::moe::codegen::plusBias(Emitter &e, Value v, Value bias, Value g, Value col,
                                   Value limit) {
  if (!bias)
    return v;
  auto &b = e.b;
  auto type = cast<VectorType>(v.getType());
  Type element = cast<MemRefType>(bias.getType()).getElementType();
  auto loadType = VectorType::get(type.getShape(), element);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(element)));
  Value lanes = vector::MaskedLoadOp::create(b, loadType, bias, ValueRange{g, col},
                                             lanesBelow(e, col, limit, type.getNumElements()), zeros);
  if (!element.isF32())
    lanes = arith::ExtFOp::create(b, type, lanes);
  return arith::AddFOp::create(b, v, lanes);
}

namespace {
class MicrokernelEmitter {
public:
  MicrokernelEmitter(Emitter &e, const GmmKernelPlan &plan)
      : e(e), b(e.b), p(plan), t(plan.tiling), nr(kLanes * t.vectors),
        outPerPanel(plan.swiglu ? nr / 2 : nr),
        panelsPerBlock(t.columnBlock / nr),
        vecType(VectorType::get({kLanes}, b.getF32Type())) {}

  void emit(Operation *anchor);

private:
  Value splat(double v) {
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vecType, static_cast<float>(v)));
  }
  Value toF32(Value v) {
    if (cast<VectorType>(v.getType()).getElementType().isF32())
      return v;
    return arith::ExtFOp::create(b, vecType, v);
  }
  void packWeights(Value g, Value pc, Value kLen, Value c0, Value panels, Value packed);
  void registerTile(Value r0, Value r1, Value g, Value ir, Value pi, Value c0, Value pc,
                    Value kLen, Value packed, Value partial);
  /// Where the 16 weight columns of a panel's vector `v` are, for the panel
  /// writing output columns from `colOut`: the weight, its first column, the
  /// end of its columns, and its bias.
  struct VectorColumns {
    Value weight, column, limit, bias;
  };
  VectorColumns vectorColumns(int64_t v, Value colOut);
  void task(Value r0, Value r1, Value g, Value cb, Value packed, Value partial);

  Emitter &e;
  ImplicitLocOpBuilder &b;
  const GmmKernelPlan &p;
  const GmmTiling &t;
  int64_t nr, outPerPanel, panelsPerBlock;
  VectorType vecType;
};

MicrokernelEmitter::VectorColumns MicrokernelEmitter::vectorColumns(int64_t v, Value colOut) {
  Value width = e.index(p.width);
  if (p.swiglu && p.interleaved)
    // Gate and up alternate: the panel's 2 x outPerPanel weight columns.
    return {p.gateRhs, e.add(e.mul(colOut, e.index(2)), e.index(v * kLanes)),
            e.mul(width, e.index(2)), p.gateBias};
  if (p.swiglu && v >= t.vectors / 2) {
    Value offset = e.index(p.upOffset);
    return {p.upRhs, e.add(e.add(colOut, offset), e.index((v - t.vectors / 2) * kLanes)),
            e.add(width, offset), p.upBias};
  }
  return {p.gateRhs, e.add(colOut, e.index(v * kLanes)), width, p.gateBias};
}

void MicrokernelEmitter::packWeights(Value g, Value pc, Value kLen, Value c0,
                                     Value panels, Value packed) {
  Value zero = e.index(0);
  Type element = cast<MemRefType>(p.gateRhs.getType()).getElementType();
  auto loadType = VectorType::get({kLanes}, element);
  Value passThru = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(element)));
  // Weight rows in memory order (a row of the block is contiguous; a new
  // row is a new page, which the hardware prefetcher does not cross).
  e.forLoop(zero, kLen, [&](Value k) {
    Value depthRow = e.add(pc, k);
    e.forLoop(zero, panels, [&](Value pi) {
      Value colOut = e.add(c0, e.mul(pi, e.index(outPerPanel)));
      for (int64_t v = 0; v < t.vectors; ++v) {
        VectorColumns vc = vectorColumns(v, colOut);
        Value src = vc.weight, col = vc.column, limit = vc.limit;
        Value vec;
        if (p.transposeRhs) {
          // rhs [E, N, D]: the 16 columns are 16 rows of the weight, a
          // scalar each (the pack is amortized over the task's rows).
          SmallVector<Value> lanes;
          for (int64_t l = 0; l < kLanes; ++l) {
            Value c = e.add(col, e.index(l));
            Value at = e.min(c, e.sub(limit, e.index(1)));
            Value v = memref::LoadOp::create(b, src, ValueRange{g, at, depthRow});
            lanes.push_back(arith::SelectOp::create(b, e.lt(c, limit), v, e.zero(element)));
          }
          vec = vector::FromElementsOp::create(b, loadType, lanes);
        } else {
          vec = vector::MaskedLoadOp::create(b, loadType, src, ValueRange{g, depthRow, col},
                                             lanesBelow(e, col, limit, kLanes), passThru);
        }
        vector::StoreOp::create(b, toF32(vec), packed, ValueRange{pi, k, e.index(v * kLanes)});
      }
    });
  });
}

void MicrokernelEmitter::registerTile(Value r0, Value r1, Value g, Value ir, Value pi,
                                      Value c0, Value pc, Value kLen, Value packed,
                                      Value partial) {
  Value zero = e.index(0), one = e.index(1);
  Value rowsHere = e.sub(r1, ir);
  // Rows past the tile's end repeat its last row: computed, never stored.
  SmallVector<Value> srcRow, valid;
  for (int64_t i = 0; i < t.rows; ++i) {
    Value r = e.min(e.add(ir, e.index(i)), e.sub(r1, one));
    if (p.perm) {
      Value slot = e.toIndex(e.load(p.perm, {r}));
      valid.push_back(e.ge(slot, zero));
      srcRow.push_back(e.divs(e.max(slot, zero), e.index(p.topK)));
    } else {
      srcRow.push_back(r);
    }
  }
  Value isFirst = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pc, zero);
  Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, e.add(pc, kLen),
                                       e.index(p.depth));
  Value tileRow = e.sub(ir, r0);
  int64_t accCount = t.rows * t.vectors;
  SmallVector<Type> accTypes(accCount, vecType);

  {
    Value panelCol = e.mul(pi, e.index(nr));
    // Accumulators: zero on the first depth block, else the partial sums.
    auto init = scf::IfOp::create(b, accTypes, isFirst, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(init.thenBlock());
      Value z = splat(0.0);
      scf::YieldOp::create(b, SmallVector<Value>(accCount, z));
      b.setInsertionPointToStart(init.elseBlock());
      SmallVector<Value> loaded;
      for (int64_t i = 0; i < t.rows; ++i)
        for (int64_t v = 0; v < t.vectors; ++v)
          loaded.push_back(vector::LoadOp::create(
              b, vecType, partial,
              ValueRange{e.add(tileRow, e.index(i)), e.add(panelCol, e.index(v * kLanes))}));
      scf::YieldOp::create(b, loaded);
    }
    SmallVector<Value> acc = e.forLoop(
        zero, kLen, init.getResults(), [&](Value k, ValueRange in) -> SmallVector<Value> {
          SmallVector<Value> w;
          for (int64_t v = 0; v < t.vectors; ++v)
            w.push_back(vector::LoadOp::create(b, vecType, packed,
                                               ValueRange{pi, k, e.index(v * kLanes)}));
          Value depthCol = e.add(pc, k);
          SmallVector<Value> out(in.begin(), in.end());
          for (int64_t i = 0; i < t.rows; ++i) {
            Value a = vector::BroadcastOp::create(b, vecType, e.loadF32(p.lhs, {srcRow[i], depthCol}));
            for (int64_t v = 0; v < t.vectors; ++v)
              out[i * t.vectors + v] = vector::FMAOp::create(b, a, w[v], out[i * t.vectors + v]);
          }
          return out;
        });

    auto done = scf::IfOp::create(b, TypeRange{}, isLast, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    // Not the last depth block: keep the partial sums.
    b.setInsertionPoint(done.elseBlock()->getTerminator());
    for (int64_t i = 0; i < t.rows; ++i)
      for (int64_t v = 0; v < t.vectors; ++v)
        vector::StoreOp::create(b, acc[i * t.vectors + v], partial,
                                ValueRange{e.add(tileRow, e.index(i)),
                                           e.add(panelCol, e.index(v * kLanes))});
    // The last: the epilogue writes the output rows that exist.
    b.setInsertionPoint(done.thenBlock()->getTerminator());
    Value colOut = e.add(c0, e.mul(pi, e.index(outPerPanel)));
    Value width = e.index(p.width);
    Type outElement = cast<MemRefType>(p.out.getType()).getElementType();
    int64_t outVectors = p.swiglu ? t.vectors / 2 : t.vectors;
    for (int64_t i = 0; i < t.rows; ++i) {
      e.ifThen(e.lt(e.index(i), rowsHere), [&] {
        // The sums with their bias, in the weight's column order.
        auto sum = [&](int64_t v) {
          VectorColumns vc = vectorColumns(v, colOut);
          return plusBias(e, acc[i * t.vectors + v], vc.bias, g, vc.column, vc.limit);
        };
        for (int64_t u = 0; u < outVectors; ++u) {
          Value v;
          if (p.swiglu && p.interleaved) {
            auto [gate, up] = deinterleave(e, sum(2 * u), sum(2 * u + 1));
            v = activate(e, p, gate, up);
          } else if (p.swiglu) {
            v = activate(e, p, sum(u), sum(u + outVectors));
          } else {
            v = sum(u);
          }
          if (p.perm)
            v = arith::SelectOp::create(b, valid[i], v, splat(0.0));
          if (!outElement.isF32())
            v = arith::TruncFOp::create(b, VectorType::get({kLanes}, outElement), v);
          Value col = e.add(colOut, e.index(u * kLanes));
          vector::MaskedStoreOp::create(b, p.out, ValueRange{e.add(ir, e.index(i)), col},
                                        lanesBelow(e, col, width, kLanes), v);
        }
      });
    }
  }
}

void MicrokernelEmitter::task(Value r0, Value r1, Value g, Value cb, Value packed,
                              Value partial) {
  int64_t outColumns = panelsPerBlock * outPerPanel;
  Value c0 = e.mul(cb, e.index(outColumns));
  Value cEnd = e.min(e.add(c0, e.index(outColumns)), e.index(p.width));
  Value panels = e.divs(e.add(e.sub(cEnd, c0), e.index(outPerPanel - 1)), e.index(outPerPanel));
  Value depth = e.index(p.depth);
  auto depthLoop = scf::ForOp::create(b, e.index(0), depth, e.index(t.depthBlock));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(depthLoop.getBody()->getTerminator());
  Value pc = depthLoop.getInductionVar();
  Value kLen = e.min(e.index(t.depthBlock), e.sub(depth, pc));
  packWeights(g, pc, kLen, c0, panels, packed);
  // Rows outside, panels inside: a register tile's rows of the left operand
  // (mr x kc) stay in L1 while the packed block's panels stream from L2.
  auto rowLoop = scf::ForOp::create(b, r0, r1, e.index(t.rows));
  b.setInsertionPoint(rowLoop.getBody()->getTerminator());
  auto panelLoop = scf::ForOp::create(b, e.index(0), panels, e.index(1));
  b.setInsertionPoint(panelLoop.getBody()->getTerminator());
  registerTile(r0, r1, g, rowLoop.getInductionVar(), panelLoop.getInductionVar(), c0, pc, kLen,
               packed, partial);
}

void MicrokernelEmitter::emit(Operation *anchor) {
  Value zero = e.index(0), one = e.index(1);
  auto indexType = b.getIndexType();
  Value rowCount = p.rowCount;
  Value groups = e.dim(p.sizes, 0);
  int64_t outColumns = panelsPerBlock * outPerPanel;
  int64_t colBlocks = (p.width + outColumns - 1) / outColumns;

  // The packed-weight tasks, when the operands are bf16 and the compile
  // target has AMX or AVX512_BF16, or the weights are int8; whether this
  // process may use AMX is only known at run time.
  std::optional<PackedGmmTasks> packedTasks;
  Value amxReady = arith::ConstantOp::create(b, b.getBoolAttr(false));
  int64_t packedColBlocks = 0;
  int64_t minRowBlock = t.rowBlock;
  if (p.amx || p.avx512Bf16 || p.int8) {
    packedTasks.emplace(e, p);
    packedColBlocks = (p.width + packedTasks->columnBlock() - 1) / packedTasks->columnBlock();
  }
  if (p.int8) {
    packedTasks->quantizeRows();
    minRowBlock = std::min(minRowBlock, PackedGmmTasks::kInt8RowGranule);
  }
  if (p.amx) {
    amxReady = PackedGmmTasks::requestTileState(e, anchor);
    minRowBlock = std::min(minRowBlock, PackedGmmTasks::kAmxRowGranule);
  }
  if (p.avx512Bf16)
    minRowBlock = std::min(minRowBlock, p.dotRows);

  // The task table: (first row, end row, group, column block, kind), group
  // by group, the row blocks of one weight block consecutive. The kind is
  // chosen per group at run time: AMX for groups of at least
  // PackedGmmTasks::kMinAmxRows rows when tiles are available, else the
  // AVX512_BF16 dot products where compiled in, else FMA. int8: AMX for every
  // group when tiles are available, else the AVX512-VNNI dot products where
  // compiled in, else the exact i32 vector task.
  Value maxTasks = e.mul(e.add(e.add(e.divs(rowCount, e.index(minRowBlock)), groups), one),
                         e.index(std::max(colBlocks, packedColBlocks)));
  Value tasks = e.alloc({ShapedType::kDynamic, 5}, indexType, {maxTasks});
  SmallVector<Value> counts = e.forLoop(
      zero, groups, ValueRange{zero, zero}, [&](Value g, ValueRange acc) -> SmallVector<Value> {
        Value size = e.max(e.toIndex(e.load(p.sizes, {g})), zero);
        Value first = e.min(acc[0], rowCount);
        Value end = e.min(e.add(acc[0], size), rowCount);
        Value useAmx = e.andI(amxReady, e.ge(e.sub(end, first), e.index(std::max<int64_t>(p.amxMinRows, 1))));
        int64_t int8Kind = p.avx512Vnni ? kVnniKind : kInt8Kind;
        Value kind = e.index(p.int8 ? int8Kind : p.avx512Bf16 ? kDotKind : kFmaKind);
        bool packed = p.int8 || p.avx512Bf16;
        Value blocks = e.index(packed ? packedColBlocks : colBlocks);
        Value rowBlock = p.int8 ? packedTasks->rowBlockFor(e.sub(end, first), PackedGmmTasks::kMaxInt8Rows,
                                                           PackedGmmTasks::kInt8RowGranule)
                                : e.index(p.avx512Bf16 ? p.dotRows : t.rowBlock);
        if (p.amx) {
          kind = e.select(useAmx, e.index(kAmxKind), kind);
          blocks = e.select(useAmx, e.index(packedColBlocks), blocks);
          rowBlock = e.select(useAmx,
                              packedTasks->rowBlockFor(e.sub(end, first), PackedGmmTasks::kMaxAmxRows,
                                                       PackedGmmTasks::kAmxRowGranule),
                              rowBlock);
        }
        Value n = e.forLoop(zero, blocks, ValueRange{acc[1]},
                            [&](Value cb, ValueRange c) -> SmallVector<Value> {
                              return e.forLoop(first, end, rowBlock, c,
                                               [&](Value r, ValueRange count) -> SmallVector<Value> {
                                                 Value values[5] = {r, e.min(e.add(r, rowBlock), end), g, cb, kind};
                                                 for (int64_t f = 0; f < 5; ++f)
                                                   e.store(values[f], tasks, {count[0], e.index(f)});
                                                 return {e.add(count[0], one)};
                                               });
                            })[0];
        return {e.add(acc[0], size), n};
      });
  Value totalRows = e.min(counts[0], rowCount), taskCount = counts[1];

  // Rows past the last group belong to no group: zero.
  e.forLoop(totalRows, rowCount, [&](Value r) {
    Type outElement = cast<MemRefType>(p.out.getType()).getElementType();
    Value z = e.zero(outElement);
    e.forLoop(zero, e.index(p.width), [&](Value n) { e.store(z, p.out, {r, n}); });
  });

  auto i64 = b.getI64Type();
  Value counter = e.alloc({1}, i64, {});
  e.store(arith::ConstantOp::create(b, b.getI64IntegerAttr(0)), counter, {zero});
  Value workers = e.min(maxThreads(e, anchor), taskCount);
  Value taskCount64 = arith::IndexCastOp::create(b, i64, taskCount);
  e.parallelFor(zero, workers, [&](Value) {
    // Per worker: the FMA tasks' packed weight block and partial sums.
    Value packed, partial;
    if (p.fma) {
      packed = e.alloc({panelsPerBlock, t.depthBlock, nr}, b.getF32Type(), {});
      partial = e.alloc({t.rowBlock, panelsPerBlock * nr}, b.getF32Type(), {});
    }
    std::optional<PackedGmmTasks::Scratch> packedScratch;
    if (packedTasks)
      packedScratch = packedTasks->allocScratch();
    auto loop = scf::WhileOp::create(b, TypeRange{i64}, ValueRange{});
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&loop.getBefore());
    Value taken = memref::AtomicRMWOp::create(
        b, arith::AtomicRMWKind::addi, arith::ConstantOp::create(b, b.getI64IntegerAttr(1)),
        counter, ValueRange{zero});
    Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, taken, taskCount64);
    scf::ConditionOp::create(b, more, ValueRange{taken});
    Block *body = b.createBlock(&loop.getAfter(), {}, TypeRange{i64}, {b.getLoc()});
    Value ti = arith::IndexCastOp::create(b, indexType, body->getArgument(0));
    Value fields[5];
    for (int64_t f = 0; f < 5; ++f)
      fields[f] = e.load(tasks, {ti, e.index(f)});
    scf::YieldOp::create(b, ValueRange{});
    b.setInsertionPoint(body->getTerminator());
    // One branch per kind compiled in. The first is the kind of every group
    // that is not AMX's (the table's default); it ends the chain of ifs, so
    // it is never AMX, whose code must sit in a function of its own.
    SmallVector<std::pair<int64_t, std::function<void()>>> kinds;
    auto dotTask = [&] { packedTasks->dotTask(fields[0], fields[1], fields[2], fields[3], *packedScratch); };
    auto fmaTask = [&] { task(fields[0], fields[1], fields[2], fields[3], packed, partial); };
    if (p.int8 && p.avx512Vnni)
      kinds.push_back({kVnniKind, [&] { packedTasks->vnniTask(fields[0], fields[1], fields[2], fields[3], *packedScratch); }});
    else if (p.int8)
      kinds.push_back({kInt8Kind, [&] { packedTasks->int8VectorTask(fields[0], fields[1], fields[2], fields[3]); }});
    else if (p.avx512Bf16)
      kinds.push_back({kDotKind, dotTask});
    else if (p.fma)
      kinds.push_back({kFmaKind, fmaTask});
    if (p.amx)
      kinds.push_back({kAmxKind, [&] { packedTasks->amxTask(fields[0], fields[1], fields[2], fields[3], *packedScratch); }});
    assert(!kinds.empty() && "moe-select-lowering lists a kernel for every gmm");
    while (kinds.size() > 1) {
      auto [kind, body] = kinds.pop_back_val();
      auto kindIf = scf::IfOp::create(b, TypeRange{},
                                      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, fields[4], e.index(kind)),
                                      /*withElseRegion=*/true);
      b.setInsertionPoint(kindIf.thenBlock()->getTerminator());
      body();
      if (kind == kAmxKind)
        outlineTileCode(kindIf.getThenRegion(), anchor);
      b.setInsertionPoint(kindIf.elseBlock()->getTerminator());
    }
    kinds.front().second();
  });
}
/// The plan for `gate` (and, for a two-input SwiGLU, `up`), reading rows
/// through `gather` if given; `out` is left for the caller.
GmmKernelPlan planFromTensors(Emitter &e, GmmOp gate, GmmOp up, SwigluOp swiglu,
                              GatherRowsOp gather, const GmmTiling &tiling) {
  GmmKernelPlan plan;
  plan.tiling = tiling;
  plan.sizes = e.buffer(gate.getGroupSizes());
  auto gateType = cast<RankedTensorType>(gate.getType());
  plan.rowCount = gateType.isDynamicDim(0) ? Value() : e.index(gateType.getDimSize(0));
  if (gather) {
    plan.lhs = e.unitStrideBuffer(gather.getSrc());
    plan.perm = e.buffer(gather.getPermutation());
    plan.topK = gather.getK();
    if (!plan.rowCount)
      plan.rowCount = e.dim(plan.perm, 0);
  } else {
    plan.lhs = e.unitStrideBuffer(gate.getLhs());
    if (!plan.rowCount)
      plan.rowCount = e.dim(plan.lhs, 0);
  }
  plan.depth = cast<RankedTensorType>(gate.getLhs().getType()).getDimSize(1);
  plan.gateRhs = e.unitStrideBuffer(gate.getRhs());
  if (gate.isQuantized()) {
    plan.int8 = true;
    plan.gateScales = plan.upScales = e.unitStrideBuffer(gate.getRhsScales());
    plan.perChannel = cast<RankedTensorType>(gate.getRhsScales().getType()).getRank() == 2;
  }
  plan.transposeRhs = gate.getTransposeRhs();
  int64_t rhsWidth = cast<RankedTensorType>(gate.getRhs().getType()).getDimSize(plan.transposeRhs ? 1 : 2);
  plan.gateBias = gate.getBias() ? e.unitStrideBuffer(gate.getBias()) : Value();
  plan.upBias = plan.gateBias;
  if (swiglu) {
    plan.swiglu = true;
    plan.gptOss = swiglu.getActivation() == Activation::gpt_oss;
    plan.alpha = swiglu.getAlpha().convertToDouble();
    plan.limit = swiglu.getLimit().convertToDouble();
    plan.interleaved = swiglu.getInterleaved();
    if (up) {
      plan.upBias = up.getBias() ? e.unitStrideBuffer(up.getBias()) : Value();
      plan.upRhs = e.unitStrideBuffer(up.getRhs());
      if (plan.int8)
        plan.upScales = e.unitStrideBuffer(up.getRhsScales());
      plan.upOffset = 0;
      plan.width = rhsWidth;
    } else {
      plan.upRhs = plan.gateRhs;
      plan.width = rhsWidth / 2;
      plan.upOffset = plan.width;
    }
  } else {
    plan.width = rhsWidth;
  }
  return plan;
}

} // namespace

void mlir::moe::codegen::lowerGmmMicrokernel(RewriterBase &rewriter, GmmOp gate, GmmOp up,
                                             SwigluOp swiglu, GmmLoweringAttr lowering) {
  Operation *root = swiglu ? swiglu.getOperation() : gate.getOperation();
  rewriter.setInsertionPoint(root);
  Emitter e(rewriter, root->getLoc());
  auto gather = lowering.fuses("gather") ? gate.getLhs().getDefiningOp<GatherRowsOp>() : GatherRowsOp();
  GmmKernelPlan plan = planFromTensors(e, gate, up, swiglu, gather, GmmTiling::of(lowering));
  plan.fma = lowering.hasKernel("fma");
  plan.amx = lowering.hasKernel(plan.int8 ? "amx_int8" : "amx_bf16");
  plan.avx512Bf16 = lowering.hasKernel("avx512bf16_dot");
  plan.avx512Vnni = lowering.hasKernel("int8_vnni");
  plan.packedColumns = lowering.getPackedColumns();
  plan.amxMinRows = lowering.getAmxMinRows();
  plan.dotRows = lowering.getDotRows();
  auto type = cast<RankedTensorType>(root->getResult(0).getType());
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(plan.rowCount);
  plan.out = e.alloc(type, dyn);
  MicrokernelEmitter(e, plan).emit(root);
  rewriter.replaceOp(root, e.tensor(plan.out, type));
  if (swiglu) {
    rewriter.eraseOp(gate);
    if (up)
      rewriter.eraseOp(up);
  }
  if (gather && gather->use_empty())
    rewriter.eraseOp(gather);
}
