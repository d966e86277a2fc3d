//===- GmmKernelRegistry.cpp - the gmm kernel kinds by name ----------------===//
//
// The one list of the kinds (each defined in its own file). The dialect's
// gmmKernelKinds() lists the same names (plus "reference", the plain loops,
// which are not a kind of this family): the attribute's verifier, which
// cannot see codegen, checks names against it; the kernel unit test checks
// that both lists agree.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/GmmKernel.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::moe::codegen;

llvm::ArrayRef<const GmmKernelKind *> mlir::moe::codegen::registeredGmmKernels() {
  static const GmmKernelKind *const kinds[] = {&kFmaKernel,        &kBf16DotKernel,  &kAmxBf16Kernel,
                                               &kInt8VectorKernel, &kInt8Avx2Kernel, &kInt8VnniKernel,
                                               &kAmxInt8Kernel};
  return kinds;
}

const GmmKernelKind *mlir::moe::codegen::findGmmKernel(llvm::StringRef name) {
  for (const GmmKernelKind *kind : registeredGmmKernels())
    if (kind->name == name)
      return kind;
  return nullptr;
}
