// Every kind of output, chosen by --emit or by the -o extension.
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec %examples/small-e60-top2.mlir -o %t/block.mlir
// RUN: FileCheck %s --check-prefix=MLIR < %t/block.mlir
// RUN: moec %examples/small-e60-top2.mlir -o %t/block.ll
// RUN: FileCheck %s --check-prefix=LLVM < %t/block.ll
// RUN: moec %examples/small-e60-top2.mlir -o %t/block.s
// RUN: FileCheck %s --check-prefix=ASM < %t/block.s
// RUN: moec %examples/small-e60-top2.mlir -o %t/block.o
// RUN: llvm-nm %t/block.o | FileCheck %s --check-prefix=OBJ
// RUN: moec %examples/small-e60-top2.mlir -o %t/libblock.so
// RUN: llvm-nm -D %t/libblock.so | FileCheck %s --check-prefix=OBJ
// RUN: moec %examples/small-e60-top2.mlir --emit=llvm -o %t/block.txt
// RUN: FileCheck %s --check-prefix=LLVM < %t/block.txt
// A custom pipeline stops wherever it is told to.
// RUN: moec %examples/small-e60-top2.mlir --pass-pipeline='moe-expand-block' -o %t/expanded.mlir
// RUN: FileCheck %s --check-prefix=EXPANDED < %t/expanded.mlir
// No temporary files are left behind.
// RUN: ls %t | FileCheck %s --check-prefix=FILES

// MLIR: llvm.func @_mlir_ciface_moe_block(
// LLVM: define void @_mlir_ciface_moe_block(
// ASM: _mlir_ciface_moe_block:
// OBJ: T _mlir_ciface_moe_block
// EXPANDED: moe.route
// EXPANDED: moe.gmm
// FILES-NOT: tmp
