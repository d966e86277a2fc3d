// A mesh that does not fit the block: one message naming the mesh and
// what does not divide or is not supported, at the block where there is
// one, a non-zero exit. More of moe-partition's own refusals:
// test/passes/partition-errors.mlir.
// RUN: rm -rf %t && split-file %s %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump"

// The mesh option itself.
// RUN: not moec run %t/block.mlir --random-inputs --mesh expert=0 2>&1 | FileCheck %s --check-prefix=ZERO %{nocrash}
// ZERO: moec: error: --mesh 'expert=0': mesh axis 'expert' needs a size >= 1 (got '0')
// RUN: not moec run %t/block.mlir --random-inputs --mesh expert= 2>&1 | FileCheck %s --check-prefix=EMPTY %{nocrash}
// EMPTY: moec: error: --mesh 'expert=': mesh axis 'expert' needs a size >= 1 (got '')
// RUN: not moec run %t/block.mlir --random-inputs --mesh tensor=2 2>&1 | FileCheck %s --check-prefix=AXIS %{nocrash}
// AXIS: moec: error: --mesh 'tensor=2': unknown mesh axis 'tensor' (axes: data, expert, model)
// RUN: not moec run %t/block.mlir --random-inputs --mesh expert=2,expert=2 2>&1 | FileCheck %s --check-prefix=TWICE %{nocrash}
// TWICE: moec: error: --mesh 'expert=2,expert=2': mesh axis 'expert' given twice

// Shapes the mesh does not divide: experts, static tokens, and dynamic
// tokens (known only when the inputs are, so refused when they are cut).
// RUN: not moec run %t/block.mlir --random-inputs --mesh expert=3 2>&1 | FileCheck %s --check-prefix=EXPERTS %{nocrash}
// EXPERTS: block.mlir:4:8: error: moe-partition: 4 experts do not split evenly over expert=3
// RUN: not moec %t/block.mlir -o %t/x.o --mesh data=3 2>&1 | FileCheck %s --check-prefix=TOKENS %{nocrash}
// TOKENS: block.mlir:4:8: error: moe-partition: the token count (16) does not split evenly over 3 shards
// RUN: not moec run %t/dynamic.mlir --random-inputs --dim 9 --mesh data=2 2>&1 | FileCheck %s --check-prefix=DYNAMIC %{nocrash} --implicit-check-not=time:
// DYNAMIC: moec: error: argument 0: dimension 0 (9) does not split evenly over 2 shards of the mesh data=2

// Dispatches that need what the program does not have.
// RUN: not moec run %t/dynamic.mlir --random-inputs --dim 8 --mesh expert=2 --ep-dispatch a2a 2>&1 | FileCheck %s --check-prefix=A2A %{nocrash}
// A2A: dynamic.mlir:4:8: error: moe-partition: ep-dispatch=a2a needs a static token count (its receive buffers are sized at compile time)
// RUN: not moec run %t/block.mlir --random-inputs --mesh expert=2 --ep-dispatch dense --capacity-factor 1.5 2>&1 | FileCheck %s --check-prefix=DENSE %{nocrash}
// DENSE: error: moe-partition: ep-dispatch=dense computes every row; a capacity

// int8 on a mesh: not supported, said either way round.
// RUN: not moe-opt %t/block.mlir -moe-partition=mesh=expert=2 -moe-quantize --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=INT8 %{nocrash}
// INT8: block.mlir:1:1: error: moe-quantize: @block is one shard's program (moe-partition); int8 on a mesh is not supported yet: quantize a single-device block
// RUN: moe-opt %t/block.mlir -moe-quantize -o %t/int8.mlir
// RUN: not moec run %t/int8.mlir --random-inputs --mesh expert=2 2>&1 | FileCheck %s --check-prefix=INT8-MESH %{nocrash}
// INT8-MESH: int8.mlir:1:1: error: moe-partition: no function with a moe.block to partition (it splits moe.block ops: partition before moe-expand-block or moe-quantize expands them)

// A per-shard launcher without a mesh.
// RUN: not moec run %t/block.mlir --random-inputs --launcher mpi 2>&1 | FileCheck %s --check-prefix=MPI %{nocrash}
// MPI: moec: error: --launcher mpi runs a per-shard program: give --mesh (or compile one partitioned with moe-partition)

//--- block.mlir
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  // The block.
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

//--- dynamic.mlir
func.func @block(%x: tensor<?x32xf32>, %logits: tensor<?x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<?x32xf32> {
  // The block.
  %y = moe.block %x logits(%logits : tensor<?x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
