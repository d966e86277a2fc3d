//===- AmxToLLVM.cpp - the moe-convert-amx-to-llvm pass -------------------===//
//
// Upstream converts amx ops inside convert-vector-to-llvm{enable-amx}, and
// branches inside convert-cf-to-llvm, each with its own type converter; a
// tile carried through a loop needs both at once (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/AMX/Transforms.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOECONVERTAMXTOLLVM
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
struct ConvertAmxToLLVM : moe::impl::MoeConvertAmxToLLVMBase<ConvertAmxToLLVM> {
  void runOnOperation() override {
    bool anyAmx = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<amx::AMXDialect>(op->getDialect()))
        anyAmx = true;
      return anyAmx ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!anyAmx)
      return;
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    populateAMXLegalizeForLLVMExportPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*ctx);
    configureAMXLegalizeForExportTarget(target);
    // Only the branches that carry tiles; convert-cf-to-llvm does the rest.
    target.addDynamicallyLegalDialect<cf::ControlFlowDialect>([](Operation *op) {
      return llvm::none_of(op->getOperandTypes(), llvm::IsaPred<amx::TileType>);
    });
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
