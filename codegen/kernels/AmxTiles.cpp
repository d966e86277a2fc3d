//===- AmxTiles.cpp - what the AMX tile code of every op shares -----------===//

#include "codegen/kernels/AmxTiles.h"
#include "codegen/Emitter.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::moe::codegen;

Value mlir::moe::codegen::requestAmxTileState(Emitter &e) {
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

void mlir::moe::codegen::outlineTileCode(Region &region, Operation *anchor) {
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

namespace {
constexpr int64_t kTile = 16;         // rows (and 32-bit columns) of an accumulator tile
constexpr int64_t kBlock = 2 * kTile; // a block's rows and columns
} // namespace

AmxBlockScratch mlir::moe::codegen::allocAmxBlockScratch(Emitter &e, Type sum) {
  AmxBlockScratch scratch{e.alloc({2, kBlock, kBlock}, sum, {}), e.alloc({4 * kTile, kTile}, sum, {})};
  e.fill(scratch.zeros, e.zero(sum));
  return scratch;
}

SmallVector<Value> mlir::moe::codegen::amxZeroAccumulators(Emitter &e, const AmxBlockScratch &scratch) {
  Type sum = cast<MemRefType>(scratch.zeros.getType()).getElementType();
  auto accType = amx::TileType::get({kTile, kTile}, sum);
  SmallVector<Value> zeros;
  for (int64_t i = 0; i < 4; ++i)
    zeros.push_back(
        amx::TileLoadOp::create(e.b, accType, scratch.zeros, ValueRange{e.index(i * kTile), e.index(0)}));
  return zeros;
}

void mlir::moe::codegen::emitAmxBlocks(
    Emitter &e, const AmxBlockScratch &scratch, Value count, Value steps,
    function_ref<SmallVector<Value>(Value block)> initial,
    function_ref<SmallVector<Value>(Value block, Value s, ValueRange sums)> step,
    function_ref<void(Value block, Value half, Value row)> storeRow) {
  auto &b = e.b;
  Value zero = e.index(0), one = e.index(1), two = e.index(2), rows = e.index(kBlock), t = e.index(kTile);
  // Fewer steps than rows (int8's down projection at M 1408: 22 steps of
  // 64): each step takes ceil(32 / steps) rows, so that none is left for
  // after the steps. Left there, the previous block's last 10 rows ran
  // while the tile unit stood idle (SPR, int8 T 4096 top-8: the down
  // projection at 19% of the INT8 peak against the up one's 25%). The rows
  // of a step are straight-line code: a loop there made LLVM spill tiles.
  // Steps unknown at compile time (or none): a row a step, the rest after
  // the steps.
  std::optional<int64_t> knownSteps = getConstantIntValue(steps);
  int64_t rowsPerStep = knownSteps && *knownSteps > 0 ? llvm::divideCeil(kBlock, *knownSteps) : 1;
  e.forLoop(zero, count, [&](Value block) {
    Value half = e.rems(block, two);
    Value previous = e.sub(block, one), previousHalf = e.sub(one, half);
    Value hasPrevious = e.ge(previous, zero);
    SmallVector<Value> sums = e.forLoop(zero, steps, initial(block), [&](Value s, ValueRange in) {
      SmallVector<Value> next = step(block, s, in);
      for (int64_t j = 0; j < rowsPerStep; ++j) {
        Value i = e.add(e.mul(s, e.index(rowsPerStep)), e.index(j));
        e.ifThen(e.andI(hasPrevious, e.lt(i, rows)), [&] { storeRow(previous, previousHalf, i); });
      }
      return next;
    });
    Value out = e.innerBlock(scratch.sums, {half, zero, zero}, {kBlock, kBlock});
    amx::TileStoreOp::create(b, out, ValueRange{zero, zero}, sums[0]);
    amx::TileStoreOp::create(b, out, ValueRange{zero, t}, sums[1]);
    amx::TileStoreOp::create(b, out, ValueRange{t, zero}, sums[2]);
    amx::TileStoreOp::create(b, out, ValueRange{t, t}, sums[3]);
    if (!knownSteps || *knownSteps <= 0)
      e.ifThen(hasPrevious, [&] {
        e.forLoop(e.min(steps, rows), rows, [&](Value i) { storeRow(previous, previousHalf, i); });
      });
  });
  Value last = e.sub(count, one);
  e.ifThen(e.ge(last, zero), [&] { e.forLoop(zero, rows, [&](Value i) { storeRow(last, e.rems(last, two), i); }); });
}

// Four rounds of two-source shuffles, round s exchanging bit s of the row
// and lane indices (an element at row r, lane c with those bits unequal
// moves to row r ^ s, lane c ^ s).
void mlir::moe::codegen::transpose16x16(ImplicitLocOpBuilder &b, SmallVectorImpl<Value> &rows) {
  for (int64_t s = 1; s < 16; s *= 2) {
    SmallVector<int64_t> low, high; // lane l of rows r (bit s clear) and r + s
    for (int64_t l = 0; l < 16; ++l) {
      // Sources: lanes 0-15 the first operand (row r), 16-31 the second.
      low.push_back((l & s) ? 16 + l - s : l);
      high.push_back((l & s) ? 16 + l : l + s);
    }
    for (int64_t r = 0; r < 16; ++r) {
      if (r & s)
        continue;
      Value a = rows[r], c = rows[r + s];
      rows[r] = vector::ShuffleOp::create(b, a, c, low);
      rows[r + s] = vector::ShuffleOp::create(b, a, c, high);
    }
  }
}
