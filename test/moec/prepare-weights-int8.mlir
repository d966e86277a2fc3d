// int8 weights quantized and packed once: moe-prepare-weights puts the
// int8 quads (W + 128, depth padded to 64s) the VNNI kind reads into the
// prepare function beside the quantization, across several column blocks
// (the last partial) and a padded depth, and for blocks moe-quantize split
// already (two-gmm and fused SwiGLU, GPT-OSS's interleaved columns with
// biases, a shared expert; per-channel and per-expert scales). The
// prepared block's outputs are the unprepared one's bit for bit (integer
// sums, the same epilogue).
// REQUIRES: avx512vnni
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/KIND/kernels = ["int8_vnni"], mr = 6, nv = 4, kc = 64, nc = 64, mc = 60, packed_columns = 32/' %S/Inputs/packed-blocks-int8.mlir > %t/blocks.mlir
// RUN: moec run %t/blocks.mlir --random-inputs --dim 37 --output-dir %t/blocks-prepared | FileCheck %s --check-prefix=BLOCKS
// RUN: moec run %t/blocks.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/blocks-plain
// RUN: cmp %t/blocks-prepared/out0.npy %t/blocks-plain/out0.npy
// RUN: cmp %t/blocks-prepared/out1.npy %t/blocks-plain/out1.npy
// BLOCKS: prepare: weights quantized and packed once for the kernels in {{.*}} ms ({{.*}} MiB), @blocks_prepare_weights; the runs call @blocks_prepared
// BLOCKS: out0: 74x100xf32

// RUN: moe-opt %moe_src_root/examples/small-e60-top2.mlir -moe-quantize > %t/two-gmms.mlir
// RUN: sed 's/xf32>/xbf16>/g' %moe_src_root/examples/family-gpt-oss-small.mlir | moe-opt -moe-quantize=weight-scales=expert > %t/gpt-oss-bf16.mlir
// RUN: moe-opt %moe_src_root/examples/small-e64-shared-fused.mlir -moe-quantize > %t/shared-fused.mlir
// RUN: for f in two-gmms gpt-oss-bf16 shared-fused; do \
// RUN:   moec run %t/$f.mlir --random-inputs --dim 77 --output-dir %t/$f-prepared > %t/$f.log || exit 1; \
// RUN:   moec run %t/$f.mlir --random-inputs --dim 77 --prepare-weights=false --output-dir %t/$f-plain > %t/$f-plain.log || exit 1; \
// RUN:   cmp %t/$f-prepared/out0.npy %t/$f-plain/out0.npy || exit 1; done
// Every block's prepared run packed (a comparison of two unpacked runs
// would pass too).
// RUN: cat %t/gpt-oss-bf16.log | FileCheck %s --check-prefix=PACKED
// RUN: cat %t/shared-fused.log | FileCheck %s --check-prefix=PACKED
// PACKED: prepare: weights quantized and packed once for the kernels
// RUN: cat %t/two-gmms.log | FileCheck %s
// RUN: cat %t/two-gmms-plain.log | FileCheck %s --check-prefix=PLAIN
// CHECK: prepare: weights quantized and packed once for the kernels in {{.*}} ms ({{.*}} MiB), @moe_block_prepare_weights; the runs call @moe_block_prepared
// CHECK: out0: 77x64xf32
// PLAIN-NOT: prepare:
// PLAIN: out0: 77x64xf32
