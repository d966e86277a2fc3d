// Not a test: input of errors.mlir.
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
