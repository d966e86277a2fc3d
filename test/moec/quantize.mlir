// int8 end to end: blocks through moe-quantize, compiled with the fast
// kernel (gathered rows and the SwiGLU epilogue fused into the int8 gmm;
// separate w1/w3 scales in @baseline), against the same blocks under
// fake_int8 (the same rounding on the float kernels: equal up to float
// summation order) and f32 (close, not equal). The training form: the loss
// and the rows' gradient of int8 and fake_int8 agree too.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moe-opt %s -moe-quantize -o %t/int8.mlir
// RUN: moe-opt %s -moe-quantize=mode=fake_int8 -o %t/fake.mlir
// RUN: for f in fused baseline; do for m in int8 fake; do moec run %t/$m.mlir --entry $f --random-inputs --dim 300 --output-dir %t/$f-$m || exit 1; done; moec run %s --entry $f --random-inputs --dim 300 --output-dir %t/$f-f32 || exit 1; done
// RUN: %python %S/npy.py compare-all %t/fused-int8 %t/fused-fake 1e-5
// bf16: fake_int8 rounds the dequantized rows and weights to bf16, the int8
// kernel does not; single roundings flip a q by one here and there.
// RUN: %python %S/npy.py compare-all %t/baseline-int8 %t/baseline-fake 0.05
// RUN: %python %S/npy.py compare-all %t/fused-int8 %t/fused-f32 0.1
// RUN: not %python %S/npy.py compare-all %t/fused-int8 %t/fused-f32 1e-4
// The prepared function alone, on int8 inputs.
// RUN: moec run %t/int8.mlir --entry fused_prepared --random-inputs --dim 64 | FileCheck %s --check-prefix=PREPARED
// PREPARED: inputs: random
// PREPARED: out0: 64x32xf32
// A split module of one block runs that block without --entry: the two
// halves moe-quantize adds are not candidates. Of two blocks, --entry
// still picks one.
// RUN: moe-opt %moe_src_root/examples/small-e60-top2.mlir -moe-quantize -o %t/one-block.mlir
// RUN: moec run %t/one-block.mlir --random-inputs --dim 33 | FileCheck %s --check-prefix=ONE
// ONE: prepare: weights quantized and packed once for the kernels in {{.*}}, @moe_block_prepare_weights; the runs call @moe_block_prepared
// ONE: out0: 33x64xf32
// RUN: not moec run %t/int8.mlir --random-inputs --dim 33 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: moec: error: the module has 2 public functions (fused, baseline) besides prepared halves (<f>_prepare_weights, <f>_prepared); pick one with --entry
//
// RUN: moe-opt %s "-pass-pipeline=builtin.module(moe-quantize{hoist-weights=false},moe-generate-backward)" -o %t/int8-fb.mlir
// RUN: moe-opt %s "-pass-pipeline=builtin.module(moe-quantize{mode=fake_int8 hoist-weights=false},moe-generate-backward)" -o %t/fake-fb.mlir
// RUN: moec run %t/int8-fb.mlir --entry fused_forward_backward --random-inputs --dim 300 --output-dir %t/fb-int8
// RUN: moec run %t/fake-fb.mlir --entry fused_forward_backward --random-inputs --dim 300 --output-dir %t/fb-fake
// RUN: %python %S/npy.py compare %t/fb-int8/out0.npy %t/fb-fake/out0.npy 1e-5
// RUN: %python %S/npy.py compare %t/fb-int8/out1.npy %t/fb-fake/out1.npy 1e-4

func.func @fused(%x: tensor<?x32xf32>, %logits: tensor<?x6xf32>, %w13: tensor<6x32x48xf32>,
                 %w2: tensor<6x24x32xf32>, %sw13: tensor<32x40xf32>, %sw2: tensor<20x32xf32>) -> tensor<?x32xf32> {
  %y = moe.block %x logits(%logits : tensor<?x6xf32>) gate_up(%w13 : tensor<6x32x48xf32>)
         down(%w2 : tensor<6x24x32xf32>) shared_gate_up(%sw13 : tensor<32x40xf32>)
         shared_down(%sw2 : tensor<20x32xf32>) top 2 : tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

func.func @baseline(%x: tensor<?x32xbf16>, %logits: tensor<?x6xf32>, %w1: tensor<6x32x24xbf16>,
                    %w3: tensor<6x32x24xbf16>, %w2: tensor<6x24x32xbf16>) -> tensor<?x32xbf16> {
  %y = moe.block %x logits(%logits : tensor<?x6xf32>) gate_up(%w1, %w3 : tensor<6x32x24xbf16>, tensor<6x32x24xbf16>)
         down(%w2 : tensor<6x24x32xbf16>) top 3 : tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}
