// The fast tgmm (weight gradients: out[g] = lhs_g^T @ rhs_g) against the
// reference loops over several of its 128-column (f32 on a host with a
// 2 MiB L2: 256-column) and 192-deep task blocks:
// blocks whose packs read inside the operands (plain loads), the last
// column and depth blocks partial (clamped loads, a depth tile cut by D),
// groups cut into chunks of equal size (161 rows: 54, 54, 53), a full
// 80-row chunk, an empty group (zeros), a short one, and one of 11 chunks
// (the lhs panels of its first 8 packed once for all column blocks, the
// last 3 again for each, into one slot). D 384 puts the last
// depth piece of a block that is inside D past D (its 2 spare lanes); N 512
// makes outputs larger than this host's L2s, which AVX2's tile stores with
// streaming stores (test/codegen/tgmm-microkernel.mlir checks when): each
// case runs on this host's kernels and on AVX2's (--target-cpu=haswell).
// glibc fills every allocation with a byte pattern (MALLOC_PERTURB_): an
// output element no task stores (the empty group's zeros) is not zero by
// chance. f32 and bf16 operands.
// RUN: rm -rf %t && mkdir -p %t
// RUN: for shape in "400 300" "384 512"; do set -- $shape; \
// RUN:   for dt in f32 bf16; do \
// RUN:     sed "s/DEPTH/$1/g; s/WIDTH/$2/g; s/ELT/$dt/g" %S/Inputs/tgmm-blocks.mlir > %t/tgmm.mlir || exit 1; \
// RUN:     moec run %t/tgmm.mlir --random-inputs --gmm-strategy=reference --output-dir %t/ref > /dev/null || exit 1; \
// RUN:     tol=1e-6; if [ $dt = bf16 ]; then tol=2e-3; fi; \
// RUN:     for cpu in "" --target-cpu=haswell; do \
// RUN:       env MALLOC_PERTURB_=165 moec run %t/tgmm.mlir $cpu --random-inputs --output-dir %t/fast > %t/log || exit 1; \
// RUN:       FileCheck %s --check-prefix=$(echo $dt | tr a-z A-Z) -DD=$1 -DN=$2 < %t/log || exit 1; \
// RUN:       %python %S/npy.py compare %t/fast/out0.npy %t/ref/out0.npy $tol || exit 1; done; done; done
// F32: out0: 5x[[D]]x[[N]]xf32
// BF16: out0: 5x[[D]]x[[N]]xbf16
