// Malformed .mlir: each is refused by moec (compile and run) and moe-opt
// with one error at its source location, a non-zero exit and no stack
// dump; nothing is written. The verifiers' messages have tests of their own
// beside each op (test/dialect/*-errors.mlir) and pass
// (test/passes/*-errors.mlir); the inputs MLIR 22's own parser would crash
// on, test/moec/upstream-parser-guard.mlir.
// RUN: rm -rf %t && split-file %s %t

// RUN: not moec %t/syntax.mlir -o %t/syntax.o 2>&1 | FileCheck %s --check-prefix=SYNTAX --implicit-check-not=error: --implicit-check-not="Stack dump"
// RUN: not moe-opt %t/syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX --implicit-check-not=error: --implicit-check-not="Stack dump"
// SYNTAX: syntax.mlir:3:1: error: invalid SSA name

// RUN: not moec run %t/unknown-op.mlir --random-inputs 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not=error: --implicit-check-not="Stack dump"
// RUN: not moe-opt %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not=error: --implicit-check-not="Stack dump"
// UNKNOWN: unknown-op.mlir:2:8: error: custom op 'moe.frobnicate' is unknown

// RUN: not moec %t/bad-type.mlir -o %t/bad-type.o 2>&1 | FileCheck %s --check-prefix=TYPE --implicit-check-not=error: --implicit-check-not="Stack dump"
// TYPE: bad-type.mlir:2:23: error: use of value '%x' expects different type than prior uses: 'tensor<4x8xf16>' vs 'tensor<4x8xf32>'

// RUN: not moec %t/undefined.mlir -o %t/undefined.o 2>&1 | FileCheck %s --check-prefix=UNDEFINED --implicit-check-not=error: --implicit-check-not="Stack dump"
// UNDEFINED: undefined.mlir:2:27: error: use of undeclared SSA value name

// RUN: not moec %t/top-k.mlir -o %t/top-k.o 2>&1 | FileCheck %s --check-prefix=TOPK --implicit-check-not=error: --implicit-check-not="Stack dump"
// TOPK: top-k.mlir:3:8: error: 'moe.block' op top-k (3) must be in [1, 2] (router columns)

// Bytes that are not text at all.
// RUN: printf '\x00\xff\x93NUMPY\x01\x00garbage' > %t/binary.mlir
// RUN: not moec %t/binary.mlir -o %t/binary.o 2>&1 | FileCheck %s --check-prefix=BINARY --implicit-check-not=error: --implicit-check-not="Stack dump"
// RUN: not moe-opt %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=BINARY --implicit-check-not=error: --implicit-check-not="Stack dump"
// BINARY: binary.mlir:1:2: error: unexpected character

// An empty file is an empty module: it compiles to an empty object, and
// there is nothing to run.
// RUN: touch %t/empty.mlir
// RUN: moec %t/empty.mlir -o %t/empty.o && rm %t/empty.o
// RUN: not moec run %t/empty.mlir --random-inputs 2>&1 | FileCheck %s --check-prefix=EMPTY --implicit-check-not=error:
// EMPTY: moec: error: the module has no public function with a body to run

// A public function moec cannot call: not only tensors in and out.
// RUN: not moec run %t/memref.mlir --random-inputs 2>&1 | FileCheck %s --check-prefix=MEMREF --implicit-check-not=error:
// MEMREF: moec: error: argument 0 of 'f' is memref<2xf32>; entry points take ranked f32, bf16 or i32 tensors

// Nothing was written.
// RUN: ls %t | FileCheck %s --check-prefix=NOTHING --implicit-check-not=.o
// NOTHING: binary.mlir

//--- syntax.mlir
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
%%%
}

//--- unknown-op.mlir
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = moe.frobnicate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

//--- bad-type.mlir
func.func @f(%x: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  %0 = moe.scale_rows %x, %s : tensor<4x8xf16>, tensor<4xf32>
  return %0 : tensor<4x8xf32>
}

//--- undefined.mlir
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = moe.scale_rows %x, %scale : tensor<4x8xf32>, tensor<4xf32>
  return %0 : tensor<4x8xf32>
}

//--- top-k.mlir
func.func @f(%x: tensor<4x8xf32>, %logits: tensor<4x2xf32>, %w13: tensor<2x8x16xf32>,
             %w2: tensor<2x8x8xf32>) -> tensor<4x8xf32> {
  %y = moe.block %x logits(%logits : tensor<4x2xf32>) gate_up(%w13 : tensor<2x8x16xf32>)
         down(%w2 : tensor<2x8x8xf32>) top 3 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

//--- memref.mlir
func.func @f(%a: memref<2xf32>) {
  return
}
