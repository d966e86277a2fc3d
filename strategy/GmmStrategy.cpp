//===- GmmStrategy.cpp - the kernel kinds a gmm strategy compiles in -------===//

#include "strategy/GmmStrategy.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir::moe::strategy;

std::optional<PackedKinds> mlir::moe::strategy::packedKindsFor(GmmStrategy s, const MachineModel &machine,
                                                               llvm::StringRef cpu, std::string &error) {
  switch (s) {
  case GmmStrategy::microkernel:
    return PackedKinds{machine.amxBf16, machine.avx512Bf16, machine.amxInt8, machine.avx512Vnni, machine.avx2};
  case GmmStrategy::microkernelAmx:
    return PackedKinds{true, machine.avx512Bf16, true, machine.avx512Vnni, machine.avx2};
  case GmmStrategy::microkernelAvx512Bf16:
    // No run-time check can save code that uses an instruction the CPU
    // lacks: refused here.
    if (!machine.avx512Bf16) {
      error = "gmm-strategy=microkernel-avx512bf16 needs a CPU with AVX512_BF16, which the target CPU '" +
              cpu.str() + "' does not have (use microkernel or microkernel-fma)";
      return std::nullopt;
    }
    return PackedKinds{false, true, false, machine.avx512Vnni, machine.avx2};
  case GmmStrategy::microkernelFma:
  case GmmStrategy::reference:
    return PackedKinds{};
  }
  return PackedKinds{};
}
