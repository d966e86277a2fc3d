// The AMX bf16 tiles (tdpbf16ps) reading weights packed once, across
// several column blocks (32 columns each, the last partial), a depth (96)
// padded to 128, and groups of more rows than a task takes (640 at this
// depth, as many as 1.25 MiB of packed rows hold, capped; 256 when the
// weights are packed per call): with prepared weights a task is a whole
// row block (two of 352 rows a group here, 11 row pairs, which fetch the
// next column pair's weights ahead), its rows
// packed once for all its column blocks, and each block's epilogue runs
// during the next block's depth steps. The prepared
// block's outputs are the unprepared one's (tasks column block by column
// block, a worker's rows packed again whenever its next task has others)
// bit for bit.
// REQUIRES: amx-bf16
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/DT>/bf16>/g; s/KIND/kernels = ["avx512bf16_dot", "amx_bf16"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 32, amx_min_rows = 16, dot_rows = 48/' %S/Inputs/packed-blocks.mlir > %t/amx.mlir
// RUN: moec run %t/amx.mlir --random-inputs --dim 1400 --output-dir %t/prepared | FileCheck %s
// RUN: moec run %t/amx.mlir --random-inputs --dim 1400 --prepare-weights=false --output-dir %t/plain
// RUN: cmp %t/prepared/out0.npy %t/plain/out0.npy
// RUN: cmp %t/prepared/out1.npy %t/plain/out1.npy
// Few rows for many workers (40 tokens, 8 threads: 4 whole row blocks, under
// two a worker): each row block goes into ranges of its column blocks (5
// column blocks, ranges of 2), the same outputs bit for bit.
// RUN: moec run %t/amx.mlir --random-inputs --dim 40 --threads 8 --output-dir %t/ranges
// RUN: moec run %t/amx.mlir --random-inputs --dim 40 --threads 8 --prepare-weights=false --output-dir %t/ranges-plain
// RUN: cmp %t/ranges/out0.npy %t/ranges-plain/out0.npy
// RUN: cmp %t/ranges/out1.npy %t/ranges-plain/out1.npy
// And against the dot kind alone (another summation order): close.
// RUN: sed 's/DT>/bf16>/g; s/KIND/kernels = ["avx512bf16_dot"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 32, dot_rows = 48/' %S/Inputs/packed-blocks.mlir > %t/dot.mlir
// RUN: moec run %t/dot.mlir --random-inputs --dim 1400 --output-dir %t/dot
// RUN: %python %S/npy.py compare-all %t/prepared %t/dot 0.02
// CHECK: prepare: weights packed once
// CHECK: out0: 2800x160xbf16
