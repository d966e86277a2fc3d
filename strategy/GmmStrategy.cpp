//===- GmmStrategy.cpp - the gmm-strategy choice, spelled once -------------===//

#include "strategy/GmmStrategy.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir::moe::strategy;

namespace {
struct Spelling {
  GmmStrategy value;
  llvm::StringLiteral name, description;
};
constexpr Spelling kSpellings[] = {
    {GmmStrategy::microkernel, "microkernel",
     "tiled, fused kernels of the kinds the target has (AMX, AVX512_BF16, VNNI, FMA)"},
    {GmmStrategy::microkernelAmx, "microkernel-amx",
     "AMX tiles whatever the target (checked at run time), else as microkernel"},
    {GmmStrategy::microkernelAvx512Bf16, "microkernel-avx512bf16",
     "every bf16 group on AVX512_BF16 dot products (the target must have them)"},
    {GmmStrategy::microkernelFma, "microkernel-fma", "the AVX-512 FMA register tiles only"},
    {GmmStrategy::reference, "reference", "row-at-a-time loops, no fusion"},
};
} // namespace

llvm::cl::ValuesClass mlir::moe::strategy::gmmStrategyValues() {
  auto value = [](const Spelling &s) {
    return llvm::cl::OptionEnumValue{s.name, static_cast<int>(s.value), s.description};
  };
  static_assert(std::size(kSpellings) == 5, "list every spelling");
  return llvm::cl::ValuesClass({value(kSpellings[0]), value(kSpellings[1]), value(kSpellings[2]),
                                value(kSpellings[3]), value(kSpellings[4])});
}

llvm::StringRef mlir::moe::strategy::gmmStrategyName(GmmStrategy s) {
  for (const Spelling &spelling : kSpellings)
    if (spelling.value == s)
      return spelling.name;
  return "?";
}

std::optional<GmmStrategy> mlir::moe::strategy::parseGmmStrategy(llvm::StringRef name) {
  for (const Spelling &s : kSpellings)
    if (s.name == name)
      return s.value;
  return std::nullopt;
}

std::string mlir::moe::strategy::gmmStrategyList() {
  std::string out;
  for (size_t i = 0; i < std::size(kSpellings); ++i)
    out += (i == 0 ? "" : i + 1 == std::size(kSpellings) ? " or " : ", ") + kSpellings[i].name.str();
  return out;
}

std::optional<PackedKinds> mlir::moe::strategy::packedKindsFor(GmmStrategy s, const MachineModel &machine,
                                                               llvm::StringRef cpu, std::string &error) {
  switch (s) {
  case GmmStrategy::microkernel:
    return PackedKinds{machine.amxBf16, machine.avx512Bf16, machine.amxInt8, machine.avx512Vnni};
  case GmmStrategy::microkernelAmx:
    return PackedKinds{true, machine.avx512Bf16, true, machine.avx512Vnni};
  case GmmStrategy::microkernelAvx512Bf16:
    // No run-time check can save code that uses an instruction the CPU
    // lacks: refused here.
    if (!machine.avx512Bf16) {
      error = "gmm-strategy=microkernel-avx512bf16 needs a CPU with AVX512_BF16, which the target CPU '" +
              cpu.str() + "' does not have (use microkernel or microkernel-fma)";
      return std::nullopt;
    }
    return PackedKinds{false, true, false, machine.avx512Vnni};
  case GmmStrategy::microkernelFma:
  case GmmStrategy::reference:
    return PackedKinds{};
  }
  return PackedKinds{};
}
