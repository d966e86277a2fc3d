// moec run binds .npy inputs in argument order and writes out<i>.npy.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/npy.py write %t/a.npy f4 2x3 1 2 3 4 5 6
// RUN: %python %S/npy.py write %t/s.npy f8 2 10 -1
// RUN: moec run %s --entry scale --input %t/a.npy --input %t/s.npy --output-dir %t/out | FileCheck %s --check-prefix=RES
// RUN: %python %S/npy.py print %t/out/out0.npy | FileCheck %s --check-prefix=OUT0
// RUN: %python %S/npy.py print %t/out/out1.npy | FileCheck %s --check-prefix=OUT1

// RUN: %python %S/npy.py write %t/ids.npy i8 2x2 0 1 1 1
// RUN: moec run %s --entry ids --input %t/ids.npy --output-dir %t/ids | FileCheck %s --check-prefix=IDS
// RUN: %python %S/npy.py print %t/ids/out0.npy | FileCheck %s --check-prefix=IDSOUT

// RUN: moec run %s --entry scale --random-inputs --seed 7 --iters 3 | FileCheck %s --check-prefix=RANDOM

// RES: out0: 2x3xf32 sum 4.500000e+01 sum|x| 7.500000e+01
// RES: out1: 2x2xbf16 sum 1.200000e+01
// RES: time: {{[0-9.]+}} ms median of 1 run
// OUT0: dtype f4 shape 2x3
// OUT0-NEXT: 10 20 30 -4 -5 -6
// bf16 results are written as float32.
// OUT1: dtype f4 shape 2x2
// OUT1-NEXT: 1 2 4 5
// IDS: out0: 2x4xf32
// IDSOUT: 2 0 0 0 0 0 0 2
// RANDOM: inputs: random, seed 7
// RANDOM: time: {{[0-9.]+}} ms median of 3 runs

func.func @scale(%a: tensor<2x3xf32>, %s: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x2xbf16>) {
  %0 = moe.scale_rows %a, %s : tensor<2x3xf32>, tensor<2xf32>
  %slice = tensor.extract_slice %a[0, 0] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>
  %b = arith.truncf %slice : tensor<2x2xf32> to tensor<2x2xbf16>
  return %0, %b : tensor<2x3xf32>, tensor<2x2xbf16>
}

// int64 ids are read as i32; pack then combine with unit weights returns
// each token K = 2 times.
func.func @ids(%ids: tensor<2x2xi32>) -> tensor<2x4xf32> {
  %x = arith.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]> : tensor<2x4xf32>
  %w = arith.constant dense<1.0> : tensor<2x2xf32>
  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 2 : tensor<2x4xf32>, tensor<2x2xi32>, tensor<2x2xf32>
  %y = moe.combine %rows, %perm, %w : tensor<4x4xf32>, tensor<4xi32>, tensor<2x2xf32>
  return %y : tensor<2x4xf32>
}
