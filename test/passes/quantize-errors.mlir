// moe-quantize's refusals, each with a message.
// RUN: not moe-opt %s -moe-quantize=mode=int4 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not moe-opt %s -moe-quantize=weight-scales=row 2>&1 | FileCheck %s --check-prefix=SCALES
// RUN: moe-opt %s -split-input-file -verify-diagnostics -moe-quantize

// The options are enums (passes/Choices.h): a wrong value is named with the
// accepted ones before the pass runs.
// MODE: moe-opt: for the --mode option: must be int8, int8_routed or fake_int8 (got 'int4')
// SCALES: moe-opt: for the --weight-scales option: must be expert or channel (got 'row')

func.func @f(%rows: tensor<?x8xf32>, %w: tensor<2x8x8xf32>, %s: tensor<2xi32>) -> tensor<?x8xf32> {
  %h = moe.gmm %rows, %w, %s : tensor<?x8xf32>, tensor<2x8x8xf32>, tensor<2xi32>
  return %h : tensor<?x8xf32>
}

// -----

// The split's names are taken.
// expected-error @+1 {{moe-quantize: cannot prepare the weights of @g once: @g_prepared exists already}}
func.func @g(%rows: tensor<?x8xf32>, %w: tensor<2x8x8xf32>, %s: tensor<2xi32>) -> tensor<?x8xf32> {
  %h = moe.gmm %rows, %w, %s : tensor<?x8xf32>, tensor<2x8x8xf32>, tensor<2xi32>
  return %h : tensor<?x8xf32>
}
func.func private @g_prepared()

// -----

// One shard's program.
shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
// expected-error @+1 {{moe-quantize: @shard is one shard's program (moe-partition); int8 on a mesh is not supported yet: quantize a single-device block}}
func.func @shard(%rows: tensor<?x8xf32>, %w: tensor<2x8x8xf32>, %s: tensor<2xi32>) -> tensor<?x8xf32> attributes {moe.mesh = @mesh} {
  %h = moe.gmm %rows, %w, %s : tensor<?x8xf32>, tensor<2x8x8xf32>, tensor<2xi32>
  return %h : tensor<?x8xf32>
}

// -----

// Weights packed for the float kernels: quantizing would drop them.
func.func @packed(%x: tensor<?x64xf32>, %w: tensor<2x64x40xf32>, %p: tensor<2x1x64x64xf32>, %s: tensor<2xi32>) -> tensor<?x40xf32> {
  // expected-error @+1 {{moe-quantize: this gmm reads weights moe-prepare-weights packed; quantize the block before preparing its weights}}
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x1x64x64xf32>) : tensor<?x64xf32>, tensor<2x64x40xf32>, tensor<2xi32>
  return %y : tensor<?x40xf32>
}
