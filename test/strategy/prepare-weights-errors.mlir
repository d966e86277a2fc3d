// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights -verify-diagnostics
// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights 2>/dev/null | FileCheck %s
// CHECK-NOT: @g_prepare_weights

// A name the split would take is another function's already: @g stays as
// it is, with a warning.
// expected-warning @+1 {{moe-prepare-weights: @g keeps packing its weights per call: @g_prepared is another function's name}}
func.func @g(%x: tensor<?x64xf32>, %w: tensor<2x64x32xf32>, %sizes: tensor<2xi32>) -> tensor<?x32xf32> {
  %y = moe.gmm %x, %w, %sizes : tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<2xi32>
  return %y : tensor<?x32xf32>
}
func.func private @g_prepared()
