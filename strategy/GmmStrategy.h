//===- GmmStrategy.h - which gmm kernel kinds a compile may use -*- C++ -*-===//
//
// The choice moe-opt (moe-select-lowering{gmm-strategy}), moec
// (--gmm-strategy) and moe-bench (--gmm-strategy, alias --backend) offer,
// spelled once here.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_STRATEGY_GMMSTRATEGY_H
#define MOEC_STRATEGY_GMMSTRATEGY_H

#include "passes/Choice.h"
#include "strategy/GmmTiling.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace mlir::moe::strategy {

enum class GmmStrategy { microkernel, microkernelAmx, microkernelAvx512Bf16, microkernelFma, reference };
inline constexpr ChoiceTable<GmmStrategy, 5> kGmmStrategyChoices{{
    {GmmStrategy::microkernel, "microkernel",
     "tiled, fused kernels of the kinds the target has (AMX, AVX512_BF16, VNNI, FMA)"},
    {GmmStrategy::microkernelAmx, "microkernel-amx",
     "AMX tiles whatever the target (checked at run time), else as microkernel"},
    {GmmStrategy::microkernelAvx512Bf16, "microkernel-avx512bf16",
     "every bf16 group on AVX512_BF16 dot products (the target must have them)"},
    {GmmStrategy::microkernelFma, "microkernel-fma", "the AVX-512 FMA register tiles only"},
    {GmmStrategy::reference, "reference", "row-at-a-time loops, no fusion"},
}};

/// The packed kernel kinds a strategy compiles in on a machine: bf16 on AMX
/// tiles or AVX512_BF16 dot products (else the FMA tiles over widened
/// rows), int8 on AMX tiles or AVX512-VNNI, else AVX2's vpmaddwd (else
/// exact i32 vectors).
struct PackedKinds {
  bool amxBf16 = false, avx512Bf16 = false, amxInt8 = false, avx512Vnni = false, avx2Int8 = false;
};
/// nullopt with `error` for a strategy `machine` (named `cpu`) cannot run:
/// microkernel-avx512bf16 without AVX512_BF16. AMX code compiles for any
/// x86-64 target and checks at run time.
std::optional<PackedKinds> packedKindsFor(GmmStrategy s, const MachineModel &machine,
                                          llvm::StringRef cpu, std::string &error);

} // namespace mlir::moe::strategy

MOE_CHOICE_PARSER(mlir::moe::strategy::GmmStrategy, mlir::moe::strategy::kGmmStrategyChoices)

#endif // MOEC_STRATEGY_GMMSTRATEGY_H
