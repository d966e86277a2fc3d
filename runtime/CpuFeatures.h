//===- CpuFeatures.h - what a library needs of the CPU that loads it -*- C++ -*-===//
//
// Code compiled for a CPU may use any of its instruction-set extensions; on
// a CPU without one it dies on an illegal instruction at the first use. A
// library moec builds records the extensions of its target
// (`moec_cpu_features`, LLVM's names, space-separated), and
// moec::Library::open refuses it on a CPU that lacks any, naming them.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_CPUFEATURES_H
#define MOEC_RUNTIME_CPUFEATURES_H

#include <string>
#include <vector>

namespace moec {

/// The extensions that are recorded and checked, in LLVM's names (avx2,
/// avx512f, avx512bf16, ...): the vector and bit-manipulation ones x86-64
/// CPUs differ in. AMX is not among them (its code checks at run time).
const std::vector<std::string> &knownIsaFeatures();

/// Of `required` (LLVM's names), those this CPU lacks, from the flags in
/// /proc/cpuinfo; empty when it has them all or the file cannot be read
/// (no check is better than a false refusal).
std::vector<std::string> missingCpuFeatures(const std::vector<std::string> &required);

} // namespace moec

#endif // MOEC_RUNTIME_CPUFEATURES_H
