//===- TargetCpu.h - the CPU moec compiles for -------------------*- C++ -*-===//
//
// moec compiles for this host's CPU with all its features, unless
// `--target-cpu NAME` names another (an LLVM x86 CPU: skylake-avx512,
// sapphirerapids, znver3, x86-64-v3, ...): a library built on one machine to
// run on another. Everything that depends on the CPU's features asks here:
// the gmm kernels' choice (MachineModel), the LLVM target machine, and the
// list of instruction-set extensions a library records so that the runtime
// refuses to load it on a CPU without them (runtime/CpuFeatures.h) instead
// of dying on an illegal instruction.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_STRATEGY_TARGETCPU_H
#define MOEC_STRATEGY_TARGETCPU_H

#include "dialect/MoeDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::moe::strategy {

/// Compile for `cpu` from now on ("": the host). False with `error` for a
/// name LLVM's x86 target does not know.
bool setTargetCpu(llvm::StringRef cpu, std::string &error);

/// The CPU given to setTargetCpu, "" for the host.
llvm::StringRef targetCpuOverride();

/// The target CPU's name: the one set, else the host's (znver3, ...).
std::string targetCpuName();

/// The target's features in LLVM's names (avx2, avx512bf16, amx-tile, ...)
/// -> whether it has them: the host's, or the named CPU's.
llvm::StringMap<bool> targetCpuFeatures();

/// The vector and bit-manipulation extensions of the target that generated
/// code may use, in LLVM's names, in a fixed order: what a library needs of
/// the CPU that loads it. AMX is never among them: its code checks at run
/// time whether it may use the tiles.
std::vector<std::string> requiredIsaFeatures();

/// The #moe.target of `cpu` ("": the CPU given to setTargetCpu, else this
/// host): of its features those a #moe.target may list
/// (targetFeatureNames(): the others change no decision), register file, caches and thread count.
/// Only this host's caches and threads are known (sysconf); a named CPU gets
/// MachineModel's default caches and threads = 0, the same on every host.
/// Null with `error` for a CPU LLVM does not know.
TargetAttr targetAttrFor(MLIRContext *context, llvm::StringRef cpu, std::string &error);

} // namespace mlir::moe::strategy

#endif // MOEC_STRATEGY_TARGETCPU_H
