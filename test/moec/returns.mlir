// Results that are constants or the function's own arguments come back as
// copies the caller owns (the deallocation pipeline clones them): they
// compile, run and are freed once.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --entry konst --random-inputs --output-dir %t/k | FileCheck %s --check-prefix=KONST
// RUN: %python %S/npy.py print %t/k/out1.npy | FileCheck %s --check-prefix=KONST1
// RUN: %python %S/npy.py write %t/s.npy f4 2 7 8
// RUN: moec run %s --entry ident --input %t/s.npy --output-dir %t/i
// RUN: %python %S/npy.py print %t/i/out1.npy | FileCheck %s --check-prefix=IDENT
// RUN: moec %s -o %t/lib.so

// KONST: out0: 2xf32 sum 3.000000e+00
// KONST: out1: 2xf32 sum 3.000000e+00
// KONST1: 1 2
// IDENT: 7 8

func.func @konst() -> (tensor<2xf32>, tensor<2xf32>) {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c, %c : tensor<2xf32>, tensor<2xf32>
}

func.func @ident(%s: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  return %s, %s : tensor<2xf32>, tensor<2xf32>
}
