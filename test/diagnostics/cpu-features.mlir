// A CPU without a feature the code needs: refused with one message naming
// the CPU and the feature, at compile time where the choice is made, never
// an illegal instruction at run time. moec --target-cpu compiles for another
// CPU than this host, which makes these tests the same on every host; the
// refusal of a library or run for a CPU newer than this one is
// cpu-features-newer.mlir. The refusal for this host itself:
// test/codegen/gmm-avx512bf16-unsupported.mlir (on hosts without AVX512_BF16).
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not=warning

// A CPU LLVM does not know: no warning from LLVM, one error.
// RUN: not moec %s --target-cpu pentium9000 -o %t/x.o 2>&1 | FileCheck %s --check-prefix=UNKNOWN %{nocrash} --implicit-check-not=recognized
// UNKNOWN: moec: error: unknown --target-cpu 'pentium9000' (`llc-22 -mcpu=help` lists the CPUs LLVM knows)

// A forced kernel the target lacks the instructions of: AVX512_BF16 dot
// products for Zen 3 (AVX2 only), compiling and running.
// RUN: not moec %s --target-cpu znver3 --gmm-strategy microkernel-avx512bf16 -o %t/x.o 2>&1 | FileCheck %s --check-prefix=BF16 %{nocrash}
// RUN: not moec run %s --target-cpu znver3 --gmm-strategy microkernel-avx512bf16 --random-inputs 2>&1 | FileCheck %s --check-prefix=BF16 %{nocrash}
// BF16: moec: error: gmm-strategy=microkernel-avx512bf16 needs a CPU with AVX512_BF16, which the target CPU 'znver3' does not have (use microkernel or microkernel-fma)
// And through moe-opt, whose passes compile for the host: on a host without
// AVX512_BF16, test/codegen/gmm-avx512bf16-unsupported.mlir.

// The kernel that fits is chosen by itself for such a target, and the
// library records what it needs of the CPU that loads it.
// RUN: moec %s --target-cpu znver3 -o %t/zen3.so
// RUN: %python -c "import sys; d = open(sys.argv[1], 'rb').read(); i = d.index(b'sse4.2 avx'); print(d[i:d.index(b'\0', i)].decode())" %t/zen3.so | FileCheck %s --check-prefix=RECORDED
// RECORDED: sse4.2 avx avx2 fma f16c bmi bmi2
// RECORDED-NOT: avx512

// A library for an older CPU loads and runs here (every x86-64 host has
// x86-64-v2's SSE4.2), with the same numbers as one for the host up to
// float rounding (no FMA).
// RUN: moec %s --target-cpu x86-64-v2 -o %t/v2.so
// RUN: run_block %t/v2.so block 16 | FileCheck %s --check-prefix=OLDER
// OLDER: out0: 16x32xf32 sum
// RUN: moec run %s --target-cpu x86-64-v2 --random-inputs | FileCheck %s --check-prefix=OLDJIT
// OLDJIT: target: x86-64-v2 (--target-cpu; this host is {{.*}}): (none of avx2, avx512f, avx512bf16, avx512vnni, amx)
// OLDJIT: out0: 16x32xf32
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
