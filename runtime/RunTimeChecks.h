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
// A call made through callPackedRecovering gets the failure back instead:
// the check (or the allocation guard, MemoryGuard.h) jumps back to the call
// with the message, and the caller reports it as its own error. This is
// what lets the Python module raise an exception for inputs whose dynamic
// sizes disagree instead of ending the interpreter, and a shard of an
// in-process mesh stop its peers. The jump is a longjmp: generated code
// cannot unwind (it has no unwind tables and its parallel loops run on
// libomp's threads), and it holds nothing that needs destroying, so
// skipping its frames leaks the buffers it had allocated before the check
// (the call's arena among them: an error path, not a loop to repeat). A
// failure on a thread without such a call, or inside a parallel loop (a
// libomp team would wait for the thread that jumped), still ends the
// process. The checks generated today sit outside the parallel loops.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_RUNTIMECHECKS_H
#define MOEC_RUNTIME_RUNTIMECHECKS_H

#include <string>
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

/// Calls the packed entry `fn(args)` of generated code. True when it
/// returned; false with the message ("run-time check failed: ...") when a
/// run-time check or the allocation guard failed in it on this thread.
bool callPackedRecovering(void (*fn)(void **), void **args, std::string &message);
/// Reports a failure of generated code: back to the innermost
/// callPackedRecovering on this thread with `message`, or, without one,
/// "<tool>: error: <message>" on stderr and exit status 1.
[[noreturn]] void failRunTime(const std::string &message);
/// Name -> address of puts and abort for the JIT's symbol map.
std::vector<std::pair<const char *, void *>> runTimeCheckSymbols();

} // namespace moec

#endif // MOEC_RUNTIME_RUNTIMECHECKS_H
