// A bf16 block's forward_backward, sharded in-process, against the single
// device: the replicated weights' gradients summed over the data shards by
// the bf16 all-reduce (in f32, rounded once, in place), the tokens' dx
// gathered. Each shard rounds its partial gradient to bf16 before the sum,
// where one device rounds the whole sum once: up to a bf16 step apart. The
// mean-square loss's gradients are of 1e-7 here, so npy.py's |a - b| /
// (1 + |b|) is about |a - b|: measured 9.3e-10 (a step), and 1.5e-7 for a
// gradient off by half, which the last line checks is caught.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 2 --output-dir %t/one | FileCheck %s
// RUN: moec run %s --mesh data=2 --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 2 --output-dir %t/dp
// RUN: %python %S/npy.py compare-all %t/dp %t/one 2e-8
// RUN: moec run %s --mesh data=2,expert=2 --backward mean-square --entry block_forward_backward --random-inputs --seed 7 --threads 2 --output-dir %t/compact
// RUN: %python %S/npy.py compare-all %t/compact %t/one 2e-8
// A gradient left unsummed over the data shards is caught (the second
// shard's half is missing): half of dW13 is not dW13.
// RUN: %python -c "import sys; sys.path.insert(0, '%S'); import npy; s, v = npy.read('%t/one/out2.npy'); npy.write('%t/half.npy', 'f4', 'x'.join(map(str, s)), [x / 2 for x in v])"
// RUN: not %python %S/npy.py compare %t/half.npy %t/one/out2.npy 2e-8

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
