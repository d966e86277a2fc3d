//===- PackWeightsLowering.cpp - moe.pack_weights to loops -----------------===//
//
// The op's formula (MoeOps.td), 16 columns at a time. Each 16 physical
// columns are 16 consecutive columns of one source weight (gate/up runs of
// 16 or more), a row of them one masked vector load; or, with a
// gate_up_unit of 16 (the FMA kind's one-vector AVX2 tile), 8 gate then 8
// up columns, two loads joined. One (expert, tile) per parallel iteration,
// its depth rows in memory order. It runs once per weight load
// (moe-prepare-weights hoists it), so it favours plain code over speed; the
// kernels that read the result agree with this formula, not with this code.
// A change to the bytes it writes for given attributes bumps
// kPackLoweringVersion (compiler/Compiler.cpp), a part of every prepared
// form's layout.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"
#include "codegen/lowerings/Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kLanes = 16;
} // namespace

void mlir::moe::codegen::lowerPackWeights(RewriterBase &rewriter, PackWeightsOp op) {
  rewriter.setInsertionPoint(op);
  Emitter e(rewriter, op.getLoc());
  auto &b = e.b;
  Value gate = e.unitStrideBuffer(op.getGate());
  Value up = op.getUp() ? e.unitStrideBuffer(op.getUp()) : Value();
  auto gateType = cast<RankedTensorType>(op.getGate().getType());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t lanes = op.getLanes(), tileColumns = op.getTileColumns();
  int64_t blockColumns = op.getBlockColumns(), unit = op.getGateUpUnit();
  int64_t experts = type.getDimSize(0), tiles = type.getDimSize(1), depthRows = type.getDimSize(2);
  int64_t depth = gateType.getDimSize(1), weightColumns = gateType.getDimSize(2);
  // Output columns: the gate's, or half of a fused w13's.
  int64_t columns = unit && !up ? weightColumns / 2 : weightColumns;
  int64_t tilesPerBlock = blockColumns / tileColumns;
  Type source = gateType.getElementType();
  // Consecutive columns of one source weight: 16, or 8 (a unit of 16).
  int64_t runLanes = unit ? std::min(kLanes, unit / 2) : kLanes;
  auto loadType = VectorType::get({runLanes}, source);
  Value passThru = arith::ConstantOp::create(b, DenseElementsAttr::get(loadType, b.getZeroAttr(source)));
  Value noLanes = lanesBelow(e, e.index(0), e.index(0), runLanes);

  Value out = e.alloc(type, {});
  e.parallelFor(e.index(0), e.index(experts * tiles), [&](Value it) {
    Value g = e.divs(it, e.index(tiles)), t = e.rems(it, e.index(tiles));
    Value block = e.divs(t, e.index(tilesPerBlock));
    Value local = e.mul(e.rems(t, e.index(tilesPerBlock)), e.index(tileColumns));
    // Each run of the tile (runLanes columns): its first column and the end
    // of the columns of its source; with a separate up weight, whether it is
    // one of the up's (known only at run time: the tile's place in its block).
    struct Run {
      Value column, limit, isUp;
    };
    SmallVector<Run> runs;
    for (int64_t v = 0; v < tileColumns / runLanes; ++v) {
      Value physical = e.add(local, e.index(v * runLanes));
      if (!unit) {
        runs.push_back({e.add(e.mul(block, e.index(blockColumns)), physical), e.index(weightColumns), {}});
        continue;
      }
      // A gate/up run: its first half the gate's columns, then the up's.
      Value run = e.divs(physical, e.index(unit)), at = e.rems(physical, e.index(unit));
      Value isUp = e.ge(at, e.index(unit / 2));
      Value column = e.add(e.add(e.mul(block, e.index(blockColumns / 2)), e.mul(run, e.index(unit / 2))),
                           e.select(isUp, e.sub(at, e.index(unit / 2)), at));
      if (up) {
        runs.push_back({column, e.index(columns), isUp});
      } else {
        // A fused w13: the up columns are the same buffer's, N on.
        Value offset = e.select(isUp, e.index(columns), e.index(0));
        runs.push_back({e.add(column, offset), e.add(e.index(columns), offset), {}});
      }
    }
    e.forLoop(e.index(0), e.index(depthRows), [&](Value k) {
      for (int64_t v = 0; v < tileColumns / kLanes; ++v) {
        SmallVector<Value> rows;
        for (int64_t i = 0; i < lanes; ++i) {
          Value row = e.add(e.mul(k, e.index(lanes)), e.index(i));
          Value at = e.min(row, e.index(depth - 1));
          // The vector's runs, joined.
          Value joined;
          for (int64_t piece = 0; piece < kLanes / runLanes; ++piece) {
            const Run &r = runs[v * (kLanes / runLanes) + piece];
            // Rows past D (the padding of the pairs): zeros; the index is
            // clamped so that a masked load still addresses a real row.
            Value rowMask = arith::SelectOp::create(b, e.lt(row, e.index(depth)),
                                                    lanesBelow(e, r.column, r.limit, runLanes), noLanes);
            auto load = [&](Value w) {
              return vector::MaskedLoadOp::create(b, loadType, w, ValueRange{g, at, r.column}, rowMask,
                                                  passThru)
                  .getResult();
            };
            Value part = r.isUp ? arith::SelectOp::create(b, r.isUp, load(up), load(gate)).getResult()
                                : load(gate);
            joined = joined ? vector::ShuffleOp::create(b, joined, part,
                                                        llvm::to_vector(llvm::seq<int64_t>(0, kLanes)))
                                  .getResult()
                            : part;
          }
          rows.push_back(joined);
        }
        Value stored;
        if (lanes == 1) {
          stored = rows[0];
        } else if (lanes == 2) {
          stored = vector::InterleaveOp::create(b, rows[0], rows[1]); // d0 d1 per column
        } else {
          // (d0 d2)(d1 d3) interleaved: d0 d1 d2 d3 per column; then W + 128
          // as an unsigned byte, the top bit flipped (padding too: weight 0).
          Value quads = vector::InterleaveOp::create(b, vector::InterleaveOp::create(b, rows[0], rows[2]),
                                                     vector::InterleaveOp::create(b, rows[1], rows[3]));
          auto bytes = cast<VectorType>(quads.getType());
          Value top = arith::ConstantOp::create(b, DenseElementsAttr::get(bytes, b.getI8IntegerAttr(-128)));
          stored = arith::XOrIOp::create(b, quads, top);
        }
        vector::StoreOp::create(b, stored, out, ValueRange{g, t, k, e.index(v * kLanes * lanes)});
      }
    });
  });
  rewriter.replaceOp(op, e.tensor(out, type));
}
