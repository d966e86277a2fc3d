// Weights packed once across several column blocks (the last partial) and
// depth blocks: the prepared block's outputs are the unprepared one's bit
// for bit, FMA panels everywhere, AVX512_BF16 pairs where the host has them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/DT>/f32>/g; s/KIND/kernels = ["fma"], mr = 2, nv = 2, kc = 32, nc = 64, mc = 4/' %S/Inputs/packed-blocks.mlir > %t/fma.mlir
// RUN: moec run %t/fma.mlir --random-inputs --dim 37 --output-dir %t/fma-prepared | FileCheck %s
// RUN: moec run %t/fma.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/fma-plain
// RUN: cmp %t/fma-prepared/out0.npy %t/fma-plain/out0.npy
// RUN: cmp %t/fma-prepared/out1.npy %t/fma-plain/out1.npy
// The one-vector tile (AVX2's default, forced here on every host): a SwiGLU
// panel's vector is 8 gate and 8 up columns (gate_up_unit 16), f32 and bf16.
// RUN: for dt in f32 bf16; do \
// RUN:   sed "s/DT>/$dt>/g; s/KIND/kernels = [\"fma\"], mr = 6, nv = 1, kc = 32, nc = 48, mc = 12/" %S/Inputs/packed-blocks.mlir > %t/split-$dt.mlir || exit 1; \
// RUN:   moec run %t/split-$dt.mlir --random-inputs --dim 37 --output-dir %t/split-$dt-prepared | FileCheck %s --check-prefix=SPLIT || exit 1; \
// RUN:   moec run %t/split-$dt.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/split-$dt-plain > /dev/null || exit 1; \
// RUN:   cmp %t/split-$dt-prepared/out0.npy %t/split-$dt-plain/out0.npy || exit 1; \
// RUN:   cmp %t/split-$dt-prepared/out1.npy %t/split-$dt-plain/out1.npy || exit 1; done
// SPLIT: prepare: weights packed once
// CHECK: prepare: weights packed once
// CHECK: out0: 74x160xf32
