// moec run reports the memory plan of the entry (moe-plan-buffers) and the
// peak RSS the runs grew by, against it. A forward_backward with ~52 MiB of
// buffers: placed by live range they take an arena of 20 MiB (the lower
// bound is 18), plus 14 MiB of gradients returned; the measured peak stays
// within 1.25x of the plan (and above half of it: the measurement is real).
// (36 buffers: two of them the task counters of the two tgmms' workers,
// whose own scratch is allocated inside the parallel loop, not planned.)
// UNSUPPORTED: asan
// RUN: moec run %s --backward mean-square --entry block_forward_backward --random-inputs --iters 2 --threads 2 | FileCheck %s
// RUN: moec %s --backward mean-square --remat expert_mlp -o %t.o --memory-report | FileCheck %s --check-prefix=REPORT
// A function of dynamic shape: the plan covers only the static buffers, and
// it says so instead of comparing the run's RSS with it.
// RUN: moec run %examples/small-e60-top8.mlir --random-inputs --dim 512 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: memory: planned peak {{.*}} (static buffers only: those sized by the inputs' dynamic dimensions are allocated during the run)
// DYNAMIC-NOT: the planned peak

// CHECK: memory: planned peak 34.0 MiB = arena 20.0 MiB (36 buffers of 38.1 MiB; live-set lower bound 18.0 MiB) + results and unplanned 14.0 MiB
// CHECK: memory: peak RSS grew {{[0-9.]+}} MiB over the runs, {{0\.[5-9][0-9]|1\.[01][0-9]|1\.2[0-5]}}x the planned peak

// expert_mlp: h and a die in the forward; the arena shrinks to 16 MiB.
// REPORT: memory: @block: planned peak
// REPORT: memory: @block_forward_backward: planned peak 30.0 MiB = arena 16.0 MiB
func.func @block(%x: tensor<1024x512xf32>, %logits: tensor<1024x8xf32>, %w13: tensor<8x512x512xf32>,
                 %w2: tensor<8x256x512xf32>) -> tensor<1024x512xf32> {
  %y = moe.block %x logits(%logits : tensor<1024x8xf32>) gate_up(%w13 : tensor<8x512x512xf32>)
         down(%w2 : tensor<8x256x512xf32>) top 2 : tensor<1024x512xf32>
  return %y : tensor<1024x512xf32>
}
