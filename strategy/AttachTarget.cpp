//===- AttachTarget.cpp - the moe-attach-target pass ----------------------===//

#include "strategy/Passes.h"
#include "strategy/TargetCpu.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEATTACHTARGET
#include "strategy/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {
struct MoeAttachTargetPass : mlir::moe::impl::MoeAttachTargetBase<MoeAttachTargetPass> {
  using MoeAttachTargetBase::MoeAttachTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (cpu.empty() && module->hasAttr(kTargetAttrName))
      return;
    std::string error;
    TargetAttr target = strategy::targetAttrFor(&getContext(), cpu, error);
    if (!target) {
      module.emitError() << "moe-attach-target: " << error;
      return signalPassFailure();
    }
    module->setAttr(kTargetAttrName, target);
  }
};
} // namespace
