//===- LoadProgram.h - a moe program from a file, text or a model's config -*- C++ -*-===//
//
// The first step of every way in (moec, moec run, the Python module): read
// a .mlir file (regular files or stdin only: a FIFO would block), a
// program's text, or build the MoE block of a Hugging Face model's layer
// from its config.json; parse it behind moec's guards against upstream
// parser crashes, and verify it. Diagnostics go to the context's handler
// (attached to `sourceMgr`); what is not a diagnostic (an unreadable file,
// a config.json moec does not take) is returned as the failure's message.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_LOADPROGRAM_H
#define MOEC_TOOLING_LOADPROGRAM_H

#include "runtime/Buffer.h"
#include "runtime/HfLayer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace moec {

struct ProgramSource {
  std::string path;      // a .mlir file ("-": stdin), or
  std::string text;      // the program's text, named "<string>" in diagnostics, or
  std::string hfConfig;  // a model's config.json: the block of layer hfLayer
  int64_t hfLayer = kFirstMoeLayer;
  DType hfDtype = DType::BF16;
};

struct LoadedProgram {
  mlir::OwningOpRef<mlir::ModuleOp> module; // null: failed
  /// Why, when it is not in the diagnostics; which input it concerns.
  std::string error;
  enum class Cause { Diagnostics, Input, Config } cause = Cause::Diagnostics;
  /// The layer a config.json described.
  std::optional<HfLayer> hfLayer;
  /// A hash of the program's text (as given, or as built), for ranks of an
  /// MPI run that check they run the same program.
  uint64_t textHash = 0;
};

LoadedProgram loadProgram(mlir::MLIRContext *context, llvm::SourceMgr &sourceMgr,
                          const ProgramSource &source);

} // namespace moec

#endif // MOEC_TOOLING_LOADPROGRAM_H
