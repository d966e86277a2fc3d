// moec run packs the gmm weights once (@moe_block_prepare_weights) and runs
// @moe_block_prepared; the outputs are the unprepared block's bit for bit,
// for the bf16 pairs (two-gmm and fused SwiGLU, interleaved GPT-OSS
// columns with biases, a shared expert) and the f32 FMA panels, under each
// strategy. --prepare-weights=false runs @moe_block itself.
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/xf32>/xbf16>/g' %moe_src_root/examples/small-e60-top2.mlir > %t/two-gmms-bf16.mlir
// RUN: sed 's/xf32>/xbf16>/g' %moe_src_root/examples/family-gpt-oss-small.mlir > %t/gpt-oss-bf16.mlir
// RUN: cp %moe_src_root/examples/small-e64-shared-fused.mlir %moe_src_root/examples/small-e60-top8.mlir %t/
// RUN: for f in two-gmms-bf16 gpt-oss-bf16 small-e64-shared-fused small-e60-top8; do for s in microkernel microkernel-fma; do \
// RUN:   moec run %t/$f.mlir --gmm-strategy $s --random-inputs --dim 77 --output-dir %t/$f-$s-prepared > %t/$f-$s.log || exit 1; \
// RUN:   moec run %t/$f.mlir --gmm-strategy $s --random-inputs --dim 77 --prepare-weights=false --output-dir %t/$f-$s-plain > %t/$f-$s-plain.log || exit 1; \
// RUN:   cmp %t/$f-$s-prepared/out0.npy %t/$f-$s-plain/out0.npy || exit 1; done; done
// The FMA kind's one-vector tile on every host (AVX2's default): GPT-OSS's
// interleaved pairs and biases, the two-gmm SwiGLU, f32 and bf16.
// RUN: cp %moe_src_root/examples/family-gpt-oss-small.mlir %t/gpt-oss-f32.mlir
// RUN: for f in gpt-oss-f32 gpt-oss-bf16 two-gmms-bf16 small-e60-top2; do \
// RUN:   test -f %t/$f.mlir || cp %moe_src_root/examples/$f.mlir %t/ || exit 1; \
// RUN:   moec run %t/$f.mlir --gmm-tiling mr=6,nv=1,kc=32,nc=48,mc=12 --random-inputs --dim 77 --output-dir %t/$f-split-prepared > /dev/null || exit 1; \
// RUN:   moec run %t/$f.mlir --gmm-tiling mr=6,nv=1,kc=32,nc=48,mc=12 --random-inputs --dim 77 --prepare-weights=false --output-dir %t/$f-split-plain > /dev/null || exit 1; \
// RUN:   cmp %t/$f-split-prepared/out0.npy %t/$f-split-plain/out0.npy || exit 1; done
// RUN: cat %t/two-gmms-bf16-microkernel.log | FileCheck %s
// RUN: cat %t/two-gmms-bf16-microkernel-plain.log | FileCheck %s --check-prefix=PLAIN
// CHECK: prepare: weights packed once for the kernels in {{.*}} ms ({{.*}} MiB), @moe_block_prepare_weights; the runs call @moe_block_prepared
// CHECK: out0: 77x64xbf16
// PLAIN-NOT: prepare:
// PLAIN: out0: 77x64xbf16

// The reference loops read no packed layout: nothing is prepared.
// RUN: moec run %t/small-e60-top8.mlir --gmm-strategy reference --random-inputs --dim 5 | FileCheck %s --check-prefix=REF
// REF-NOT: prepare:
// REF: out0: 5x64xf32
