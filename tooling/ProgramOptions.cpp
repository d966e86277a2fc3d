//===- ProgramOptions.cpp - what a tool does to a program before lowering -===//

#include "tooling/ProgramOptions.h"

#include "compiler/Compiler.h"
#include "strategy/GmmTiling.h"
#include "strategy/GmmStrategy.h"
#include "strategy/TargetCpu.h"
#include "passes/Passes.h"
#include "passes/Remat.h"
#include "runtime/CpuFeatures.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/Host.h"

using namespace moec;

std::string moec::commandLineSpelling(const std::string &name) { return "--" + name; }

std::string moec::programOptionsRefusal(const ProgramOptions &o, OptionSpelling spell) {
  if (o.activationBudget && *o.activationBudget < 0)
    return spell("activation-budget") + " must be a number of bytes (got " +
           std::to_string(*o.activationBudget) + ")";
  if (!o.backward &&
      (o.remat != mlir::moe::RematPolicy::none || o.activationBudget || o.routingGrad))
    return spell("remat") + ", " + spell("activation-budget") + " and " + spell("routing-grad") +
           " apply to the backward: give " + spell("backward") + " too";
  if (!o.mesh.empty())
    if (std::string why = mlir::moe::meshSpecError(o.mesh); !why.empty())
      return spell("mesh") + " '" + o.mesh + "': " + why;
  // The dispatch and capacity options are moe-partition's to check.
  return "";
}
std::string moec::selectTarget(const std::string &targetCpu, const GmmChoices &gmm, bool runHere,
                               bool tuningTableFromEnv, OptionSpelling spell) {
  namespace strategy = mlir::moe::strategy;
  std::string error;
  // First: the gmm strategies are checked against the target's features.
  if (!strategy::setTargetCpu(targetCpu, error))
    return error;
  if (runHere) {
    // The check Library::open makes of a library, made of the JIT's code.
    std::vector<std::string> missing = missingCpuFeatures(strategy::requiredIsaFeatures());
    if (!missing.empty())
      return spell("target-cpu") + " " + targetCpu + ": this CPU (" +
             llvm::sys::getHostCPUName().str() + ") lacks " + llvm::join(missing, " ") +
             ", which code for it may use: it cannot run here (compile a library with -o and "
             "run it on such a machine)";
  }
  strategy::MachineModel machine = strategy::MachineModel::target();
  if (!strategy::packedKindsFor(gmm.strategy, machine, strategy::targetCpuName(), error))
    return error;
  if (!gmm.tiling.empty()) {
    auto tiling = strategy::GmmTiling::parse(gmm.tiling);
    if (!tiling)
      return llvm::toString(tiling.takeError());
    if (std::string why = tiling->invalidReason(/*swiglu=*/false, machine.vectorRegisters); !why.empty())
      return "gmm tiling " + tiling->str() + ": " + why;
  }
  if (!gmm.tuningTable.empty() && gmm.tiling.empty())
    if (llvm::Error bad = strategy::checkTuningTable(gmm.tuningTable))
      return llvm::toString(std::move(bad)) +
             (tuningTableFromEnv ? " (from $MOEC_TUNING_TABLE)" : "");
  return "";
}

mlir::LogicalResult moec::prepareProgram(mlir::ModuleOp module, const ProgramOptions &o) {
  if (o.mesh.empty() && !o.backward)
    return mlir::success();
  mlir::PassManager pm(module.getContext());
  if (!o.mesh.empty()) {
    mlir::moe::MoePartitionOptions partition;
    partition.meshOption = o.mesh;
    partition.epDispatch = o.epDispatch;
    partition.capacityFactor = o.capacityFactor;
    partition.capacityRound = o.capacityRound;
    pm.addPass(mlir::moe::createMoePartition(partition));
  }
  if (o.backward) {
    mlir::moe::MoeGenerateBackwardOptions backward;
    backward.loss = *o.backward;
    backward.routingGrad = o.routingGrad;
    pm.addPass(mlir::moe::createMoeGenerateBackward(backward));
    mlir::moe::MoeRematOptions remat;
    remat.policy = o.remat;
    remat.activationBudget = o.activationBudget.value_or(-1);
    pm.addNestedPass<mlir::func::FuncOp>(mlir::moe::createMoeRemat(remat));
  }
  return runPassManager(module, pm);
}
