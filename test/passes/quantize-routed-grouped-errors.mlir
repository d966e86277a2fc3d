// moe-quantize{mode=int8_routed} keeps the shared expert in float; after
// moe-fuse-shared-expert{mode=grouped} the shared expert is the last groups
// of the routed gmms (moe.shared_groups), which cannot be split, so it is
// refused rather than quantized with them. Found by moe-fuzz-blocks (seed
// 4, case 6): the shared expert was silently quantized. mode=int8 takes it.
// RUN: moe-opt %s -split-input-file -verify-diagnostics -moe-quantize=mode=int8_routed
// RUN: moe-opt %s -moe-quantize=mode=int8 | FileCheck %s
// CHECK: moe.gmm {{.*}} scales(

func.func @grouped(%rows: tensor<?x8xf32>, %w: tensor<3x8x8xf32>, %s: tensor<3xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{moe-quantize: mode=int8_routed keeps the shared expert in float, but moe-fuse-shared-expert{mode=grouped} made it the last 1 group(s) of this gmm; quantize with mode=int8, or fuse the shared expert with mode=matmul}}
  %h = moe.gmm %rows, %w, %s {moe.shared_groups = 1 : i64} : tensor<?x8xf32>, tensor<3x8x8xf32>, tensor<3xi32>
  return %h : tensor<?x8xf32>
}
