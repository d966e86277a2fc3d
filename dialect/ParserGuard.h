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
// Nesting deep enough to overflow the stack of MLIR's recursive descent
// parser (a crash, not a diagnostic, in mlir-opt too) is refused the same
// way, before parsing.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_DIALECT_PARSERGUARD_H
#define MOEC_DIALECT_PARSERGUARD_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
namespace moe {

/// The deepest nesting of (), [], {} and <> accepted. MLIR's parser (and
/// the verifier and printer after it) recurse once or more per level, a few
/// KiB of stack each: 5000 nested regions or 20000 nested parentheses in a
/// 40 KB file overflowed the 8 MiB main stack. 510 nested regions compile
/// with a 2 MiB stack and crash with 1 MiB, so 512 levels leave a margin of
/// four (test/diagnostics/nesting.mlir runs 510 levels of each kind through
/// moec and moe-opt), far above what any program nests.
constexpr int64_t kMaxNestingDepth = 512;

/// Emits an error (through `context`'s diagnostic handler) at each
/// linalg.reduce/broadcast/transpose in `sourceMgr`'s main buffer whose
/// dimension array the upstream parser would crash on, and where the
/// nesting first exceeds kMaxNestingDepth; fails if there is one.
LogicalResult checkUpstreamParserHazards(llvm::SourceMgr &sourceMgr, MLIRContext *context);

/// A SourceMgrDiagnosticHandler that echoes the source line under a
/// diagnostic (and the caret line under it) only when the line is at most
/// 240 columns: a 40 KB line of parentheses, or a generated one-line
/// module, would otherwise be printed whole, twice, after the message.
class ShortSourceLineDiagnosticHandler : public SourceMgrDiagnosticHandler {
public:
  /// Diagnostics go to `os` (the Python module collects them for the
  /// exception it raises).
  ShortSourceLineDiagnosticHandler(llvm::SourceMgr &mgr, MLIRContext *context,
                                   llvm::raw_ostream &os = llvm::errs());

private:
  bool lineIsShort(Location loc) const;
};

} // namespace moe
} // namespace mlir

#endif // MOEC_DIALECT_PARSERGUARD_H
