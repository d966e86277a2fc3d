// bf16 code that LLVM would lower to compiler-rt's __truncsfbf2 (scalar
// bf16 arithmetic of the unfused shared expert; bf16 vector selects and
// truncations on CPUs without AVX512_BF16), which GCC 12's libgcc lacks:
// the JIT resolves it (runtime/CompilerBuiltins.h), a library moec links
// carries compiler-rt's copy, and most calls are gone before LLVM
// (moe-expand-bf16-conversions). Found by moe-fuzz-blocks (seed 1, case 1).
// RUN: rm -rf %t && mkdir -p %t
// RUN: moec run %s --random-inputs --dim 9 --output-dir %t | FileCheck %s
// CHECK: out0: 9x30xbf16
// RUN: moec %s -o %t/block.so
// RUN: nm -D --undefined-only %t/block.so | FileCheck %s --check-prefix=SO --allow-empty
// SO-NOT: __truncsfbf2
func.func @moe_block(%x: tensor<?x30xbf16>, %r: tensor<?x4xf32>, %w1: tensor<4x30x32xbf16>,
                     %w3: tensor<4x30x32xbf16>, %w2: tensor<4x32x30xbf16>, %sw1: tensor<30x20xbf16>,
                     %sw3: tensor<30x20xbf16>, %sw2: tensor<20x30xbf16>) -> tensor<?x30xbf16> {
  %y = moe.block %x logits(%r : tensor<?x4xf32>) gate_up(%w1, %w3 : tensor<4x30x32xbf16>, tensor<4x30x32xbf16>)
         down(%w2 : tensor<4x32x30xbf16>) shared_gate_up(%sw1, %sw3 : tensor<30x20xbf16>, tensor<30x20xbf16>)
         shared_down(%sw2 : tensor<20x30xbf16>)
         top 3 scoring sigmoid order softmax_then_topk combine_strategy scatter preweight : tensor<?x30xbf16>
  return %y : tensor<?x30xbf16>
}
