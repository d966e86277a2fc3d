// Not a test: input of errors.mlir.
shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // A per-shard program with no placement (no moe.mesh): it compiles,
  // but runs only bound to a mesh.
  %0 = moe.psum %x over @mesh ["expert"] : tensor<8xf32>
  return %0 : tensor<8xf32>
}
