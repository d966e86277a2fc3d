// Weights packed once across several column blocks (the last partial) and
// depth blocks: the prepared block's outputs are the unprepared one's bit
// for bit, FMA panels everywhere, AVX512_BF16 pairs where the host has them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/DT>/f32>/g; s/KIND/kernels = ["fma"], mr = 2, nv = 2, kc = 32, nc = 64, mc = 4/' %S/Inputs/packed-blocks.mlir > %t/fma.mlir
// RUN: moec run %t/fma.mlir --random-inputs --dim 37 --output-dir %t/fma-prepared | FileCheck %s
// RUN: moec run %t/fma.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/fma-plain
// RUN: cmp %t/fma-prepared/out0.npy %t/fma-plain/out0.npy
// RUN: cmp %t/fma-prepared/out1.npy %t/fma-plain/out1.npy
// CHECK: prepare: weights packed once
// CHECK: out0: 74x160xf32
