//===- ParserGuard.h - input upstream MLIR's parsers crash on ----*- C++ -*-===//
//
// moe-fuzz-compile found that MLIR 22's parsers of linalg.reduce,
// linalg.broadcast and linalg.transpose dereference a null attribute when
// the integer array after `dimensions =` (`permutation =`) does not parse:
// they print "expected '['" and then crash (mlir-opt too). The parsers are
// Debian's, not ours to fix, so moec and moe-opt look for that pattern in
// the text first and refuse it with the error the parser would have given,
// at its location, and no crash.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_DIALECT_PARSERGUARD_H
#define MOEC_DIALECT_PARSERGUARD_H

#include "mlir/Support/LLVM.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
namespace moe {

/// Emits an error (through `context`'s diagnostic handler) at each
/// linalg.reduce/broadcast/transpose in `sourceMgr`'s main buffer whose
/// dimension array the upstream parser would crash on; fails if there is
/// one.
LogicalResult checkUpstreamParserHazards(llvm::SourceMgr &sourceMgr, MLIRContext *context);

} // namespace moe
} // namespace mlir

#endif // MOEC_DIALECT_PARSERGUARD_H
