//===- FuzzCompile.cpp - libFuzzer: arbitrary bytes through moec's front ---===//
//
// The unstructured fuzz target: any bytes as a .mlir file, parsed with
// every dialect moec knows, verified, then run through moe-default and
// moe-to-llvm, as `moec` would compile it. Whatever the input, each step
// must either succeed or fail with a diagnostic: a crash, a hang, an
// assertion or a sanitizer report is a finding (docs/testing.md says how
// each becomes a regression test).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "dialect/ParserGuard.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Large inputs only slow the search down: the parser's paths show on
  // small ones.
  if (size > 16384)
    return -1;
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    moec::registerCompilerDialects(*r);
    return r;
  }();
  // A context per input: nothing one input uniqued (types, attributes,
  // loaded dialects) changes how the next one parses.
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  // Errors are the expected outcome of most inputs; each must be a
  // diagnostic, which is all this handler sees.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "input"),
      llvm::SMLoc());
  // What moec and moe-opt refuse before parsing: upstream's parser crashes.
  if (mlir::failed(mlir::moe::checkUpstreamParserHazards(sourceMgr, &context)))
    return 0;
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  if (mlir::failed(moec::lowerModule(*module, "moe-default")))
    return 0;
  (void)moec::lowerModule(*module);
  return 0;
}
