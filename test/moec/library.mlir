// A block compiled to a shared library runs from a C++ program through the
// runtime API (examples/runtime/run_block.cpp), and computes bit for bit
// what the JIT computes on the same inputs.
// RUN: rm -rf %t && mkdir -p %t/aot %t/jit
// RUN: moec %examples/small-e60-top8.mlir -o %t/libblock.so
// RUN: run_block %t/libblock.so moe_block 77 5 %t/aot | FileCheck %s
// RUN: moec run %examples/small-e60-top8.mlir --random-inputs --seed 5 --dim 77 --output-dir %t/jit
// RUN: cmp %t/aot/out0.npy %t/jit/out0.npy
// Loading something moec did not build is refused.
// RUN: not run_block %t/aot/out0.npy 2>&1 | FileCheck %s --check-prefix=NOTLIB
// RUN: cc -shared -o %t/libother.so -x c /dev/null
// RUN: not run_block %t/libother.so 2>&1 | FileCheck %s --check-prefix=NOMANIFEST

// CHECK: entry point: moe_block(f32[?,64],f32[?,60],f32[60,64,88],f32[60,44,64],f32[64,176],f32[88,64])->(f32[?,64])
// CHECK: out0: 77x64xf32 sum
// CHECK: time:
// NOTLIB: run_block: {{.*}}out0.npy: not an ELF file ({{[0-9]+}} bytes)
// NOMANIFEST: run_block: {{.*}}libother.so: no moec_manifest: not a library built by moec
