// A module whose #moe.target is not the CPU moec compiles for is refused
// (its lowering may use instructions this CPU lacks); --target-cpu names
// the CPU to compile for instead. (No CI host is a Haswell.)
// RUN: not moec %s -o %t.s 2>&1 | FileCheck %s
// RUN: moec %s --target-cpu=haswell -o %t.s
// RUN: FileCheck %s --check-prefix=ASM < %t.s

// CHECK: error: the module's #moe.target is 'haswell' but moec compiles for '{{[a-z0-9-]+}}': give --target-cpu haswell (or remove the attribute)
// ASM: gmm:

module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "fma"], vector_registers = 8, l1_bytes = 32768, l2_bytes = 1048576>} {
  func.func @gmm(%x: tensor<?x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<?x16xf32> {
    %y = moe.gmm %x, %w, %s : tensor<?x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
    return %y : tensor<?x16xf32>
  }
}
