// Bad meshes and dispatches, and what a token count that does not split does.
// RUN: not moe-opt %s -moe-partition="mesh=data=2,pipeline=2" 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not moe-opt %s -moe-partition="mesh=data=0" 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not moe-opt %s -moe-partition="mesh=expert=2,expert=2" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not moe-opt %s -moe-partition="mesh=model=2" 2>&1 | FileCheck %s --check-prefix=MODEL
// RUN: not moe-opt %s -moe-partition="mesh=expert=2 ep-dispatch=scatter" 2>&1 | FileCheck %s --check-prefix=DISPATCH
// RUN: not moe-opt %s -moe-partition="mesh=expert=2 ep-dispatch=dense capacity-factor=1.5" 2>&1 | FileCheck %s --check-prefix=DENSECAP
// RUN: not moe-opt %s -moe-partition="mesh=data=3" 2>&1 | FileCheck %s --check-prefix=TOKENS
// RUN: not moe-opt %s -moe-partition 2>&1 | FileCheck %s --check-prefix=NOMESH
// RUN: not moe-opt %s -moe-partition="mesh=expert=2 ep-dispatch=a2a functions=dynamic" 2>&1 | FileCheck %s --check-prefix=A2ADYN

// AXIS: error: moe-partition: mesh 'data=2,pipeline=2': unknown mesh axis 'pipeline' (axes: data, expert, model)
// SIZE: error: moe-partition: mesh 'data=0': mesh axis 'data' needs a size >= 1 (got '0')
// TWICE: error: moe-partition: mesh 'expert=2,expert=2': mesh axis 'expert' given twice
// MODEL: error: moe-partition: the mesh model=2 splits the model axis; tensor (model) parallelism is not partitioned yet (give model=1)
// DISPATCH: moe-opt: for the --ep-dispatch option: must be dense, compact, ring or a2a (got 'scatter')
// DENSECAP: error: moe-partition: ep-dispatch=dense computes every row; a capacity factor applies to compact, ring and a2a
// TOKENS: error: moe-partition: the token count (64) does not split evenly over 3 shards
// NOMESH: error: moe-partition: give the mesh (mesh=data=2,expert=2) or declare exactly one shard.grid with moe.axes
// A2ADYN: error: moe-partition: ep-dispatch=a2a needs a static token count (its receive buffers are sized at compile time)

func.func @block(%x: tensor<64x16xf32>, %l: tensor<64x8xf32>, %w13: tensor<8x16x24xf32>,
                 %w2: tensor<8x12x16xf32>) -> tensor<64x16xf32> {
  %y = moe.block %x logits(%l : tensor<64x8xf32>) gate_up(%w13 : tensor<8x16x24xf32>)
         down(%w2 : tensor<8x12x16xf32>) top 2 : tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

func.func @dynamic(%x: tensor<?x16xf32>, %l: tensor<?x8xf32>, %w13: tensor<8x16x24xf32>,
                   %w2: tensor<8x12x16xf32>) -> tensor<?x16xf32> {
  %y = moe.block %x logits(%l : tensor<?x8xf32>) gate_up(%w13 : tensor<8x16x24xf32>)
         down(%w2 : tensor<8x12x16xf32>) top 2 : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
