//===- EmitCInterface.cpp - the moe-emit-c-interface pass -----------------===//

#include "codegen/Passes.h"

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
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isDeclaration())
        func->setAttr(name, UnitAttr::get(&getContext()));
  }
};
} // namespace
