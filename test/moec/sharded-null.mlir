// Benchmark null routing in every parallel mode: the draws are split (and,
// for the ring, gathered) with the tokens, so each mode nulls the same slots
// and gives the single-device result on the same full inputs; forward and
// forward_backward.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --random-inputs --seed 3 --threads 2 --output-dir %t/one
// RUN: moec run %s --mesh data=2 --random-inputs --seed 3 --threads 2 --output-dir %t/dp
// RUN: %python %S/npy.py compare %t/dp/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh expert=2 --ep-dispatch dense --random-inputs --seed 3 --threads 2 --output-dir %t/dense
// RUN: %python %S/npy.py compare %t/dense/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --random-inputs --seed 3 --threads 2 --output-dir %t/compact
// RUN: %python %S/npy.py compare %t/compact/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --ep-dispatch ring --random-inputs --seed 3 --threads 2 --output-dir %t/ring
// RUN: %python %S/npy.py compare %t/ring/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --mesh expert=4 --ep-dispatch a2a --random-inputs --seed 3 --threads 2 --output-dir %t/a2a
// RUN: %python %S/npy.py compare %t/a2a/out0.npy %t/one/out0.npy 1e-5
// RUN: moec run %s --backward mean-square --entry block_forward_backward --random-inputs --seed 3 --threads 2 --output-dir %t/bwd-one
// RUN: moec run %s --backward mean-square --entry block_forward_backward --mesh data=2,expert=2 --ep-dispatch ring --random-inputs --seed 3 --threads 2 --output-dir %t/bwd-ring
// RUN: %python %S/npy.py compare-all %t/bwd-ring %t/bwd-one 1e-5
// RUN: moec run %s --backward mean-square --entry block_forward_backward --mesh data=2 --random-inputs --seed 3 --threads 2 --output-dir %t/bwd-dp
// RUN: %python %S/npy.py compare-all %t/bwd-dp %t/bwd-one 1e-5

func.func @block(%x: tensor<128x32xf32>, %logits: tensor<128x8xf32>, %u: tensor<128x4xf32>,
                 %w13: tensor<8x32x48xf32>, %w2: tensor<8x24x32xf32>) -> tensor<128x32xf32> {
  %y = moe.block %x logits(%logits : tensor<128x8xf32>) null_draws(%u : tensor<128x4xf32>)
         gate_up(%w13 : tensor<8x32x48xf32>) down(%w2 : tensor<8x24x32xf32>)
         top 4 renormalize null_policy take_until_null null_fraction 0.3 : tensor<128x32xf32>
  return %y : tensor<128x32xf32>
}
