// The forward_backward of every parallel mode, run in-process, gives the
// single-device loss and gradients on the same full inputs: the global loss
// (summed over the token shards), each replica's share of dy, and the
// gradients of replicated arguments summed over their replicas.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/one | FileCheck %s
// RUN: moec run %s --mesh data=2 --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/dp
// RUN: %python %S/npy.py compare-all %t/dp %t/one 1e-5
// RUN: moec run %s --mesh expert=2 --ep-dispatch dense --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/dense
// RUN: %python %S/npy.py compare-all %t/dense %t/one 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/compact
// RUN: %python %S/npy.py compare-all %t/compact %t/one 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --ep-dispatch ring --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/ring
// RUN: %python %S/npy.py compare-all %t/ring %t/one 1e-5
// RUN: moec run %s --mesh expert=4 --ep-dispatch a2a --backward mean-square --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/a2a
// RUN: %python %S/npy.py compare-all %t/a2a %t/one 1e-5
// Through the router too (the dense mode's masked weights carry it back).
// RUN: moec run %s --backward mean-square --routing-grad --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/one-router
// RUN: moec run %s --mesh expert=2 --ep-dispatch dense --backward mean-square --routing-grad --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/dense-router
// RUN: %python %S/npy.py compare-all %t/dense-router %t/one-router 1e-5
// RUN: moec run %s --mesh data=2,expert=2 --backward mean-square --routing-grad --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/compact-router
// RUN: %python %S/npy.py compare-all %t/compact-router %t/one-router 1e-5
// With the caller's cotangent (replicated over expert in compact EP).
// RUN: moec run %s --backward cotangent --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/one-cot
// RUN: moec run %s --mesh expert=2 --backward cotangent --entry block_forward_backward --random-inputs --seed 5 --threads 2 --output-dir %t/compact-cot
// RUN: %python %S/npy.py compare-all %t/compact-cot %t/one-cot 1e-5
// A wrong gradient is caught: the compact run's dx is not the dense run's dw13.
// RUN: not %python %S/npy.py compare %t/compact/out1.npy %t/one/out2.npy 1e-5

// The loss, then dx and the gradients of the expert and shared weights.
// CHECK: out0: f32
// CHECK: out1: 128x32xf32
// CHECK: out2: 8x32x48xf32
// CHECK: out3: 8x24x32xf32
// CHECK: out4: 32x32xf32
// CHECK: out5: 16x32xf32

func.func @block(%x: tensor<128x32xf32>, %logits: tensor<128x10xf32>,
                 %w13: tensor<8x32x48xf32>, %w2: tensor<8x24x32xf32>,
                 %sw13: tensor<32x32xf32>, %sw2: tensor<16x32xf32>) -> tensor<128x32xf32> {
  %y = moe.block %x logits(%logits : tensor<128x10xf32>) gate_up(%w13 : tensor<8x32x48xf32>)
         down(%w2 : tensor<8x24x32xf32>) shared_gate_up(%sw13 : tensor<32x32xf32>)
         shared_down(%sw2 : tensor<16x32xf32>)
         top 3 renormalize null_experts 2 preweight : tensor<128x32xf32>
  return %y : tensor<128x32xf32>
}
