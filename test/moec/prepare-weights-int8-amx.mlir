// The AMX int8 tiles (tdpbsud) reading int8 weights quantized and packed
// once, across several column blocks (the last partial) and a depth (100)
// padded to 128: the prepared block's outputs are the unprepared one's bit
// for bit. (test/moec/prepare-weights-int8.mlir: the VNNI kind.)
// REQUIRES: amx-int8
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/KIND/kernels = ["int8_vnni", "amx_int8"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 32, amx_min_rows = 1/' %S/Inputs/packed-blocks-int8.mlir > %t/blocks.mlir
// RUN: moec run %t/blocks.mlir --random-inputs --dim 37 --output-dir %t/prepared | FileCheck %s
// RUN: moec run %t/blocks.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/plain
// RUN: cmp %t/prepared/out0.npy %t/plain/out0.npy
// RUN: cmp %t/prepared/out1.npy %t/plain/out1.npy
// Groups larger than a prepared task's row block (640 rows at this depth;
// 256 with weights quantized per call): the same outputs bit for bit.
// RUN: moec run %t/blocks.mlir --random-inputs --dim 1400 --output-dir %t/large > /dev/null
// RUN: moec run %t/blocks.mlir --random-inputs --dim 1400 --prepare-weights=false --output-dir %t/large-plain > /dev/null
// RUN: cmp %t/large/out0.npy %t/large-plain/out0.npy
// RUN: cmp %t/large/out1.npy %t/large-plain/out1.npy
// CHECK: prepare: weights quantized and packed once for the kernels in {{.*}} ms ({{.*}} MiB), @blocks_prepare_weights; the runs call @blocks_prepared
// CHECK: out0: 74x100xf32
