//===- RunTimeChecks.h - a failed check in generated code, as an error -*- C++ -*-===//
//
// Generated code checks at run time what only the inputs decide: that two
// arguments' dynamic sizes agree (a cf.assert, emitted by the lowerings).
// Lowered to LLVM, a failed check calls puts(message) and then abort(),
// which a tool's crash handler turns into a stack dump a user cannot act
// on. The JIT resolves both for generated code to the functions here: the
// message becomes the tool's one error line and the process exits with
// status 1. A library built with `-o lib.so` keeps the C library's puts
// and abort: the program linking it owns its failure policy.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_RUNTIMECHECKS_H
#define MOEC_RUNTIME_RUNTIMECHECKS_H

#include <utility>
#include <vector>

extern "C" {
/// puts for generated code, whose only use of it is a failed check's
/// message: "<tool>: error: run-time check failed: <message>" on stderr.
int moert_check_message(const char *message);
/// abort for generated code, which calls it only after a failed check:
/// exits with status 1, no core and no stack dump.
[[noreturn]] void moert_check_failed();
}

namespace moec {

/// The tool named in run-time error lines ("moec", "moe-bench"); the
/// allocation guard (MemoryGuard.h) uses it too.
void setRunTimeErrorToolName(const char *name);
const char *runTimeErrorToolName();

/// Name -> address of puts and abort for the JIT's symbol map.
std::vector<std::pair<const char *, void *>> runTimeCheckSymbols();

} // namespace moec

#endif // MOEC_RUNTIME_RUNTIMECHECKS_H
