// RUN: bash %S/check-examples.sh %examples moe-opt %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: checked {{[1-9][0-9]*}} examples, 0 failed
