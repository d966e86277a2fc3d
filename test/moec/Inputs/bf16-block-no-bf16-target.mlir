// A bf16 block whose module's #moe.target is a Zen 5 without its
// AVX512_BF16 (the attribute edited; moe-select-lowering takes its
// features as they are): its gmms run on the FMA tiles, bf16 widened to
// f32 (parallel-mode-bf16.mlir).
module attributes {moe.target = #moe.target<cpu = "znver5", features = ["avx2", "fma", "avx512f"], vector_registers = 32, l1_bytes = 49152, l2_bytes = 1048576>} {
  func.func @block(%x: tensor<128x32xbf16>, %logits: tensor<128x8xf32>,
                   %w13: tensor<8x32x48xbf16>, %w2: tensor<8x24x32xbf16>) -> tensor<128x32xbf16> {
    %y = moe.block %x logits(%logits : tensor<128x8xf32>) gate_up(%w13 : tensor<8x32x48xbf16>)
           down(%w2 : tensor<8x24x32xbf16>) top 2 : tensor<128x32xbf16>
    return %y : tensor<128x32xbf16>
  }
}
