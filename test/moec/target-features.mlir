// A #moe.target naming this CPU but listing a feature it lacks (edited by
// hand) is refused before any of its code is generated.
// UNSUPPORTED: amx-bf16
// RUN: moe-opt %s -moe-attach-target | sed 's/features = \[/features = ["amx-bf16", /' > %t.mlir
// RUN: not moec %t.mlir -o %t.s 2>&1 | FileCheck %s

// CHECK: error: the module's #moe.target lists 'amx-bf16', which the CPU moec compiles for ('{{[a-z0-9-]+}}') lacks (remove the feature or the attribute)

func.func @gmm(%x: tensor<?x8xf32>, %w: tensor<2x8x16xf32>, %s: tensor<2xi32>) -> tensor<?x16xf32> {
  %y = moe.gmm %x, %w, %s : tensor<?x8xf32>, tensor<2x8x16xf32>, tensor<2xi32>
  return %y : tensor<?x16xf32>
}
