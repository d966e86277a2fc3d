// moe.null_slots compiled and run on chosen draws: which slots are nulled
// (id E = 6, weight 0), the model form's nulls kept, take_until_null's
// suffix, renormalisation of the real weights.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/npy.py write %t/ids.npy i4 2x4 0 1 2 3 5 7 4 3
// RUN: %python %S/npy.py write %t/w.npy f4 2x4 0.4 0.3 0.2 0.1 0.25 0.25 0.25 0.25
// RUN: %python %S/npy.py write %t/u.npy f4 2x4 0.9 0.1 0.6 0.7 0.8 0.9 0.95 0.2
// RUN: moec run %s --entry independent --input %t/ids.npy --input %t/w.npy --input %t/u.npy --output-dir %t/ind
// RUN: %python %S/npy.py print %t/ind/out0.npy | FileCheck %s --check-prefix=IND-IDS
// RUN: %python %S/npy.py print %t/ind/out1.npy | FileCheck %s --check-prefix=IND-W
// RUN: moec run %s --entry until --input %t/ids.npy --input %t/w.npy --input %t/u.npy --output-dir %t/until
// RUN: %python %S/npy.py print %t/until/out0.npy | FileCheck %s --check-prefix=UNTIL-IDS
// RUN: %python %S/npy.py print %t/until/out1.npy | FileCheck %s --check-prefix=UNTIL-W

// Token 0: slot 1 drawn (0.1 < 0.5); token 1: slot 1 was null (id 7), slot
// 3 drawn. Real weights renormalised: 0.4, 0.2, 0.1 over 0.7.
// IND-IDS: 0 6 2 3 5 6 4 6
// IND-W: 0.571429 0 0.285714 0.142857 0.5 0 0.5 0
// take_until_null at 0.5 over K = 4 draws with p = 0.2587 (expected null
// fraction 0.5): everything after token 0's slot 1 and token 1's null id.
// UNTIL-IDS: 0 6 6 6 5 6 6 6
// UNTIL-W: 0.4 0 0 0 0.25 0 0 0

func.func @independent(%ids: tensor<2x4xi32>, %w: tensor<2x4xf32>, %u: tensor<2x4xf32>) -> (tensor<2x4xi32>, tensor<2x4xf32>) {
  %i, %v = moe.null_slots %ids, %w, %u fraction 0.5 experts 6 renormalize : tensor<2x4xi32>, tensor<2x4xf32>, tensor<2x4xf32>
  return %i, %v : tensor<2x4xi32>, tensor<2x4xf32>
}

func.func @until(%ids: tensor<?x4xi32>, %w: tensor<?x4xf32>, %u: tensor<?x4xf32>) -> (tensor<?x4xi32>, tensor<?x4xf32>) {
  %i, %v = moe.null_slots %ids, %w, %u fraction 0.5 experts 6 policy take_until_null : tensor<?x4xi32>, tensor<?x4xf32>, tensor<?x4xf32>
  return %i, %v : tensor<?x4xi32>, tensor<?x4xf32>
}
