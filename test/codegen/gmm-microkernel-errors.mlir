// RUN: moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering="gmm-tiling=mr=20,nv=4" -moe-lower-to-loops -split-input-file -verify-diagnostics
// RUN: not moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering="gmm-tiling=mr=6,kz=3" -moe-lower-to-loops 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=gmm-strategy=fastest -moe-lower-to-loops 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=tuning-table=%t.missing -moe-lower-to-loops 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: echo "D=16,N=24,swiglu=0,bytes=4 mr=6,nv=3,kc=16,nc=40,mc=6" > %t.bad
// RUN: not moe-opt %s -moe-attach-target=cpu=znver4 -moe-select-lowering=tuning-table=%t.bad -moe-lower-to-loops 2>&1 | FileCheck %s --check-prefix=BADLINE

// KEY: error: gmm tiling 'mr=6,kz=3': unknown key 'kz' (expected mr, nv, kc, nc, mc)
// STRATEGY: for the --gmm-strategy option: must be microkernel, microkernel-amx, microkernel-avx512bf16, microkernel-fma or reference (got 'fastest')
// TABLE: error: cannot read tuning table '{{.*}}.missing': No such file or directory
// BADLINE: error: {{.*}}.bad:1: nc=40 must be a multiple of the register tile's 48 columns

func.func @registers(%rows: tensor<?x16xf32>, %w: tensor<4x16x24xf32>, %sizes: tensor<4xi32>) -> tensor<?x24xf32> {
  // expected-error @+1 {{gmm tiling mr=20,nv=4,kc=256,nc=256,mc=192: register tile mr=20 x nv=4 needs 85 vector registers, more than the target's 32}}
  %h = moe.gmm %rows, %w, %sizes : tensor<?x16xf32>, tensor<4x16x24xf32>, tensor<4xi32>
  return %h : tensor<?x24xf32>
}
