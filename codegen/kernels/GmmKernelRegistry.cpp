//===- GmmKernelRegistry.cpp - the gmm kernel kinds by name ----------------===//
//
// The one table from a #moe.gmm_lowering kind name to its GmmKernel. The
// dialect's gmmKernelKinds() lists the same names (plus "reference", the
// plain loops, which are not a kind of this family): the attribute's
// verifier, which cannot see codegen, checks names against it; the kernel
// unit test checks that both lists agree.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/GmmKernel.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
using Factory = std::unique_ptr<GmmKernel> (*)(Emitter &, const GmmKernelPlan &, PackedOperands &);

struct Entry {
  llvm::StringRef name;
  Factory make;
};

const Entry kRegistry[] = {
    {"fma", [](Emitter &e, const GmmKernelPlan &p, PackedOperands &) { return makeFmaKernel(e, p); }},
    {"avx512bf16_dot", makeBf16DotKernel},
    {"amx_bf16", makeAmxKernel},
    {"int8_vector", makeInt8VectorKernel},
    {"int8_vnni", makeInt8VnniKernel},
    {"amx_int8", makeAmxKernel},
};
} // namespace

llvm::ArrayRef<llvm::StringRef> mlir::moe::codegen::registeredGmmKernels() {
  static const std::vector<llvm::StringRef> names = [] {
    std::vector<llvm::StringRef> list;
    for (const Entry &entry : kRegistry)
      list.push_back(entry.name);
    return list;
  }();
  return names;
}

std::unique_ptr<GmmKernel> mlir::moe::codegen::createGmmKernel(llvm::StringRef name, Emitter &e,
                                                               const GmmKernelPlan &plan,
                                                               PackedOperands &shared) {
  const Entry *entry = llvm::find_if(kRegistry, [&](const Entry &x) { return x.name == name; });
  if (entry == std::end(kRegistry))
    return nullptr;
  std::unique_ptr<GmmKernel> kernel = entry->make(e, plan, shared);
  // One class may serve two names (AMX: bf16 or int8 by the plan's
  // operands): a name the operands do not give is not this plan's kind.
  if (kernel->name() != name)
    return nullptr;
  return kernel;
}
