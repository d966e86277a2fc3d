//===- EmitCInterface.cpp - the moe-emit-c-interface pass -----------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEEMITCINTERFACE
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
struct MoeEmitCInterfacePass
    : mlir::moe::impl::MoeEmitCInterfaceBase<MoeEmitCInterfacePass> {
  using MoeEmitCInterfaceBase::MoeEmitCInterfaceBase;
  void runOnOperation() override {
    auto name = LLVM::LLVMDialect::getEmitCWrapperAttrName();
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isDeclaration())
        continue;
      func->setAttr(name, UnitAttr::get(&getContext()));
      // The caller's tensors are read, never written: one-shot-bufferize
      // would otherwise reuse an argument's buffer for a result of the
      // same type (convert-elementwise-to-linalg makes such an operand the
      // destination), and the caller's array (a NumPy array passed without
      // a copy, a weight reused by the next call) would change under it.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (isa<TensorType>(func.getArgument(i).getType()))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, readOnly);
    }
  }
};
} // namespace
