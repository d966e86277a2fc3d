// The bf16 pairs of the AVX512_BF16 dot kind over several column blocks
// (32 columns each, the last partial) and a depth padded to 32: the
// prepared block's outputs are the unprepared one's bit for bit.
// REQUIRES: avx512bf16
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/DT>/bf16>/g; s/KIND/kernels = ["avx512bf16_dot"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 32, dot_rows = 48/' %S/Inputs/packed-blocks.mlir > %t/dot.mlir
// RUN: moec run %t/dot.mlir --random-inputs --dim 37 --output-dir %t/dot-prepared | FileCheck %s
// RUN: moec run %t/dot.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/dot-plain
// RUN: cmp %t/dot-prepared/out0.npy %t/dot-plain/out0.npy
// RUN: cmp %t/dot-prepared/out1.npy %t/dot-plain/out1.npy
// Row blocks of 6 rows (dot_rows 6; about 18 rows an expert): a task runs
// a weight block's row blocks one after another (runsRowBlocksTogether),
// on one thread or two, bit for bit the unprepared block's.
// RUN: sed 's/DT>/bf16>/g; s/KIND/kernels = ["avx512bf16_dot"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 32, dot_rows = 6/' %S/Inputs/packed-blocks.mlir > %t/rows.mlir
// RUN: moec run %t/rows.mlir --random-inputs --dim 37 --threads 2 --output-dir %t/rows-2 | FileCheck %s
// RUN: moec run %t/rows.mlir --random-inputs --dim 37 --threads 1 --output-dir %t/rows-1 | FileCheck %s
// RUN: cmp %t/rows-2/out0.npy %t/dot-plain/out0.npy
// RUN: cmp %t/rows-2/out1.npy %t/dot-plain/out1.npy
// RUN: cmp %t/rows-1/out0.npy %t/dot-plain/out0.npy
// RUN: cmp %t/rows-1/out1.npy %t/dot-plain/out1.npy
// CHECK: prepare: weights packed once
// CHECK: out0: 74x160xbf16
