// Parallel loops run on libomp; splitting rows, tokens and groups over
// threads changes no summation order, so any thread count gives the same bits.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec %examples/small-e60-top8.mlir -o %t/block.ll
// RUN: FileCheck %s --check-prefix=IR < %t/block.ll
// RUN: moec %examples/small-e60-top8.mlir -o %t/libblock.so
// RUN: llvm-readelf -d %t/libblock.so | FileCheck %s --check-prefix=NEEDED
// RUN: moec run %examples/small-e60-top8.mlir --random-inputs --seed 3 --dim 300 --threads 1 --output-dir %t/one
// RUN: moec run %examples/small-e60-top8.mlir --random-inputs --seed 3 --dim 300 --threads 2 --output-dir %t/two
// RUN: cmp %t/one/out0.npy %t/two/out0.npy

// IR: call void {{.*}}@__kmpc_fork_call(
// NEEDED: (NEEDED) Shared library: [libomp.so.5]
