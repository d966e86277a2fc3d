//===- GmmScheduler.h - the fast gmm's tasks over the threads ---*- C++ -*-===//

#ifndef MOEC_CODEGEN_KERNELS_GMMSCHEDULER_H
#define MOEC_CODEGEN_KERNELS_GMMSCHEDULER_H

#include "codegen/kernels/GmmKernelPlan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::moe::codegen {

class Emitter;

/// The worker count of a parallel loop of workers: OpenMP's thread count
/// (`omp_get_max_threads`, declared in `anchor`'s module once), at least 1.
Value workerCount(Emitter &e, Operation *anchor);

/// Workers, one per OpenMP thread and at most `tasks`, taking tasks 0 ..
/// tasks - 1 from an atomic counter: a hot expert's work is many tasks,
/// not one thread's, and uneven tasks never leave a core idle while some
/// remain. `perWorker` emits a worker's set-up (its scratch) once,
/// `body(task, workers)` a task's code. `threads`: workerCount's value when
/// the caller has it already (else asked here).
void emitWorkerTasks(Emitter &e, Value tasks, Operation *anchor, llvm::function_ref<void()> perWorker,
                     llvm::function_ref<void(Value task, Value workers)> body, Value threads = {});

/// Emits `plan`'s gmm at the emitter's insertion point (inside the function
/// of `anchor`) as tasks of `kinds` (#moe.gmm_lowering's kernels: exactly
/// one kind that does not use tiles, the default of every group, and
/// optionally a tile kind groups take at run time), run side by side by one
/// worker per OpenMP thread.
void emitGmmTasks(Emitter &e, const GmmKernelPlan &plan, llvm::ArrayRef<llvm::StringRef> kinds,
                  Operation *anchor);

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_GMMSCHEDULER_H
