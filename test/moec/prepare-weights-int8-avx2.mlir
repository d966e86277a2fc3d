// The AVX2 int8 kind (int8_avx2: vpmaddwd on the quads the VNNI kind reads)
// on blocks whose weights span several column blocks, the last partial, a
// depth the quads pad (100 -> 128), 37 tokens' 74 rows over 4 experts
// (register tiles of 2, a group's last one short when its rows are odd),
// gathered rows and SwiGLU: prepared (quads packed once) and
// plain (packed per task) give the same outputs bit for bit, and both are
// the exact i32 vector kind's (int8_vector) bit for bit: every int8 kind
// sums exactly and shares the epilogue.
// REQUIRES: avx2
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/KIND/kernels = ["int8_avx2"], mr = 6, nv = 1, kc = 64, nc = 64, mc = 60, packed_columns = 32/' %S/Inputs/packed-blocks-int8.mlir > %t/avx2.mlir
// RUN: sed 's/KIND/kernels = ["int8_vector"], mr = 6, nv = 1, kc = 64, nc = 64, mc = 60, packed_columns = 32/' %S/Inputs/packed-blocks-int8.mlir > %t/vector.mlir
// RUN: moec run %t/avx2.mlir --random-inputs --dim 37 --output-dir %t/prepared | FileCheck %s
// RUN: moec run %t/avx2.mlir --random-inputs --dim 37 --prepare-weights=false --output-dir %t/plain | FileCheck %s --check-prefix=PLAIN
// RUN: moec run %t/vector.mlir --random-inputs --dim 37 --output-dir %t/vector
// RUN: for o in out0 out1; do cmp %t/prepared/$o.npy %t/plain/$o.npy && cmp %t/prepared/$o.npy %t/vector/$o.npy || exit 1; done
// CHECK: prepare: weights quantized and packed once for the kernels in {{.*}} ms ({{.*}} MiB), @blocks_prepare_weights; the runs call @blocks_prepared
// CHECK: out0: 74x100xf32
// PLAIN-NOT: prepare:
// PLAIN: out0: 74x100xf32

// Blocks moe-quantize made from the examples (two gmms; GPT-OSS's
// interleaved gate/up columns with biases, bf16; a fused SwiGLU with a
// shared expert), compiled for Haswell (AVX2 without VNNI, on any host
// that runs this test): prepared, plain and the i32 vector kind alike.
// RUN: moe-opt %moe_src_root/examples/small-e60-top2.mlir -moe-quantize > %t/two-gmms.mlir
// RUN: sed 's/xf32>/xbf16>/g' %moe_src_root/examples/family-gpt-oss-small.mlir | moe-opt -moe-quantize=weight-scales=expert > %t/gpt-oss-bf16.mlir
// RUN: moe-opt %moe_src_root/examples/small-e64-shared-fused.mlir -moe-quantize > %t/shared-fused.mlir
// RUN: for f in two-gmms gpt-oss-bf16 shared-fused; do \
// RUN:   moec run %t/$f.mlir --target-cpu=haswell --random-inputs --dim 77 --output-dir %t/$f-prepared > %t/$f.log || exit 1; \
// RUN:   moec run %t/$f.mlir --target-cpu=haswell --entry moe_block --random-inputs --dim 77 --prepare-weights=false --output-dir %t/$f-plain || exit 1; \
// RUN:   moec run %t/$f.mlir --target-cpu=haswell --gmm-strategy=microkernel-fma --entry moe_block --random-inputs --dim 77 --output-dir %t/$f-vector || exit 1; \
// RUN:   cmp %t/$f-prepared/out0.npy %t/$f-plain/out0.npy && cmp %t/$f-prepared/out0.npy %t/$f-vector/out0.npy || exit 1; done
// Each prepared run packed the quads (a comparison of unpacked runs would
// pass too).
// RUN: cat %t/two-gmms.log %t/gpt-oss-bf16.log %t/shared-fused.log | FileCheck %s --check-prefix=PACKED
// PACKED-COUNT-3: prepare: weights quantized and packed once for the kernels

// The lowered kernel multiplies with vpmaddwd (the intrinsic: 4 calls a
// row and depth step, two tiles a column pair, in a 2-row tile and a
// 1-row one for an odd count: 24 calls a gmm, 3 lowered gmms: the
// two-input SwiGLU's gate and up gmms are one) on quads widened with zero
// extension, and LLVM selects the instruction for an AVX2 target.
// RUN: moe-opt %t/avx2.mlir -moe-attach-target=cpu=haswell -moe-lower-to-loops | FileCheck %s --check-prefix=LOOPS
// LOOPS: func.func private @llvm.x86.avx2.pmadd.wd(vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// LOOPS: arith.extui {{.*}} : vector<16xi8> to vector<16xi16>
// LOOPS-COUNT-72: call @llvm.x86.avx2.pmadd.wd
// LOOPS-NOT: call @llvm.x86.avx2.pmadd.wd
// RUN: moec %t/avx2.mlir --target-cpu=haswell --emit=asm -o %t/avx2.s
// RUN: FileCheck %s --check-prefix=ASM < %t/avx2.s
// ASM: vpmaddwd
