//===- GmmKernelHarness.h - one gmm kernel kind, compiled alone -*- C++ -*-===//
//
// What the kernel unit test (test/unit/GmmKernelTest.cpp) and the kernel
// microbenchmark (moe-kernel-bench) share: for a kind of the gmm kernel
// family (codegen/kernels/GmmKernel.h), a function holding one moe.gmm
// whose #moe.gmm_lowering names that kind with the tiles given, its operands
// in the form the kind computes (f32, bf16, int8 weights), random inputs,
// and the function compiled by the JIT with the kind or with the reference
// loops (moe-to-llvm{gmm-strategy=reference}).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_BENCH_KERNELS_GMMKERNELHARNESS_H
#define MOEC_BENCH_KERNELS_GMMKERNELHARNESS_H

#include "runtime/Buffer.h"
#include "runtime/Signature.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace moec {
class JitProgram;

namespace kernels {

/// The operand form a kind computes.
enum class GmmOperands { F32, BF16, Int8 };

/// The gmm one case computes: rows x depth times depth x width per group.
struct GmmShape {
  int64_t rows = 24, depth = 64, width = 32;
  /// Rows per group (their sum may be below `rows`: the rest belong to no
  /// group and read zero). Empty: one group of every row.
  std::vector<int32_t> groupSizes;
  bool swiglu = false; // weights 2 x width wide, silu(gate) * up fused
  bool gather = false; // rows read from x[perm[r] / topK] (perm < 0: zero)
  int64_t topK = 2;
  int64_t tokens = 0;  // gathered: rows of x (0: rows / topK, rounded up)
  bool bias = false;   // a bias [E, weight columns] before the activation
  bool bf16ForFma = false; // the fma kind on bf16 operands (widened once)
  /// Weights [E, width, depth] (`transpose_rhs`: the backward's gmm on
  /// transposed weights); float kinds only, without SwiGLU or bias.
  bool transposeRhs = false;
};

/// #moe.gmm_lowering's numbers (the kind's tiles).
struct GmmTiles {
  int64_t mr = 4, nv = 2, kc = 16, nc = 64, mc = 8;
  int64_t packedColumns = 64, dotRows = 12;

  /// These tiles with a register tile a register file of `vectorRegisters`
  /// 16-lane vectors holds (mr x nv accumulators, nv weight vectors, a
  /// broadcast; AVX2's 16 ymm hold 8): nv halved while one row does not
  /// fit, mr cut to what fits, mc a multiple of it. What the lowering
  /// accepts on that target.
  GmmTiles fittedTo(int64_t vectorRegisters) const;
};

/// A kind as the harness runs it: its operands and the kernel list of its
/// attribute (a tile kind beside the default kind moe-select-lowering pairs
/// it with, amx_min_rows 1 so that every non-empty group takes it where
/// tiles are granted).
struct GmmKindSetup {
  std::string kind;
  GmmOperands operands;
  std::vector<std::string> kernels;
  /// The unit it runs on, what moe-kernel-bench quotes its rate against
  /// (tooling/Peak.h; null `peak`: no peak loop for that unit).
  struct Unit {
    const char *name = nullptr;
    double (*peak)(unsigned threads, double seconds) = nullptr;
  } unit;
};

/// The setup of every kind the registry knows (nullopt: a kind the harness
/// has no setup for, which the unit test reports).
std::optional<GmmKindSetup> kindSetup(const std::string &kind);

/// The CPU features (LLVM's names) of the setup's kernels the JIT's target
/// (this host) lacks, and for a tile kind the tile state Linux did not
/// grant: empty when it can run them.
std::vector<std::string> missingFeatures(const GmmKindSetup &setup);

/// The function `gmm` for `setup` and `shape`, its lowering attribute
/// written with `tiles`.
std::string gmmProgram(const GmmKindSetup &setup, const GmmShape &shape, const GmmTiles &tiles);

/// Random arguments of gmmProgram's function (the group sizes as given,
/// the permutation with a padding slot every seventh row).
std::vector<Buffer> gmmInputs(const GmmKindSetup &setup, const GmmShape &shape, std::mt19937_64 &rng);

/// gmmProgram compiled through moe-to-llvm (`reference`: the plain loops)
/// by the JIT.
class CompiledGmm {
public:
  static std::unique_ptr<CompiledGmm> compile(const std::string &program, bool reference,
                                              std::string &error);
  ~CompiledGmm();
  std::optional<std::vector<Buffer>> run(std::vector<Buffer> &inputs, std::string &error);

private:
  CompiledGmm() = default;
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<JitProgram> jit;
  FunctionSignature signature;
};

/// A copy of `b`.
Buffer copyOf(const Buffer &b);

/// max |got - expected| / max(max |expected|, 1e-30); the count of
/// elements that differ in NaN-ness goes to `nanMismatches`.
double relativeError(const Buffer &got, const Buffer &expected, int64_t &nanMismatches);

/// The largest relativeError a kind's result may have: bf16 results (the
/// sums rounded to 8 bits may land an ulp apart when added in another
/// order) 1e-2; f32 and int8 (exact i32 sums, the same row quantization)
/// 1e-5.
double tolerance(const GmmKindSetup &setup, const GmmShape &shape);

/// Multiply-adds of the gmm: rows in groups x depth x weight columns.
double gmmMultiplyAdds(const GmmShape &shape);

} // namespace kernels
} // namespace moec

#endif // MOEC_BENCH_KERNELS_GMMKERNELHARNESS_H
