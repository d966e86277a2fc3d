// Code for a CPU with extensions this host lacks (Sapphire Rapids'
// AVX512_FP16, which no AMD CPU and no Intel CPU before it has): a library
// built for it refuses to load here, naming what is missing, instead of
// stopping on an illegal instruction at its first call; `moec run` for it
// is refused before compiling. On a host with AVX512_FP16 there is nothing
// to refuse.
// UNSUPPORTED: avx512fp16
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not=Illegal

// RUN: moec %s --target-cpu sapphirerapids -o %t/spr.so
// RUN: not run_block %t/spr.so block 16 2>&1 | FileCheck %s --check-prefix=LOAD %{nocrash} --implicit-check-not=out0
// LOAD: run_block: {{.*}}spr.so: compiled for a CPU with sse4.2 {{.*}}avx512fp16{{.*}}; this CPU lacks {{.*}}avx512fp16{{.*}} (compile it again on this machine, or for it with moec --target-cpu)

// RUN: not moec run %s --target-cpu sapphirerapids --random-inputs 2>&1 | FileCheck %s --check-prefix=RUN-CHECK %{nocrash} --implicit-check-not=out0
// RUN-CHECK: moec: error: --target-cpu sapphirerapids: this CPU ({{.*}}) lacks {{.*}}avx512fp16{{.*}}, which code for it may use: it cannot run here (compile a library with -o and run it on such a machine)
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
