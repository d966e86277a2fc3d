// A program whose buffers would not fit in memory is refused with the
// estimate and exit status 1, not killed by the kernel's out-of-memory
// killer. The inputs are a few MiB to 100 MiB; the gate/up activation is
// 1 TiB, more than any machine this runs on has.
// RUN: rm -rf %t && mkdir -p %t

// Static shapes: refused up front, from the memory plan, before any run.
// RUN: not moec run %S/Inputs/huge-static.mlir --random-inputs --iters 3 --output-dir %t/static 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STATIC --implicit-check-not=error: --implicit-check-not=time:
// STATIC: memory: planned peak {{[0-9.]+ [GT]}}iB
// STATIC: moec: error: the run needs about {{[0-9.]+ [GT]}}iB (planned peak {{[0-9.]+ [GT]}}iB per call), more than the {{[0-9.]+ [MGT]}}iB of memory available: refused before running

// Sharded in-process: every shard's plan. The shards' blocks of the inputs
// (replicated, or split along the experts) share the inputs' memory, so no
// copy of them is counted (runtime/ShardedRun.h, blockSharesMemory).
// RUN: not moec run %S/Inputs/huge-static.mlir --random-inputs --mesh expert=2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHARDED --implicit-check-not=error:
// SHARDED: moec: error: the run needs about {{[0-9.]+ [GT]}}iB (planned peak {{[0-9.]+ [GT]}}iB per call on each of 2 shards), more than

// Dynamic token count: the activation's size is known only in the run; the
// JIT's allocation guard refuses it when it is asked for.
// RUN: not moec run %S/Inputs/huge-dynamic.mlir --random-inputs --dim 1000000 --output-dir %t/dynamic 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DYNAMIC --implicit-check-not=error: --implicit-check-not=time:
// DYNAMIC: moec: error: the program asked for a buffer of {{[0-9.]+ [GT]}}iB at run time, more than the {{[0-9.]+ [MGT]}}iB of memory available: refused rather than left to the kernel's out-of-memory killer

// The same program at a size that fits runs.
// RUN: moec run %S/Inputs/huge-dynamic.mlir --random-inputs --dim 4 --output-dir %t/small | FileCheck %s --check-prefix=SMALL
// SMALL: out0: 4x16xf32

// moe-bench's refusal, from its estimate of a configuration: test/moe-bench/errors.mlir.

// Nothing was written by the refused runs.
// RUN: ls %t | FileCheck %s --check-prefix=NOTHING --implicit-check-not=static --implicit-check-not=dynamic
// NOTHING: small
