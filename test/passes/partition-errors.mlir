// RUN: moe-opt %s -split-input-file -verify-diagnostics -moe-partition="mesh=expert=3"

func.func @uneven_experts(%x: tensor<64x16xf32>, %l: tensor<64x8xf32>, %w13: tensor<8x16x24xf32>,
                          %w2: tensor<8x12x16xf32>) -> tensor<64x16xf32> {
  // expected-error @+1 {{moe-partition: 8 experts do not split evenly over expert=3}}
  %y = moe.block %x logits(%l : tensor<64x8xf32>) gate_up(%w13 : tensor<8x16x24xf32>)
         down(%w2 : tensor<8x12x16xf32>) top 2 : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// expected-error @+1 {{moe-partition: 'two' must hold exactly one moe.block (it has 2)}}
func.func @two(%x: tensor<64x16xf32>, %l: tensor<64x6xf32>, %w13: tensor<6x16x24xf32>,
               %w2: tensor<6x12x16xf32>) -> tensor<64x16xf32> {
  %y = moe.block %x logits(%l : tensor<64x6xf32>) gate_up(%w13 : tensor<6x16x24xf32>)
         down(%w2 : tensor<6x12x16xf32>) top 2 : tensor<64x16xf32>
  %z = moe.block %y logits(%l : tensor<64x6xf32>) gate_up(%w13 : tensor<6x16x24xf32>)
         down(%w2 : tensor<6x12x16xf32>) top 2 : tensor<64x16xf32>
  return %z : tensor<64x16xf32>
}

// -----

func.func @computed_operand(%x: tensor<64x16xf32>, %l: tensor<64x6xf32>, %w13: tensor<6x16x24xf32>,
                            %w2: tensor<6x12x16xf32>) -> tensor<64x16xf32> {
  %x2 = arith.addf %x, %x : tensor<64x16xf32>
  // expected-error @+1 {{moe-partition: every operand of the block must be an argument of its function}}
  %y = moe.block %x2 logits(%l : tensor<64x6xf32>) gate_up(%w13 : tensor<6x16x24xf32>)
         down(%w2 : tensor<6x12x16xf32>) top 2 : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

shard.grid @mesh(shape = 2) {moe.axes = ["expert"]}
// expected-error @-1 {{moe-partition: grid @mesh is expert=2, not the mesh expert=3}}
func.func @grid_clash(%x: tensor<64x16xf32>, %l: tensor<64x6xf32>, %w13: tensor<6x16x24xf32>,
                      %w2: tensor<6x12x16xf32>) -> tensor<64x16xf32> {
  %y = moe.block %x logits(%l : tensor<64x6xf32>) gate_up(%w13 : tensor<6x16x24xf32>)
         down(%w2 : tensor<6x12x16xf32>) top 2 : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

shard.grid @mesh(shape = 3) {moe.axes = ["data"]}
// expected-error @-1 {{moe-partition: grid @mesh is data=3, not the mesh expert=3}}
func.func @grid_names_clash(%x: tensor<64x16xf32>, %l: tensor<64x6xf32>, %w13: tensor<6x16x24xf32>,
                            %w2: tensor<6x12x16xf32>) -> tensor<64x16xf32> {
  %y = moe.block %x logits(%l : tensor<64x6xf32>) gate_up(%w13 : tensor<6x16x24xf32>)
         down(%w2 : tensor<6x12x16xf32>) top 2 : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}
