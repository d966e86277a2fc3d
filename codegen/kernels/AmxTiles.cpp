//===- AmxTiles.cpp - what the AMX tile code of every op shares -----------===//

#include "codegen/kernels/AmxTiles.h"
#include "codegen/Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
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
