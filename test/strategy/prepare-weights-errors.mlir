// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering -moe-prepare-weights -verify-diagnostics

// A name the split would take is another function's already.
// expected-error @+1 {{moe-prepare-weights: cannot prepare the weights of @g once: @g_prepared exists already}}
func.func @g(%x: tensor<?x64xf32>, %w: tensor<2x64x32xf32>, %sizes: tensor<2xi32>) -> tensor<?x32xf32> {
  %y = moe.gmm %x, %w, %sizes : tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<2xi32>
  return %y : tensor<?x32xf32>
}
func.func private @g_prepared()
