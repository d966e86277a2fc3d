// f32 -> bf16 as moe-expand-bf16-conversions writes it, run: round to
// nearest even (ties at 1 + 2^-8 go down, at 1 + 3 * 2^-8 up), overflow to
// infinity, signed zeros, tiny values to zero and subnormals to the nearest
// bf16 subnormal, and a NaN stays a NaN with its sign (Buffer's f32ToBf16
// and vcvtneps2bf16 keep it; upstream's expansion made every NaN positive).
// Scalar truncations take this expansion on every CPU, vector ones where
// there is no AVX512_BF16 (whose vcvtneps2bf16 flushes subnormals to zero).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/npy.py write %t/x.npy f4 16 1.00390625 1.01171875 3.4028235e38 -3.4028235e38 inf -inf -0.0 0.0 nan -nan 1e-39 -2.5 3.0000002 65504 1.0000001 -1.00390625
// RUN: moec run %s --input %t/x.npy --output-dir %t/out > /dev/null
// RUN: %python %S/npy.py print %t/out/out0.npy | FileCheck %s
// CHECK: dtype f4 shape 16
// CHECK-NEXT: {{^}}1 1.01562 inf -inf inf -inf -0 0 nan -nan 1.01019e-39 -2.5 3 65536 1 -1{{$}}
func.func @round(%x: tensor<16xf32>) -> tensor<16xbf16> {
  %s = arith.truncf %x : tensor<16xf32> to tensor<16xbf16>
  return %s : tensor<16xbf16>
}
