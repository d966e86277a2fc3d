// MLIR 22's parsers of linalg.reduce, linalg.broadcast and linalg.transpose
// crash after "expected '['" when the array after `dimensions =`
// (`permutation =`) does not parse (found by moe-fuzz-compile; mlir-opt
// crashes too). moec and moe-opt refuse such input first, with the
// location and a non-zero exit, and no stack dump.
// RUN: rm -rf %t && split-file %s %t
// RUN: not moe-opt %t/reduce.mlir 2>&1 | FileCheck %s --check-prefix=REDUCE --implicit-check-not="Stack dump"
// RUN: not moec %t/reduce.mlir -o %t/reduce.o 2>&1 | FileCheck %s --check-prefix=REDUCE --implicit-check-not="Stack dump"
// RUN: not moe-opt %t/unclosed.mlir 2>&1 | FileCheck %s --check-prefix=UNCLOSED --implicit-check-not="Stack dump"
// RUN: not moe-opt %t/transpose.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSE --implicit-check-not="Stack dump"
// RUN: not moe-opt %t/broadcast.mlir 2>&1 | FileCheck %s --check-prefix=BROADCAST --implicit-check-not="Stack dump"
// Valid forms, the generic one and comments naming the ops are not refused.
// RUN: moe-opt %t/valid.mlir | FileCheck %s --check-prefix=VALID
// From stdin too: moe-opt reads it once, checks it, then runs on it.
// RUN: not moe-opt < %t/reduce.mlir 2>&1 | FileCheck %s --check-prefix=STDIN --implicit-check-not="Stack dump"
// RUN: moe-opt < %t/valid.mlir | FileCheck %s --check-prefix=VALID
// RUN: cat %t/valid.mlir | moe-opt - -canonicalize -o %t/valid-out.mlir && FileCheck %s --check-prefix=VALID < %t/valid-out.mlir
// RUN: test ! -e %t/reduce.o

// REDUCE: reduce.mlir:2:86: error: expected '[' and a list of integers ending in ']' after 'dimensions =' of linalg.reduce (refused before parsing: MLIR 22's parser crashes on it)
// UNCLOSED: unclosed.mlir:2:86: error: expected '[' and a list of integers ending in ']' after 'dimensions =' of linalg.reduce
// TRANSPOSE: transpose.mlir:2:92: error: {{.*}}after 'permutation =' of linalg.transpose
// BROADCAST: broadcast.mlir:2:89: error: {{.*}}after 'dimensions =' of linalg.broadcast
// STDIN: <stdin>:2:86: error: expected '[' and a list of integers ending in ']' after 'dimensions =' of linalg.reduce
// VALID: linalg.reduce
// VALID: linalg.transpose
// VALID: linalg.broadcast

//--- reduce.mlir
func.func @f(%a: tensor<2x4xi32>, %z: tensor<2xi32>) -> tensor<2xi32> {
  %r = linalg.reduce ins(%a : tensor<2x4xi32>) outs(%z : tensor<2xi32>) dimensions = Z1]
    (%in: i32, %acc: i32) {
      %s = arith.addi %in, %acc : i32
      linalg.yield %s : i32
    }
  return %r : tensor<2xi32>
}
//--- unclosed.mlir
func.func @f(%a: tensor<2x4xi32>, %z: tensor<2xi32>) -> tensor<2xi32> {
  %r = linalg.reduce ins(%a : tensor<2x4xi32>) outs(%z : tensor<2xi32>) dimensions = [1
    (%in: i32, %acc: i32) {
      %s = arith.addi %in, %acc : i32
      linalg.yield %s : i32
    }
  return %r : tensor<2xi32>
}
//--- transpose.mlir
func.func @f(%a: tensor<2x4xi32>, %z: tensor<4x2xi32>) -> tensor<4x2xi32> {
  %r = linalg.transpose ins(%a : tensor<2x4xi32>) outs(%z : tensor<4x2xi32>) permutation = Z1]
  return %r : tensor<4x2xi32>
}
//--- broadcast.mlir
func.func @f(%a: tensor<2xi32>, %z: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %r = linalg.broadcast ins(%a : tensor<2xi32>) outs(%z : tensor<2x4xi32>) dimensions = Z1]
  return %r : tensor<2x4xi32>
}
//--- valid.mlir
// A comment about linalg.reduce and its dimensions = (anything) is fine.
func.func @f(%a: tensor<2x4xi32>, %z: tensor<2xi32>, %t: tensor<4x2xi32>, %b: tensor<2x4xi32>)
    -> (tensor<2xi32>, tensor<4x2xi32>, tensor<2x4xi32>) {
  %r = linalg.reduce ins(%a : tensor<2x4xi32>) outs(%z : tensor<2xi32>) dimensions = [ 1 ]
    (%in: i32, %acc: i32) {
      %s = arith.addi %in, %acc : i32
      linalg.yield %s : i32
    }
  %p = linalg.transpose ins(%a : tensor<2x4xi32>) outs(%t : tensor<4x2xi32>) permutation = [1, 0]
  %q = linalg.broadcast ins(%r : tensor<2xi32>) outs(%b : tensor<2x4xi32>) dimensions = [1]
  return %r, %p, %q : tensor<2xi32>, tensor<4x2xi32>, tensor<2x4xi32>
}
