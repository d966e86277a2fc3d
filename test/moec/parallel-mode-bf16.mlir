// --parallel-mode auto rates a bf16 block at the unit its bf16 gmms run on,
// as moe-bench does (tooling/GmmPeakUnit.h): AMX tiles where Linux grants
// them, else AVX512_BF16 dot products. Rated at the FP32 FMA peak, as it
// was, every plan's compute time came out about twice what it is (more on
// AMX).
// REQUIRES: avx512bf16
// RUN: moec run %s --parallel-mode auto --mesh expert=2 --random-inputs --threads 2 | FileCheck %s
// CHECK: model: core {{[0-9.]+}} GFLOP/s (0.88 of the {{AVX512_BF16|AMX BF16}} peak) x 1 per shard
// CHECK: <- fastest
// CHECK: out0: 128x32xbf16
//
// The strategy decides the unit: the FMA tiles widen bf16 to f32.
// RUN: moec run %s --parallel-mode auto --mesh expert=2 --random-inputs --threads 2 --gmm-strategy=microkernel-fma | FileCheck %s --check-prefix=FMA
// FMA: model: core {{[0-9.]+}} GFLOP/s (0.88 of the FP32 FMA peak) x 1 per shard
//
// So does the module's #moe.target, as moe-select-lowering reads it: one
// without AVX512_BF16 has its bf16 gmms on the FMA tiles, whatever the CPU
// it names has (compiled for that CPU, on any host).
// RUN: moec %S/Inputs/bf16-block-no-bf16-target.mlir --target-cpu znver5 --parallel-mode auto --mesh expert=2 -o %t.o 2>&1 | FileCheck %s --check-prefix=FMA

func.func @block(%x: tensor<128x32xbf16>, %logits: tensor<128x8xf32>,
                 %w13: tensor<8x32x48xbf16>, %w2: tensor<8x24x32xbf16>) -> tensor<128x32xbf16> {
  %y = moe.block %x logits(%logits : tensor<128x8xf32>) gate_up(%w13 : tensor<8x32x48xbf16>)
         down(%w2 : tensor<8x24x32xbf16>) top 2 : tensor<128x32xbf16>
  return %y : tensor<128x32xbf16>
}
