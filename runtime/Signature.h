//===- Signature.h - the tensor signature of a compiled function -*- C++ -*-===//
#ifndef MOEC_RUNTIME_SIGNATURE_H
#define MOEC_RUNTIME_SIGNATURE_H

#include "runtime/Buffer.h"

#include <optional>
#include <string>
#include <vector>

namespace moec {

/// A tensor argument or result: element type and shape (-1 = dynamic).
struct TensorSignature {
  DType dtype;
  std::vector<int64_t> shape;
  /// "f32[?,64]"
  std::string str() const;
};

struct FunctionSignature {
  std::string name;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> results;

  /// "moe_block(f32[?,64],f32[?,60])->(f32[?,64])": the form a compiled
  /// library's manifest lists its functions in.
  std::string str() const;
  static std::optional<FunctionSignature> parse(const std::string &text,
                                                std::string &error);

  /// Checks count, element types and static sizes, naming the argument and
  /// both shapes on a mismatch.
  bool checkInputs(const std::vector<Buffer> &inputs, std::string &error) const;
  /// The same for argument `i` alone.
  bool checkInput(size_t i, const Buffer &input, std::string &error) const;
};

} // namespace moec

#endif // MOEC_RUNTIME_SIGNATURE_H
