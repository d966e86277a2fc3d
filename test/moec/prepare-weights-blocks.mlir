// Weights packed once across several column blocks (the last partial) and
// depth blocks: the prepared block's outputs are the unprepared one's bit
// for bit: FMA panels, f32 and bf16.
// RUN: rm -rf %t && mkdir -p %t
// Two panels a row (nr 32) and one split vector (AVX2's default SwiGLU
// tile: 8 gate and 8 up columns, gate_up_unit 16), forced here on every
// host; 37 tokens (most tasks of several register tiles: prepared f32
// panels read in place, bf16 ones widened into the worker's block; the
// groups' last row blocks of one tile) and 1 (two rows, one an expert: every
// task one tile, the panels read in the tile, fetched ahead).
// RUN: for tile in "mr = 2, nv = 2, kc = 32, nc = 64, mc = 4" "mr = 6, nv = 1, kc = 32, nc = 48, mc = 12"; do \
// RUN:   for dt in f32 bf16; do \
// RUN:     sed "s/DT>/$dt>/g; s/KIND/kernels = [\"fma\"], $tile/" %S/Inputs/packed-blocks.mlir > %t/fma.mlir || exit 1; \
// RUN:     for dim in 37 1; do \
// RUN:       moec run %t/fma.mlir --random-inputs --dim $dim --output-dir %t/prepared > %t/log || exit 1; \
// RUN:       FileCheck %s --check-prefix=$(echo $dt | tr a-z A-Z) < %t/log || exit 1; \
// RUN:       moec run %t/fma.mlir --random-inputs --dim $dim --prepare-weights=false --output-dir %t/plain > /dev/null || exit 1; \
// RUN:       cmp %t/prepared/out0.npy %t/plain/out0.npy || exit 1; \
// RUN:       cmp %t/prepared/out1.npy %t/plain/out1.npy || exit 1; done; done; done
// F32: prepare: weights packed once
// F32: out0: {{[0-9]+}}x160xf32
// BF16: prepare: weights packed once
// BF16: out0: {{[0-9]+}}x160xbf16
