// A bf16 block's forward_backward, sharded in-process, against the single
// device: the replicated weights' gradients summed over the data shards by
// the bf16 all-reduce (in f32, rounded once, in place), the tokens' dx
// gathered. Each shard rounds its partial gradient to bf16 before the sum,
// where one device rounds the whole sum once: up to a few bf16 steps apart,
// so the outputs are compared against their largest value (a bf16 step is
// 2^-8 of it; 3e-2 allows about 8); a gradient off by half is caught.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 2 --output-dir %t/one | FileCheck %s
// RUN: moec run %s --mesh data=2 --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 2 --output-dir %t/dp
// RUN: %python %S/npy.py compare-all-scaled %t/dp %t/one 3e-2
// RUN: moec run %s --mesh data=2,expert=2 --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 2 --output-dir %t/compact
// RUN: %python %S/npy.py compare-all-scaled %t/compact %t/one 3e-2
// A gradient left unsummed over the data shards is caught (the second
// shard's half is missing): half of dW13 is not dW13.
// RUN: %python -c "import sys; sys.path.insert(0, '%S'); import npy; s, v = npy.read('%t/one/out2.npy'); npy.write('%t/half.npy', 'f4', 'x'.join(map(str, s)), [x / 2 for x in v])"
// RUN: not %python %S/npy.py compare-scaled %t/half.npy %t/one/out2.npy 3e-2

// The loss, then dx and the gradients of the expert and shared weights.
// CHECK: out0: f32
// CHECK: out1: 128x32xbf16
// CHECK: out2: 8x32x48xbf16
// CHECK: out3: 8x24x32xbf16

func.func @block(%x: tensor<128x32xbf16>, %logits: tensor<128x8xf32>,
                 %w13: tensor<8x32x48xbf16>, %w2: tensor<8x24x32xbf16>) -> tensor<128x32xbf16> {
  %y = moe.block %x logits(%logits : tensor<128x8xf32>) gate_up(%w13 : tensor<8x32x48xbf16>)
         down(%w2 : tensor<8x24x32xbf16>) top 2 renormalize : tensor<128x32xbf16>
  return %y : tensor<128x32xbf16>
}
