// The int8 ops compiled and run on values whose quantization is known by
// hand, under every lowering of the int8 gmm: the reference loops, the fast
// kernel (AMX tiles, AVX512-VNNI or AVX2's vpmaddwd, whichever this host
// has) and the i32 vector task (gmm-strategy=microkernel-fma). Rows and experts whose largest
// magnitude is 127 have scale 1, so q is the value rounded half to even
// (2.5 -> 2, 1.5 -> 2) and the products are exact integers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../moec/npy.py write %t/x.npy f4 3x4 127 2.5 -3 1 0 0 0 0 -127 1.5 0 10
// RUN: %python %S/../moec/npy.py write %t/w.npy f4 2x4x3 1 0 127 2 -1 0 0 3 1 -127 5 2 1 1 1 0 2 0 5 0 0 0 0 127
// RUN: %python %S/../moec/npy.py write %t/s.npy i4 2 2 1
// RUN: for s in reference microkernel microkernel-fma; do moec run %s --entry expert --gmm-strategy $s --input %t/x.npy --input %t/w.npy --input %t/s.npy --output-dir %t/expert-$s || exit 1; done
// RUN: %python %S/../moec/npy.py print %t/expert-reference/out0.npy | FileCheck %s --check-prefix=EXPERT
// RUN: %python %S/../moec/npy.py compare-all %t/expert-reference %t/expert-microkernel 0
// RUN: %python %S/../moec/npy.py compare-all %t/expert-reference %t/expert-microkernel-fma 0
// A NaN in a row makes the row's scale NaN, so each of its outputs is NaN
// (as a float product would be), on every kernel; the other rows keep
// their values.
// RUN: %python %S/../moec/npy.py write %t/xnan.npy f4 3x4 127 nan -3 1 0 0 0 0 -127 1.5 0 10
// RUN: for s in reference microkernel microkernel-fma; do moec run %s --entry expert --gmm-strategy $s --input %t/xnan.npy --input %t/w.npy --input %t/s.npy --output-dir %t/nan-$s && %python %S/../moec/npy.py print %t/nan-$s/out0.npy | FileCheck %s --check-prefix=NAN || exit 1; done
// NAN: dtype f4 shape 3x3
// NAN-NEXT: nan nan nan 0 0 0 -127 -123 1143
// The same with bf16 rows (the kernels find a row's largest magnitude on
// the elements' bits, 16 of them here, 32 for f32 rows above) with the
// NaN in the row's last element; the outputs are bf16 (1143 rounds to
// 1144).
// RUN: %python %S/../moec/npy.py write %t/xnan16.npy f4 3x4 127 1 -3 nan 0 0 0 0 -127 1.5 0 10
// RUN: for s in reference microkernel microkernel-fma; do moec run %s --entry expert_bf16 --gmm-strategy $s --input %t/xnan16.npy --input %t/w.npy --input %t/s.npy --output-dir %t/nan16-$s && %python %S/../moec/npy.py print %t/nan16-$s/out0.npy | FileCheck %s --check-prefix=NAN16 || exit 1; done
// NAN16: dtype f4 shape 3x3
// NAN16-NEXT: nan nan nan 0 0 0 -127 -123 1144
// RUN: for s in reference microkernel microkernel-fma; do moec run %s --entry channel --gmm-strategy $s --input %t/x.npy --input %t/w.npy --input %t/s.npy --output-dir %t/channel-$s || exit 1; done
// RUN: %python %S/../moec/npy.py print %t/channel-reference/out0.npy | FileCheck %s --check-prefix=CHANNEL
// RUN: %python %S/../moec/npy.py compare-all %t/channel-reference %t/channel-microkernel 0
// RUN: %python %S/../moec/npy.py compare-all %t/channel-reference %t/channel-microkernel-fma 0
// RUN: moec run %s --entry ops --input %t/x.npy --input %t/w.npy --output-dir %t/ops
// RUN: %python %S/../moec/npy.py print %t/ops/out0.npy | FileCheck %s --check-prefix=VALUES
// RUN: %python %S/../moec/npy.py print %t/ops/out1.npy | FileCheck %s --check-prefix=SCALES
// RUN: %python %S/../moec/npy.py print %t/ops/out2.npy | FileCheck %s --check-prefix=BACK
// RUN: %python %S/../moec/npy.py print %t/ops/out3.npy | FileCheck %s --check-prefix=FAKE

// Rows 0 and 1 on expert 0, row 2 on expert 1. Row 0: 127 + 2 * 2 - 127 = 4
// (float: 5, from 2.5), -2 - 9 + 5 = -6, 127 * 127 - 3 + 2 = 16128; row 1 is
// all zeros (scale 0); row 2: -127, -127 + 4 = -123, -127 + 1270 = 1143.
// EXPERT: dtype f4 shape 3x3
// EXPERT-NEXT: 4 -6 16128 0 0 0 -127 -123 1143
func.func @expert(%x: tensor<?x4xf32>, %w: tensor<2x4x3xf32>, %sizes: tensor<2xi32>) -> tensor<?x3xf32> {
  %q, %s = moe.quantize %w per_expert : tensor<2x4x3xf32>
  %y = moe.gmm %x, %q, %sizes scales(%s : tensor<2xf32>) : tensor<?x4xf32>, tensor<2x4x3xi8>, tensor<2xi32>
  return %y : tensor<?x3xf32>
}

func.func @expert_bf16(%x: tensor<?x4xf32>, %w: tensor<2x4x3xf32>, %sizes: tensor<2xi32>) -> tensor<?x3xbf16> {
  %xb = arith.truncf %x : tensor<?x4xf32> to tensor<?x4xbf16>
  %q, %s = moe.quantize %w per_expert : tensor<2x4x3xf32>
  %y = moe.gmm %xb, %q, %sizes scales(%s : tensor<2xf32>) : tensor<?x4xbf16>, tensor<2x4x3xi8>, tensor<2xi32>
  return %y : tensor<?x3xbf16>
}

// Per channel, expert 0's column 1 has max 5: scale 5/127, its weights -1, 3,
// 5 become -25, 76, 127, and row 0 gets (2 * -25 - 3 * 76 + 127) * 5/127 =
// -151 * 5/127. Expert 1's column 0 (max 5): 25, 0, 127, 0, so row 2 gets
// -127 * 25 * 5/127 = -125; its column 1 (max 2): 1 -> 63.5 -> 64 (half to
// even), 127, so (-127 * 64 + 2 * 127) * 2/127 = -124.
// CHANNEL: dtype f4 shape 3x3
// CHANNEL-NEXT: 4 -5.94488 16128 0 0 0 -125 -124 1143
func.func @channel(%x: tensor<?x4xf32>, %w: tensor<2x4x3xf32>, %sizes: tensor<2xi32>) -> tensor<?x3xf32> {
  %q, %s = moe.quantize %w per_channel : tensor<2x4x3xf32>
  %y = moe.gmm %x, %q, %sizes scales(%s : tensor<2x3xf32>) : tensor<?x4xf32>, tensor<2x4x3xi8>, tensor<2xi32>
  return %y : tensor<?x3xf32>
}

// The per-channel values and scales themselves (the columns above), and
// back in float: -25 * 5/127, 76 * 5/127, 25 * 5/127, 64 * 2/127.
// VALUES: dtype i1 shape 2x4x3
// VALUES-NEXT: 1 0 127 2 -25 0 0 76 1 -127 127 2 25 64 1 0 127 0 127 0 0 0 0 127
// SCALES: dtype f4 shape 2x3
// SCALES-NEXT: 1 0.0393701 1 0.0393701 0.015748 1
// BACK: dtype f4 shape 2x4x3
// BACK-NEXT: 1 0 127 2 -0.984252 0 0 2.99213 1 -127 5 2 0.984252 1.00787 1 0 2 0 5 0 0 0 0 127
// FAKE: dtype f4 shape 3x4
// FAKE-NEXT: 127 2 -3 1 0 0 0 0 -127 2 0 10
func.func @ops(%x: tensor<3x4xf32>, %w: tensor<2x4x3xf32>)
    -> (tensor<2x4x3xi8>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<3x4xf32>) {
  %q, %s = moe.quantize %w per_channel : tensor<2x4x3xf32>
  %back = moe.dequantize %q, %s : tensor<2x4x3xi8>, tensor<2x3xf32>
  %fake = moe.fake_quant %x : tensor<3x4xf32>
  return %q, %s, %back, %fake : tensor<2x4x3xi8>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<3x4xf32>
}
