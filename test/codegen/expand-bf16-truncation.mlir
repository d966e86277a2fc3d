// RUN: moe-opt %s -moe-expand-bf16-truncation=vectors=false | FileCheck %s --check-prefixes=CHECK,KEEP
// RUN: moe-opt %s -moe-expand-bf16-truncation=vectors=true | FileCheck %s --check-prefixes=CHECK,EXPAND
// RUN: not moe-opt %s -moe-expand-bf16-truncation=vectors=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// A scalar f32 -> bf16 truncation becomes integer rounding (LLVM would
// call __truncsfbf2, which GCC 12's libgcc lacks); a vector one too where
// the CPU has no AVX512_BF16 (vectors=true; auto decides by the host), and
// stays for its native conversion otherwise. f32 -> f16 is not touched.
// CHECK-LABEL: func.func @truncations
// CHECK-SAME: (%[[S:.*]]: f32, %[[V:.*]]: vector<16xf32>)
// CHECK: arith.bitcast %[[S]] : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.bitcast {{.*}} : i16 to bf16
// KEEP: arith.truncf %[[V]] : vector<16xf32> to vector<16xbf16>
// EXPAND-NOT: arith.truncf %[[V]]
// EXPAND: arith.bitcast %[[V]] : vector<16xf32> to vector<16xi32>
// EXPAND: arith.bitcast {{.*}} : vector<16xi16> to vector<16xbf16>
// CHECK: arith.truncf %[[S]] : f32 to f16
// BAD: error: moe-expand-bf16-truncation: vectors must be auto, true or false (got 'maybe')
func.func @truncations(%s: f32, %v: vector<16xf32>) -> (bf16, vector<16xbf16>, f16) {
  %0 = arith.truncf %s : f32 to bf16
  %1 = arith.truncf %v : vector<16xf32> to vector<16xbf16>
  %2 = arith.truncf %s : f32 to f16
  return %0, %1, %2 : bf16, vector<16xbf16>, f16
}
