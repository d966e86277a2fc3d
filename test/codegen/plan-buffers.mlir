// RUN: moe-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(moe-plan-buffers))' | FileCheck %s

// Three buffers of 4096 bytes live in turn: %a until %b is made from it, %b
// until %c is, %c until the end. %a and %c never live together, so they
// share offset 0 and the arena holds two, not three; the lower bound (two
// live at once) is met. The returned buffer stays with malloc, as does the
// dynamic one.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    moe.memory_plan = {arena_bytes = 8192 : i64, buffer_bytes = 12288 : i64, buffers = 3 : i64, lower_bound_bytes = 8192 : i64, unplanned_bytes = 4096 : i64}
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%c4096{{(_[0-9]+)?}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         %[[C:.*]] = memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         %[[R:.*]] = memref.alloc() : memref<1024xf32>
// CHECK:         memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NOT:     memref.dealloc %[[A]]
// CHECK:         memref.dealloc %[[ARENA]] :
// CHECK-NEXT:    return %[[R]]
func.func @chain(%x: memref<1024xf32>, %n: index) -> memref<1024xf32> {
  %a = memref.alloc() : memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  memref.copy %a, %b : memref<1024xf32> to memref<1024xf32>
  %c = memref.alloc() : memref<1024xf32>
  memref.copy %b, %c : memref<1024xf32> to memref<1024xf32>
  %r = memref.alloc() : memref<1024xf32>
  memref.copy %c, %r : memref<1024xf32> to memref<1024xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  memref.dealloc %c : memref<1024xf32>
  return %r : memref<1024xf32>
}

// -----

// A use through a view keeps the buffer live: %a is read through its
// subview in the loop after %b is made, so the two overlap and get
// different offsets.
// CHECK-LABEL: func.func @through_a_view(
// CHECK-SAME:    arena_bytes = 8192 : i64
// CHECK:         memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][]
// CHECK:         memref.subview
// CHECK:         memref.view %{{.*}}[%c4096{{(_[0-9]+)?}}][]
// CHECK:         scf.for
func.func @through_a_view(%x: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %s = memref.subview %a[0] [4] [1] : memref<1024xf32> to memref<4xf32, strided<[1]>>
  %b = memref.alloc() : memref<1024xf32>
  memref.copy %x, %b : memref<1024xf32> to memref<1024xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %s[%i] : memref<4xf32, strided<[1]>>
    memref.store %v, %b[%i] : memref<1024xf32>
  }
  memref.copy %b, %x : memref<1024xf32> to memref<1024xf32>
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}
