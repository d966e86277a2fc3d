//===- TargetCpu.cpp - the CPU moec compiles for --------------------------===//

#include "codegen/TargetCpu.h"

#include "runtime/CpuFeatures.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>

using namespace mlir::moe::codegen;

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

} // namespace

bool mlir::moe::codegen::setTargetCpu(llvm::StringRef cpu, std::string &error) {
  if (!cpu.empty() && !subtargetOf(cpu, error))
    return false;
  overrideCpu() = cpu.str();
  return true;
}

llvm::StringRef mlir::moe::codegen::targetCpuOverride() { return overrideCpu(); }

std::string mlir::moe::codegen::targetCpuName() {
  return overrideCpu().empty() ? llvm::sys::getHostCPUName().str() : overrideCpu();
}

llvm::StringMap<bool> mlir::moe::codegen::targetCpuFeatures() {
  llvm::StringMap<bool> features;
  if (overrideCpu().empty()) {
    for (const auto &entry : llvm::sys::getHostCPUFeatures())
      features[entry.getKey()] = entry.getValue();
    return features;
  }
  std::string error;
  std::unique_ptr<llvm::MCSubtargetInfo> info = subtargetOf(overrideCpu(), error);
  if (!info) // setTargetCpu checked the name
    return features;
  for (const llvm::SubtargetFeatureKV &feature : info->getEnabledProcessorFeatures())
    features[feature.Key] = true;
  return features;
}

std::vector<std::string> mlir::moe::codegen::requiredIsaFeatures() {
  llvm::StringMap<bool> features = targetCpuFeatures();
  std::vector<std::string> required;
  for (const std::string &name : moec::knownIsaFeatures())
    if (features.lookup(name))
      required.push_back(name);
  return required;
}
