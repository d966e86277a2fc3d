// RUN: moe-opt %s -moe-convert-amx-to-llvm -split-input-file | FileCheck %s

// An accumulator tile carried by a branch (what convert-scf-to-cf makes of
// the AMX task's depth loop): the tile ops become intrinsics and the block
// argument an x86_amx value, with one type converter.
// CHECK-LABEL: func @carried_tile
// CHECK: %[[Z:.*]] = llvm.call_intrinsic "llvm.x86.tilezero.internal"
// CHECK: llvm.br ^bb1(%{{.*}}, %[[Z]] : i64, !llvm.x86_amx)
// CHECK: ^bb1(%{{.*}}: i64, %[[ACC:.*]]: !llvm.x86_amx):
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"({{.*}}, %[[ACC]], {{.*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// CHECK-NOT: amx.
func.func @carried_tile(%a: memref<16x32xbf16>, %c: memref<16x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = amx.tile_zero : !amx.tile<16x16xf32>
  cf.br ^loop(%c0, %z : index, !amx.tile<16x16xf32>)
^loop(%i: index, %acc: !amx.tile<16x16xf32>):
  %more = arith.cmpi slt, %i, %n : index
  cf.cond_br %more, ^body, ^done
^body:
  %t = amx.tile_load %a[%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
  %next = amx.tile_mulf %t, %t, %acc : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
  %i1 = arith.addi %i, %c1 : index
  cf.br ^loop(%i1, %next : index, !amx.tile<16x16xf32>)
^done:
  amx.tile_store %c[%c0, %c0], %acc : memref<16x16xf32>, !amx.tile<16x16xf32>
  return
}

// -----

// No tiles: nothing changes (convert-cf-to-llvm lowers these branches).
// CHECK-LABEL: func @no_tiles
// CHECK: cf.br ^bb1
// CHECK: cf.assert
func.func @no_tiles(%x: index, %ok: i1) -> index {
  cf.br ^next(%x : index)
^next(%y: index):
  cf.assert %ok, "message"
  return %y : index
}
