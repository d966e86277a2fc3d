// Every parallel mode, run in-process (every shard a thread of moec), gives
// the single-device result on the same full inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --random-inputs --seed 5 --threads 2 --output-dir %t/one
// RUN: moec run %s --mesh data=2 --random-inputs --seed 5 --threads 2 --output-dir %t/dp | FileCheck %s --check-prefix=DP
// RUN: %python %S/npy.py compare %t/dp/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh expert=2 --ep-dispatch dense --random-inputs --seed 5 --threads 2 --output-dir %t/dense
// RUN: %python %S/npy.py compare %t/dense/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --random-inputs --seed 5 --threads 2 --output-dir %t/compact | FileCheck %s --check-prefix=COMPACT
// RUN: %python %S/npy.py compare %t/compact/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --ep-dispatch ring --random-inputs --seed 5 --threads 2 --output-dir %t/ring
// RUN: %python %S/npy.py compare %t/ring/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh expert=4 --ep-dispatch a2a --random-inputs --seed 5 --threads 2 --output-dir %t/a2a
// RUN: %python %S/npy.py compare %t/a2a/out0.npy %t/one/out0.npy 1e-5
// A compact capacity of the fair share rounded to 8 rows drops rows: the
// result differs (the drop is real, not hidden).
// RUN: moec run %s --mesh expert=4 --capacity-factor 0.5 --random-inputs --seed 5 --threads 2 --output-dir %t/dropped | FileCheck %s --check-prefix=DROP
// RUN: not %python %S/npy.py compare %t/dropped/out0.npy %t/one/out0.npy 1e-5
// An all-to-all receive buffer too small for what the routing sends fails
// every rank with the reason, and no hang.
// RUN: not moec run %s --mesh expert=4 --ep-dispatch a2a --capacity-factor 0.1 --random-inputs --seed 5 --threads 2 2>&1 | FileCheck %s --check-prefix=OVER

// DP: mesh: data=2 (dp), 2 shards in-process
// DP: comm: 0 collectives, 0.000 MiB
// COMPACT: mesh: data=2,expert=2 (ep-compact), 4 shards in-process
// Psum of [64, 32] f32 over 2 shards: 2 x 1/2 x 8 KiB.
// COMPACT: comm: 1 collectives, 0.008 MiB moved by the busiest shard per run
// 384 assignments, 304 of them to real experts; each of the 4 shards keeps
// 48 (max(2, ceil(0.5 x 384 / 4)) rounded to 8).
// DROP: dropped: 112 of 304 routed rows (36.84%) past the expert capacity, all shards per run
// OVER: moec: error: rank {{[0-3]}} failed: all_to_all: rank {{[0-3]}} receives {{[0-9]+}} rows but has room for 10

func.func @block(%x: tensor<128x32xf32>, %logits: tensor<128x10xf32>,
                 %w13: tensor<8x32x48xf32>, %w2: tensor<8x24x32xf32>,
                 %sw13: tensor<32x32xf32>, %sw2: tensor<16x32xf32>) -> tensor<128x32xf32> {
  %y = moe.block %x logits(%logits : tensor<128x10xf32>) gate_up(%w13 : tensor<8x32x48xf32>)
         down(%w2 : tensor<8x24x32xf32>) shared_gate_up(%sw13 : tensor<32x32xf32>)
         shared_down(%sw2 : tensor<16x32xf32>)
         top 3 renormalize null_experts 2 preweight : tensor<128x32xf32>
  return %y : tensor<128x32xf32>
}
