//===- TargetCpu.cpp - the CPU moec compiles for --------------------------===//

#include "strategy/TargetCpu.h"

#include "strategy/GmmTiling.h"

#include "runtime/CpuFeatures.h"

#include "mlir/IR/Builders.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

using namespace mlir::moe::strategy;

namespace {

std::string &overrideCpu() {
  static std::string cpu;
  return cpu;
}

/// The subtarget of `cpu` on this host's triple; nullptr (with `error`) if
/// the target or the CPU is unknown.
std::unique_ptr<llvm::MCSubtargetInfo> subtargetOf(llvm::StringRef cpu, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  // The name is checked on a generic subtarget first: LLVM warns on stderr
  // about a subtarget made for a CPU it does not know.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  if (!generic || !generic->isCPUStringValid(cpu)) {
    error = "unknown --target-cpu '" + cpu.str() + "' (`llc-22 -mcpu=help` lists the CPUs LLVM knows)";
    return nullptr;
  }
  return std::unique_ptr<llvm::MCSubtargetInfo>(target->createMCSubtargetInfo(triple, cpu, ""));
}

/// The features of CPU `cpu` as LLVM's subtarget enables them; empty with
/// `error` for a CPU LLVM does not know.
std::optional<llvm::StringMap<bool>> namedCpuFeatures(llvm::StringRef cpu, std::string &error) {
  std::unique_ptr<llvm::MCSubtargetInfo> info = subtargetOf(cpu, error);
  if (!info)
    return std::nullopt;
  llvm::StringMap<bool> features;
  for (const llvm::SubtargetFeatureKV &feature : info->getEnabledProcessorFeatures())
    features[feature.Key] = true;
  return features;
}

} // namespace

bool mlir::moe::strategy::setTargetCpu(llvm::StringRef cpu, std::string &error) {
  if (!cpu.empty() && !subtargetOf(cpu, error))
    return false;
  overrideCpu() = cpu.str();
  return true;
}

llvm::StringRef mlir::moe::strategy::targetCpuOverride() { return overrideCpu(); }

std::string mlir::moe::strategy::targetCpuName() {
  return overrideCpu().empty() ? llvm::sys::getHostCPUName().str() : overrideCpu();
}

llvm::StringMap<bool> mlir::moe::strategy::targetCpuFeatures() {
  llvm::StringMap<bool> features;
  if (overrideCpu().empty()) {
    for (const auto &entry : llvm::sys::getHostCPUFeatures())
      features[entry.getKey()] = entry.getValue();
    return features;
  }
  std::string error; // setTargetCpu checked the name
  return namedCpuFeatures(overrideCpu(), error).value_or(features);
}

std::vector<std::string> mlir::moe::strategy::requiredIsaFeatures() {
  llvm::StringMap<bool> features = targetCpuFeatures();
  std::vector<std::string> required;
  for (const std::string &name : moec::knownIsaFeatures())
    if (features.lookup(name))
      required.push_back(name);
  return required;
}

mlir::moe::TargetAttr mlir::moe::strategy::targetAttrFor(MLIRContext *context, llvm::StringRef cpu,
                                                         std::string &error) {
  // A CPU named here gets the default caches, whatever this host is, so that
  // what is selected for it does not depend on where the selection runs.
  bool host = cpu.empty() && overrideCpu().empty();
  std::string name = cpu.empty() ? targetCpuName() : cpu.str();
  std::optional<llvm::StringMap<bool>> features =
      cpu.empty() ? targetCpuFeatures() : namedCpuFeatures(cpu, error);
  if (!features)
    return {};
  Builder b(context);
  llvm::SmallVector<Attribute> listed;
  for (llvm::StringRef f : targetFeatureNames())
    if (features->lookup(f))
      listed.push_back(b.getStringAttr(f));
  MachineModel machine = MachineModel::forFeatures(*features, host);
  int64_t threads = host ? std::max(1u, std::thread::hardware_concurrency()) : 0;
  return TargetAttr::get(context, name, b.getArrayAttr(listed), machine.vectorRegisters,
                         machine.l1Bytes, machine.l2Bytes, threads);
}
