// A block compiled to a shared library runs from a C++ program through the
// runtime API (examples/runtime/run_block.cpp), and computes bit for bit
// what the JIT computes on the same inputs: with its weights prepared once
// (Library::prepare, the library's moe_block_prepare_weights and
// moe_block_prepared; moec -o's default) and without (--prepare-weights=false).
// RUN: rm -rf %t && mkdir -p %t/aot %t/plain %t/jit
// RUN: moec %examples/small-e60-top8.mlir -o %t/libblock.so
// RUN: run_block %t/libblock.so moe_block 77 5 %t/aot | FileCheck %s
// RUN: moec %examples/small-e60-top8.mlir -o %t/libplain.so --prepare-weights=false
// RUN: run_block %t/libplain.so moe_block 77 5 %t/plain | FileCheck %s --check-prefix=PLAIN
// RUN: moec run %examples/small-e60-top8.mlir --random-inputs --seed 5 --dim 77 --output-dir %t/jit
// RUN: cmp %t/aot/out0.npy %t/jit/out0.npy
// RUN: cmp %t/plain/out0.npy %t/jit/out0.npy
// Each prepared form records its layout: the same build twice gives the
// same, other tiles another (Library::run refuses weights prepared under
// another layout: test/unit/PreparedWeightsTest.cpp).
// RUN: moec %examples/small-e60-top8.mlir -o %t/libagain.so
// RUN: moec %examples/small-e60-top8.mlir -o %t/libtiles.so --gmm-tiling=mr=2,nv=2,kc=32,nc=64,mc=4
// RUN: strings %t/libblock.so | grep -o 'layout=[0-9a-f]*' > %t/layout.block
// RUN: strings %t/libagain.so | grep -o 'layout=[0-9a-f]*' > %t/layout.again
// RUN: strings %t/libtiles.so | grep -o 'layout=[0-9a-f]*' > %t/layout.tiles
// RUN: cmp %t/layout.block %t/layout.again
// RUN: not cmp -s %t/layout.block %t/layout.tiles
// RUN: FileCheck %s --check-prefix=LAYOUT < %t/layout.block
// Loading something moec did not build is refused.
// RUN: not run_block %t/aot/out0.npy 2>&1 | FileCheck %s --check-prefix=NOTLIB
// RUN: cc -shared -o %t/libother.so -x c /dev/null
// RUN: not run_block %t/libother.so 2>&1 | FileCheck %s --check-prefix=NOMANIFEST
// So is a library whose prepared forms name functions it lacks, or say
// nothing readable.
// RUN: printf 'const char moec_manifest[] = "f(f32[2])->(f32[2])\\n";\nconst char moec_prepared_forms[] = "f prepare=f_prepare_weights prepared=f_prepared weights=0 kept=\\n";\n' > %t/lacks.c
// RUN: cc -shared -o %t/liblacks.so %t/lacks.c
// RUN: not run_block %t/liblacks.so 2>&1 | FileCheck %s --check-prefix=LACKS
// RUN: printf 'const char moec_manifest[] = "f(f32[2])->(f32[2])\\n";\nconst char moec_prepared_forms[] = "f prepare=g\\n";\n' > %t/garbled.c
// RUN: cc -shared -o %t/libgarbled.so %t/garbled.c
// RUN: not run_block %t/libgarbled.so 2>&1 | FileCheck %s --check-prefix=GARBLED

// CHECK: entry point: moe_block(f32[?,64],f32[?,60],f32[60,64,88],f32[60,44,64],f32[64,176],f32[88,64])->(f32[?,64])
// CHECK: entry point: moe_block_prepare_weights(f32[60,64,88],f32[60,44,64],f32[64,176],f32[88,64])->(
// CHECK: entry point: moe_block_prepared(f32[?,64],f32[?,60],
// CHECK: prepare: moe_block_prepare_weights in {{.*}} ms ({{.*}} MiB); the run calls moe_block_prepared
// CHECK: out0: 77x64xf32 sum
// CHECK: time:
// PLAIN: entry point: moe_block(
// PLAIN-NOT: entry point:
// PLAIN-NOT: prepare:
// PLAIN: out0: 77x64xf32 sum
// LAYOUT: {{^}}layout={{[0-9a-f]{16}$}}
// NOTLIB: run_block: {{.*}}out0.npy: not an ELF file ({{[0-9]+}} bytes)
// NOMANIFEST: run_block: {{.*}}libother.so: no moec_manifest: not a library built by moec
// LACKS: run_block: {{.*}}liblacks.so: its manifest lacks a function of the prepared form 'f prepare=f_prepare_weights prepared=f_prepared weights=0 kept='
// GARBLED: run_block: {{.*}}libgarbled.so: not a prepared form ("f prepare=... prepared=... weights=i,... kept=i,..."): 'f prepare=g'
