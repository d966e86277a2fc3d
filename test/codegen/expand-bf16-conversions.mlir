// RUN: moe-opt %s -moe-expand-bf16-conversions=vectors=false | FileCheck %s --check-prefixes=CHECK,KEEP
// RUN: moe-opt %s -moe-expand-bf16-conversions=vectors=true | FileCheck %s --check-prefixes=CHECK,EXPAND
// RUN: not moe-opt %s -moe-expand-bf16-conversions=vectors=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// A scalar f32 -> bf16 truncation becomes integer rounding (LLVM would
// call __truncsfbf2, which GCC 12's libgcc lacks); a vector one too where
// the CPU has no AVX512_BF16 (vectors=true; auto decides by the host), and
// stays for its native conversion otherwise. f32 -> f16 is not touched.
// The NaN case selects 32-bit values before the narrowing: no select on
// the 16-bit results, which LLVM would move onto bf16 vectors and the x86
// backend split a lane at a time (bf16-rounding.mlir runs the rounding).
// CHECK-LABEL: func.func @truncations
// CHECK-SAME: (%[[S:.*]]: f32, %[[V:.*]]: vector<16xf32>)
// CHECK: arith.bitcast %[[S]] : f32 to i32
// CHECK: arith.cmpf uno, %[[S]], %[[S]] : f32
// CHECK: arith.shrui
// CHECK: arith.select {{.*}} : i32
// CHECK: arith.select {{.*}} : i32
// CHECK-NOT: arith.select
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK-NEXT: arith.bitcast {{.*}} : i16 to bf16
// KEEP: arith.truncf %[[V]] : vector<16xf32> to vector<16xbf16>
// EXPAND-NOT: arith.truncf %[[V]]
// EXPAND: arith.bitcast %[[V]] : vector<16xf32> to vector<16xi32>
// EXPAND: arith.select {{.*}} : vector<16xi1>, vector<16xi32>
// EXPAND: arith.select {{.*}} : vector<16xi1>, vector<16xi32>
// EXPAND-NOT: arith.select
// EXPAND: arith.trunci {{.*}} : vector<16xi32> to vector<16xi16>
// EXPAND-NEXT: arith.bitcast {{.*}} : vector<16xi16> to vector<16xbf16>
// CHECK: arith.truncf %[[S]] : f32 to f16
// BAD: error: moe-expand-bf16-conversions: vectors must be auto, true or false (got 'maybe')
func.func @truncations(%s: f32, %v: vector<16xf32>) -> (bf16, vector<16xbf16>, f16) {
  %0 = arith.truncf %s : f32 to bf16
  %1 = arith.truncf %v : vector<16xf32> to vector<16xbf16>
  %2 = arith.truncf %s : f32 to f16
  return %0, %1, %2 : bf16, vector<16xbf16>, f16
}

// A vector bf16 -> f32 widening becomes a zero-extension and a 16-bit shift
// whatever the CPU (LLVM would split it into scalar code); a scalar one and
// f16's stay.
// CHECK-LABEL: func.func @widenings
// CHECK-SAME: (%[[S:.*]]: bf16, %[[V:.*]]: vector<16xbf16>, %[[H:.*]]: vector<8xf16>)
// CHECK: arith.extf %[[S]] : bf16 to f32
// CHECK-NOT: arith.extf %[[V]]
// CHECK: arith.bitcast %[[V]] : vector<16xbf16> to vector<16xi16>
// CHECK: arith.extui {{.*}} : vector<16xi16> to vector<16xi32>
// CHECK: arith.shli
// CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.extf %[[H]] : vector<8xf16> to vector<8xf32>
func.func @widenings(%s: bf16, %v: vector<16xbf16>, %h: vector<8xf16>) -> (f32, vector<16xf32>, vector<8xf32>) {
  %0 = arith.extf %s : bf16 to f32
  %1 = arith.extf %v : vector<16xbf16> to vector<16xf32>
  %2 = arith.extf %h : vector<8xf16> to vector<8xf32>
  return %0, %1, %2 : f32, vector<16xf32>, vector<8xf32>
}
