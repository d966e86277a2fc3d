//===- Library.h - load a block compiled with moec -o lib.so ----*- C++ -*-===//
//
// The C++ API for running an AOT-compiled MoE block in one's own program:
//
//   std::string error;
//   auto lib = moec::Library::open("libblock.so", error);
//   const moec::FunctionSignature *f = lib->find("moe_block");
//   std::vector<moec::Buffer> inputs = ...;            // in argument order
//   auto outputs = lib->run("moe_block", inputs, error);
//
// A library moec builds exports `moec_manifest` (the signatures of its entry
// points, one per line) and `moec_call_<name>(void **args)` for each.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_LIBRARY_H
#define MOEC_RUNTIME_LIBRARY_H

#include "runtime/Signature.h"

#include <memory>

namespace moec {

class Library {
public:
  /// Opens a library built by `moec FILE.mlir -o lib.so`.
  static std::unique_ptr<Library> open(const std::string &path, std::string &error);
  ~Library();

  const std::vector<FunctionSignature> &functions() const { return functions_; }
  /// nullptr when the library has no such entry point.
  const FunctionSignature *find(const std::string &name) const;

  /// Checks the inputs against the signature and runs `name`.
  std::optional<std::vector<Buffer>> run(const std::string &name,
                                         std::vector<Buffer> &inputs,
                                         std::string &error);

private:
  Library() = default;
  void *handle_ = nullptr;
  std::vector<FunctionSignature> functions_;
};

} // namespace moec

#endif // MOEC_RUNTIME_LIBRARY_H
