// Not a test: input of errors.mlir.
func.func @f(%rows: tensor<?x64xf32>, %w: tensor<6x32x128xf32>, %s: tensor<6xi32>) -> tensor<?x128xf32> {
  %0 = moe.gmm %rows, %w, %s : tensor<?x64xf32>, tensor<6x32x128xf32>, tensor<6xi32>
  return %0 : tensor<?x128xf32>
}
