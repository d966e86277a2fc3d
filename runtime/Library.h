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
// With prepared weights (moec -o's default): the weights packed once, at
// load time, and each call packing nothing:
//
//   auto weights = lib->prepare("moe_block", inputs, error); // reads the weights
//   auto outputs = lib->run(*weights, inputs, error);        // per batch
//
// A library lists the prepared forms it has in `moec_prepared_forms`
// (runtime/PreparedWeights.h).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_LIBRARY_H
#define MOEC_RUNTIME_LIBRARY_H

#include "runtime/PreparedWeights.h"
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

  /// `name`'s prepared form, or nullptr when the library has none (built
  /// with --prepare-weights=false, or a block whose kernels read no packed
  /// layout, or one that trains).
  const PreparedForm *preparedForm(const std::string &name) const;

  /// `name`'s weights prepared once: `inputs` are name's arguments, of
  /// which only the weights are read (and checked).
  std::optional<PreparedWeights> prepare(const std::string &name, std::vector<Buffer> &inputs,
                                         std::string &error);

  /// Runs the function `weights` were prepared for on `inputs` (its
  /// arguments, as run() takes them; the weights prepare read are not read
  /// again: a default-constructed Buffer will do there) and `weights`.
  std::optional<std::vector<Buffer>> run(const PreparedWeights &weights, std::vector<Buffer> &inputs,
                                         std::string &error);

private:
  Library() = default;
  CallByName caller();
  const FunctionSignature *findOrSay(const std::string &name, std::string &error) const;
  void *handle_ = nullptr;
  std::vector<FunctionSignature> functions_;
  std::vector<PreparedForm> preparedForms_;
};

} // namespace moec

#endif // MOEC_RUNTIME_LIBRARY_H
