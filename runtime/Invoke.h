//===- Invoke.h - calling generated code through its C interface -*- C++ -*-===//
//
// Generated functions have the C interface
//   void _mlir_ciface_f([Results *out,] Descriptor *arg0, Descriptor *arg1, ...)
// where one result is its memref descriptor and several are a struct of
// descriptors. invoke() builds the descriptors of the inputs, makes the call
// through `call` (the JIT, or a compiled library's moec_call_f), copies the
// results into Buffers and frees the memory the generated code allocated
// for them.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_INVOKE_H
#define MOEC_RUNTIME_INVOKE_H

#include "runtime/Signature.h"

#include <functional>

namespace moec {

/// `args[i]` is the i-th pointer argument of the C interface (the results
/// pointer first, when there are results). Returns false and sets the error
/// when the call could not be made.
using CInterfaceCall = std::function<bool(void **args, std::string &error)>;

std::optional<std::vector<Buffer>> invoke(const FunctionSignature &sig,
                                          std::vector<Buffer> &inputs,
                                          const CInterfaceCall &call,
                                          std::string &error);

/// Random inputs for a signature, dynamic dimensions set to `dynamicSize`:
/// weights (rank 3, or rank 2 with a static first dimension) N(0, 1) scaled
/// by 1/sqrt(fan-in) so activations stay O(1); other float tensors N(0, 1);
/// i32 tensors uniform in [0, 8). The same seed gives the same inputs.
std::vector<Buffer> randomInputs(const FunctionSignature &sig, uint64_t seed,
                                 int64_t dynamicSize);

/// Why randomInputs(sig, _, dynamicSize) must not be made, or "": a
/// negative size, or inputs beyond this machine's memory (refused before
/// allocating, with what they need and what there is). `option` names the
/// size for the message ("--dim", "TOKENS").
std::string randomInputsRefusal(const FunctionSignature &sig, int64_t dynamicSize,
                                const std::string &option);

} // namespace moec

#endif // MOEC_RUNTIME_INVOKE_H
