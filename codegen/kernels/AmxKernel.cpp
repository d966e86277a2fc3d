//===- AmxKernel.cpp - amx_bf16 and amx_int8: AMX tile products ----------===//
//
// bf16 x bf16 -> f32 on AMX tile registers (tdpbf16ps: a 16x32 bf16 tile
// times a 32x16 bf16 tile, the latter in the pair layout of the packed
// weight block, PackedOperands.cpp, accumulated into a 16x16 f32 tile), and
// int8 x int8 -> i32 (tdpbsud: 16x64 times 64x16 in the quad layout):
//
//   rows     bf16: the task's rows (through the pack's permutation when
//            gathered) are packed into 16-row x 32-depth tiles, zero past D
//            and past the last row, once per task. int8: the rows were
//            quantized before the tasks (Int8Rows.cpp) into rows of
//            64-byte multiples, which the tiles load in place.
//   product  2 row tiles x 2 column tiles: four accumulators stay in tile
//            registers over the whole depth (8 tile registers: 2 + 2 + 4).
//   epilogue the accumulators go through a 32x32 f32 (i32) scratch to the
//            shared column-pair store (int8: both scales first; SwiGLU,
//            padding rows, bf16 rounding).
//
// A group takes this kind at run time when Linux grants the tile state and
// it has at least amx_min_rows rows (bf16: smaller groups would mostly
// multiply padding; int8: 1, a padded tile still beats every other int8
// path); the other groups run as the gmm's other kind.
//
// Why by hand: upstream's VectorToAMX maps one vector.contract to tiles, but
// not a grouped, gathered operand, a weight cache across tasks or the fused
// epilogue; the amx dialect's tile ops are the building blocks used here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernel.h"
#include "codegen/kernels/PackedOperands.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
constexpr int64_t kTileRows = 16; // rows of every tile
constexpr int64_t kTileCols = 16; // f32 (i32) columns of an accumulator tile
constexpr int64_t kLanes = 16;
/// AMX rows per task for a large group: the group split evenly into blocks
/// of at most kMaxAmxRows rows, each a multiple of kAmxRowGranule. The packed
/// rows need not fit in L2: the product walks them one row pair of tiles at
/// a time while the weight block's column pairs stream past. So tasks are
/// large, and a group of up to kMaxAmxRows rows packs each weight block once.
constexpr int64_t kAmxRowGranule = 32;
constexpr int64_t kMaxAmxRows = 256;

class AmxKernel final : public GmmKernel {
public:
  AmxKernel(Emitter &e, const GmmKernelPlan &plan, PackedOperands &ops)
      : GmmKernel(e, plan), ops(ops) {}

  int64_t rowGranule() const override { return kAmxRowGranule; }
  Value rowBlock(Value groupRows) override {
    return evenRowBlock(e, groupRows, kMaxAmxRows, kAmxRowGranule);
  }
  int64_t columnBlock() const override { return ops.columnBlock(); }
  void prepare() override {
    if (p.int8)
      ops.quantizeRows();
    tilesGranted = requestTileState();
  }
  Value takesGroup(Value groupRows) override {
    return e.andI(tilesGranted, e.ge(groupRows, e.index(std::max<int64_t>(p.amxMinRows, 1))));
  }
  void allocScratch() override;
  void emitTask(const GmmTask &task) override;

private:
  /// i1: whether this process may execute tile instructions. Asks the kernel
  /// for the AMX tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
  /// XFEATURE_XTILEDATA), which Linux requires before the first tile
  /// instruction); it fails on a CPU or kernel without AMX, which is the
  /// run-time fallback to the other kind.
  Value requestTileState();
  void packRows(Value r0, Value r1, Value rowsPadded);
  /// Rows of pair `rowPair` from `firstRow` of the quantized rows (int8) or
  /// of the task's packed rows (bf16, firstRow 0).
  void tileProduct(Value rowPair, Value colPair, Value firstRow);
  void epilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0, Value g);

  PackedOperands &ops;
  Value tilesGranted;
  Value packedRows; // bf16: the task's rows as tiles (int8 tiles load the quantized rows in place)
  Value tileOut;    // the four accumulators' stores
};
} // namespace

Value AmxKernel::requestTileState() {
  auto &b = e.b;
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto i64 = b.getI64Type();
  // long syscall(long number, ...): libc's, declared variadic as it is.
  auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>("syscall");
  if (!fn) {
    OpBuilder mb(module.getBodyRegion());
    fn = LLVM::LLVMFuncOp::create(mb, module.getLoc(), "syscall",
                                  LLVM::LLVMFunctionType::get(i64, {i64}, /*isVarArg=*/true));
  }
  auto constant = [&](int64_t v) { return arith::ConstantOp::create(b, b.getI64IntegerAttr(v)); };
  constexpr int64_t kSysArchPrctl = 158, kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  Value rc = LLVM::CallOp::create(b, fn, ValueRange{constant(kSysArchPrctl), constant(kReqXcompPerm),
                                                    constant(kXfeatureXtiledata)})
                 .getResult();
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rc, constant(0));
}

void AmxKernel::allocScratch() {
  auto &b = e.b;
  ops.allocWeightCache();
  if (!p.int8)
    packedRows = e.alloc({kMaxAmxRows / 16, ops.paddedDepth / ops.tileDepth, 16, ops.tileDepth},
                         b.getBF16Type(), {});
  tileOut = e.alloc({32, 2 * kTileCols}, p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type()), {});
}

void AmxKernel::packRows(Value r0, Value r1, Value rowsPadded) {
  auto &b = e.b;
  Type bf16 = b.getBF16Type();
  auto rowType = VectorType::get({ops.tileDepth}, bf16);
  Value zeros = arith::ConstantOp::create(b, DenseElementsAttr::get(rowType, b.getZeroAttr(bf16)));
  Value zero = e.index(0), steps = e.index(ops.paddedDepth / ops.tileDepth);
  e.forLoop(zero, rowsPadded, [&](Value i) {
    Value r = e.add(r0, i);
    Value tile = e.divs(i, e.index(kTileRows)), inTile = e.rems(i, e.index(kTileRows));
    auto rowIf = scf::IfOp::create(b, TypeRange{}, e.lt(r, r1), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rowIf.thenBlock()->getTerminator());
    Value src = r;
    if (p.perm) {
      Value slot = e.toIndex(e.load(p.perm, {r}));
      src = e.divs(e.max(slot, zero), e.index(p.topK));
    }
    e.forLoop(zero, steps, [&](Value ks) {
      Value k = e.mul(ks, e.index(ops.tileDepth));
      Value mask = lanesBelow(e, k, e.index(p.depth), ops.tileDepth);
      Value v = vector::MaskedLoadOp::create(b, rowType, p.lhs, ValueRange{src, k}, mask, zeros);
      vector::StoreOp::create(b, v, packedRows, ValueRange{tile, ks, inTile, zero});
    });
    // Padding rows: zeros, so that they cannot carry NaNs into anything.
    b.setInsertionPoint(rowIf.elseBlock()->getTerminator());
    e.forLoop(zero, steps, [&](Value ks) {
      vector::StoreOp::create(b, zeros, packedRows, ValueRange{tile, ks, inTile, zero});
    });
  });
}

void AmxKernel::tileProduct(Value rowPair, Value colPair, Value firstRow) {
  auto &b = e.b;
  Type operand = p.int8 ? Type(b.getI8Type()) : Type(b.getBF16Type());
  Type sum = p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto operandType = amx::TileType::get({kTileRows, ops.tileDepth}, operand);
  auto accType = amx::TileType::get({kTileRows, kTileCols}, sum);
  Value zero = e.index(0), one = e.index(1), two = e.index(2);
  Value rt0 = e.mul(rowPair, two), rt1 = e.add(rt0, one);
  Value ct0 = e.mul(colPair, two), ct1 = e.add(ct0, one);
  // The row tiles: the task's packed rows (bf16), or 16 quantized rows read
  // in place (int8: the buffer's row stride is the tile stride).
  auto rowTile = [&](Value rt, Value ks) -> Value {
    if (!p.int8)
      return amx::TileLoadOp::create(b, operandType, packedRows, ValueRange{rt, ks, zero, zero});
    Value row = e.add(firstRow, e.mul(rt, e.index(kTileRows)));
    return amx::TileLoadOp::create(b, operandType, ops.quantizedRows(),
                                   ValueRange{row, e.mul(ks, e.index(ops.tileDepth))});
  };
  auto product = [&](Value a, Value w, Value c) -> Value {
    if (p.int8) // tdpbsud: signed rows, weights offset to unsigned
      return amx::TileMulIOp::create(b, accType, a, w, c, /*isZextLhs=*/false, /*isZextRhs=*/true);
    return amx::TileMulFOp::create(b, accType, a, w, c);
  };
  Value z = amx::TileZeroOp::create(b, accType);
  SmallVector<Value> acc = e.forLoop(
      zero, e.index(ops.paddedDepth / ops.tileDepth), ValueRange{z, z, z, z},
      [&](Value ks, ValueRange c) -> SmallVector<Value> {
        Value kp = e.mul(ks, e.index(kTileRows));
        // Interleaved so that each product's operands are loaded just before.
        Value a0 = rowTile(rt0, ks);
        Value b0 = amx::TileLoadOp::create(b, operandType, ops.packedWeights(), ValueRange{ct0, kp, zero});
        Value c00 = product(a0, b0, c[0]);
        Value b1 = amx::TileLoadOp::create(b, operandType, ops.packedWeights(), ValueRange{ct1, kp, zero});
        Value c01 = product(a0, b1, c[1]);
        Value a1 = rowTile(rt1, ks);
        Value c10 = product(a1, b0, c[2]);
        Value c11 = product(a1, b1, c[3]);
        return {c00, c01, c10, c11};
      });
  Value t = e.index(kTileRows);
  amx::TileStoreOp::create(b, tileOut, ValueRange{zero, zero}, acc[0]);
  amx::TileStoreOp::create(b, tileOut, ValueRange{zero, t}, acc[1]);
  amx::TileStoreOp::create(b, tileOut, ValueRange{t, zero}, acc[2]);
  amx::TileStoreOp::create(b, tileOut, ValueRange{t, t}, acc[3]);
}

void AmxKernel::epilogue(Value r0, Value r1, Value rowPair, Value colPair, Value c0, Value g) {
  auto &b = e.b;
  Type sum = p.int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto vecType = VectorType::get({kLanes}, sum);
  Value zero = e.index(0);
  Value first = e.add(r0, e.mul(rowPair, e.index(2 * kTileRows)));
  Value count = e.min(e.sub(r1, first), e.index(2 * kTileRows));
  e.forLoop(zero, count, [&](Value i) {
    Value v0 = vector::LoadOp::create(b, vecType, tileOut, ValueRange{i, zero});
    Value v1 = vector::LoadOp::create(b, vecType, tileOut, ValueRange{i, e.index(kTileCols)});
    Value r = e.add(first, i);
    if (p.int8) {
      v0 = ops.dequantizeSums(ops.withoutWeightOffset(v0, r), r, g, ops.tileColumns(c0, colPair, 0));
      v1 = ops.dequantizeSums(ops.withoutWeightOffset(v1, r), r, g, ops.tileColumns(c0, colPair, 1));
    }
    ops.storePair(r, g, colPair, c0, v0, v1);
  });
}

void AmxKernel::emitTask(const GmmTask &task) {
  Value r0 = task.firstRow, r1 = task.endRow, g = task.group, cb = task.columnBlock;
  Value zero = e.index(0);
  Value colPairs = ops.ensureWeights(g, cb);
  Value c0 = ops.firstColumn(cb);
  int64_t pairRows = 2 * kTileRows;
  Value rowsPadded = e.mul(e.divs(e.add(e.sub(r1, r0), e.index(pairRows - 1)), e.index(pairRows)),
                           e.index(pairRows));
  if (!p.int8)
    packRows(r0, r1, rowsPadded);
  // int8 tiles read rows from r0 on: rows past r1 are the next group's (or
  // the zero padding past the last row), computed and never stored.
  Value firstRow = p.int8 ? r0 : zero;
  e.forLoop(zero, e.divs(rowsPadded, e.index(pairRows)), [&](Value rowPair) {
    e.forLoop(zero, colPairs, [&](Value colPair) {
      tileProduct(rowPair, colPair, firstRow);
      epilogue(r0, r1, rowPair, colPair, c0, g);
    });
  });
}

// Tile code compiles for any x86-64 target (the outlined function carries
// it); whether it may run is asked at run time (requestTileState).
const GmmKernelKind mlir::moe::codegen::kAmxBf16Kernel = {
    "amx_bf16", {}, /*usesTiles=*/true,
    [](Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared) -> std::unique_ptr<GmmKernel> {
      if (plan.int8)
        return nullptr;
      return std::make_unique<AmxKernel>(e, plan, shared);
    }};

const GmmKernelKind mlir::moe::codegen::kAmxInt8Kernel = {
    "amx_int8", {}, /*usesTiles=*/true,
    [](Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared) -> std::unique_ptr<GmmKernel> {
      if (!plan.int8)
        return nullptr;
      return std::make_unique<AmxKernel>(e, plan, shared);
    }};
