//===- GmmKernelTest.cpp - each gmm kernel kind against the reference loops -===//
//
// For every kind the registry knows (codegen/kernels/GmmKernel.h): a
// function holding one moe.gmm whose #moe.gmm_lowering names that kind with
// small tiles (several tasks, depth blocks and column blocks), compiled and
// run, against the same function on the reference loops. The cases cover
// one task, odd sizes with empty and hot groups and rows past the last
// group, tasks of several row blocks (at pinned thread counts), the fused
// SwiGLU, the fused gather with padding slots, biases, and transposed
// weights (the float kinds: fma, avx512bf16_dot).
// A kind whose features this CPU lacks is skipped, saying which.
//
//===----------------------------------------------------------------------===//

#include "kernels/GmmKernelHarness.h"

#include "codegen/kernels/GmmKernel.h"
#include "compiler/Compiler.h"
#include "dialect/MoeDialect.h"
#include "strategy/GmmTiling.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

using namespace moec;
using namespace moec::kernels;

namespace {

TEST(GmmKernelRegistry, MatchesTheDialectsKinds) {
  std::vector<std::string> dialect, registry;
  for (llvm::StringRef kind : mlir::moe::gmmKernelKinds())
    if (kind != "reference")
      dialect.push_back(kind.str());
  for (const mlir::moe::codegen::GmmKernelKind *kind : mlir::moe::codegen::registeredGmmKernels())
    registry.push_back(kind->name.str());
  EXPECT_EQ(dialect, registry);
}

TEST(GmmKernelRegistry, EveryKindHasATestSetup) {
  for (const mlir::moe::codegen::GmmKernelKind *kind : mlir::moe::codegen::registeredGmmKernels())
    EXPECT_TRUE(kindSetup(kind->name.str()).has_value()) << "no harness setup for kind " << kind->name.str();
}

struct Case {
  std::string name;
  GmmShape shape;
  GmmTiles tiles;
  /// The generated code's thread counts to run the kernel at (the task
  /// table depends on them); empty: the OpenMP runtime's default.
  std::vector<int> threads;
};

std::vector<Case> cases() {
  std::vector<Case> list;
  auto add = [&](std::string name, auto edit) {
    Case c;
    c.name = std::move(name);
    edit(c);
    list.push_back(c);
  };
  add("one task", [](Case &c) {
    c.shape.rows = 24;
    c.shape.depth = 64;
    c.shape.width = 32;
    c.tiles.kc = 64;
    c.tiles.mc = 24;
    c.tiles.dotRows = 24;
  });
  add("odd sizes, empty and hot groups, rows past the groups", [](Case &c) {
    c.shape.rows = 41;
    c.shape.depth = 45;
    c.shape.width = 50;
    c.shape.groupSizes = {0, 29, 1, 7};
  });
  add("many tasks", [](Case &c) {
    c.shape.rows = 200;
    c.shape.depth = 96;
    c.shape.width = 100;
    c.shape.groupSizes = {150, 3, 47};
  });
  // Weights packed per call: a kind that runs a weight block's row blocks
  // together (runsRowBlocksTogether) takes ranges of row blocks of one
  // weight block (GmmScheduler.cpp), of at most the work (2400 rows x 12
  // column blocks) over 8 tasks a worker. At 2
  // threads (1800 rows) the hot group is two ranges of each kind's blocks:
  // AMX 7 + 2 of 256 rows, int8 2 + 1 of 768, the dot kind 150 + 42 of 12;
  // at 5 (720 rows) AMX 2 + 2 + 2 + 2 + 1, int8 single blocks.
  add("a hot group, tasks of several row blocks", [](Case &c) {
    c.shape.rows = 2400;
    c.shape.depth = 64;
    c.shape.width = 384;
    c.shape.groupSizes = {0, 2300, 100};
    c.tiles.packedColumns = 32;
    c.threads = {2, 5};
  });
  // Decode sizes: a task of 1 to 4 rows takes a smaller register tile (the
  // dot and VNNI kinds: 1, 2 or 4 rows, the extra ones never stored), 5 a
  // full one. The rows a task has past its full tiles take the smallest
  // tile that holds them too (emitByRowCount): 7 to 11 rows are a full tile
  // and one of 1, 2, 4, 4 or 6 rows (9's 4-row tile with a copy of its last
  // row, never stored), 13 two and a 1-row one, 21 three and a 4-row one
  // with a copy. The last group is small and rows past it belong to none: a
  // small tile storing a row it does not own lands where no later task
  // rewrites it.
  add("decode and mid sizes: groups of 1 to 21 rows, gathered, swiglu", [](Case &c) {
    c.shape.rows = 97;
    c.shape.depth = 70;
    c.shape.width = 40;
    c.shape.groupSizes = {1, 2, 0, 7, 8, 9, 10, 11, 13, 21, 5, 4, 3};
    c.shape.gather = true;
    c.shape.swiglu = true;
  });
  add("swiglu", [](Case &c) {
    c.shape.rows = 30;
    c.shape.depth = 40;
    c.shape.width = 24;
    c.shape.groupSizes = {10, 0, 20};
    c.shape.swiglu = true;
  });
  // More tokens than rows (a pack to a capacity, routing to null experts):
  // the int8 kinds quantize the rows in order, not each token.
  add("gather, more tokens than rows", [](Case &c) {
    c.shape.rows = 14;
    c.shape.depth = 36;
    c.shape.width = 20;
    c.shape.groupSizes = {9, 5};
    c.shape.gather = true;
    c.shape.topK = 1;
    c.shape.tokens = 23;
  });
  add("gather, swiglu and bias", [](Case &c) {
    c.shape.rows = 26;
    c.shape.depth = 33;
    c.shape.width = 20;
    c.shape.groupSizes = {13, 13};
    c.shape.gather = true;
    c.shape.swiglu = true;
    c.shape.bias = true;
  });
  // One vector a row (AVX2's 6 x 16 tile): the SwiGLU splits each vector,
  // 8 gate and 8 up lanes, 8 outputs a panel (37 = 4 x 8 + 5).
  add("gather, swiglu and bias, one-vector tiles", [](Case &c) {
    c.shape.rows = 29;
    c.shape.depth = 33;
    c.shape.width = 37;
    c.shape.groupSizes = {11, 0, 18};
    c.shape.gather = true;
    c.shape.swiglu = true;
    c.shape.bias = true;
    c.tiles.mr = 5;
    c.tiles.nv = 1;
    c.tiles.kc = 16;
    c.tiles.nc = 48;
    c.tiles.mc = 10;
  });
  // An even depth: the bf16 dot kind reads the gathered rows in place
  // (through the permutation, padding slots included) instead of packing.
  add("gather, even depth, swiglu", [](Case &c) {
    c.shape.rows = 40;
    c.shape.depth = 40;
    c.shape.width = 72;
    c.shape.groupSizes = {17, 0, 23};
    c.shape.gather = true;
    c.shape.swiglu = true;
  });
  add("gather, even depth", [](Case &c) {
    c.shape.rows = 33;
    c.shape.depth = 64;
    c.shape.width = 100;
    c.shape.groupSizes = {8, 25};
    c.shape.gather = true;
  });
  add("bias", [](Case &c) {
    c.shape.rows = 19;
    c.shape.depth = 64;
    c.shape.width = 40;
    c.shape.groupSizes = {5, 14};
    c.shape.bias = true;
  });
  // Weights [E, N, D]: the dot kind turns 16 x 16 blocks of depth pairs;
  // an odd depth and width leave a partial block of each, 70 = 2 x 32 + 6.
  add("transposed weights, odd sizes", [](Case &c) {
    c.shape.rows = 37;
    c.shape.depth = 45;
    c.shape.width = 70;
    c.shape.groupSizes = {0, 21, 9};
    c.shape.transposeRhs = true;
  });
  // An even depth under 32 pairs' multiple: the dot kind reads the rows
  // in place and the pack masks the last 16 pairs' depth.
  add("transposed weights, depth 40", [](Case &c) {
    c.shape.rows = 25;
    c.shape.depth = 40;
    c.shape.width = 33;
    c.shape.groupSizes = {14, 11};
    c.shape.transposeRhs = true;
  });
  add("transposed weights, gather, even depth", [](Case &c) {
    c.shape.rows = 30;
    c.shape.depth = 96;
    c.shape.width = 40;
    c.shape.groupSizes = {12, 18};
    c.shape.gather = true;
    c.shape.transposeRhs = true;
  });
  return list;
}

void checkCase(const GmmKindSetup &setup, const Case &c, uint64_t seed) {
  SCOPED_TRACE(setup.kind + ", " + c.name + (c.shape.bf16ForFma ? " (bf16)" : "") + ", seed " +
               std::to_string(seed));
  // The cases' tiles, as tall as this host's register file allows (AVX2's
  // holds 2 rows of 2 vectors).
  GmmTiles tiles = c.tiles.fittedTo(mlir::moe::strategy::MachineModel::target().vectorRegisters);
  std::string program = gmmProgram(setup, c.shape, tiles);
  std::string error;
  auto kernel = CompiledGmm::compile(program, /*reference=*/false, error);
  ASSERT_TRUE(kernel) << error;
  auto reference = CompiledGmm::compile(program, /*reference=*/true, error);
  ASSERT_TRUE(reference) << error;
  std::mt19937_64 rng(seed);
  std::vector<Buffer> inputs = gmmInputs(setup, c.shape, rng), again;
  for (const Buffer &b : inputs)
    again.push_back(copyOf(b));
  auto expected = reference->run(again, error);
  ASSERT_TRUE(expected) << error;
  auto check = [&](const std::string &threads) {
    SCOPED_TRACE("threads: " + threads);
    std::vector<Buffer> fresh;
    for (const Buffer &b : inputs)
      fresh.push_back(copyOf(b));
    auto got = kernel->run(fresh, error);
    ASSERT_TRUE(got) << error;
    ASSERT_EQ(got->size(), 1u);
    int64_t nans = 0;
    double err = relativeError(got->front(), expected->front(), nans);
    EXPECT_EQ(nans, 0) << "elements NaN in one result only\n" << program;
    EXPECT_LE(err, tolerance(setup, c.shape)) << program;
  };
  if (c.threads.empty())
    return check("the runtime's default");
  for (int threads : c.threads) {
    ASSERT_TRUE(moec::setGeneratedCodeThreads(threads));
    check(std::to_string(threads));
  }
  // Back to one per core (OpenMP's default without OMP_NUM_THREADS).
  moec::setGeneratedCodeThreads(int(std::max(1u, std::thread::hardware_concurrency())));
}

class GmmKernelTest : public testing::TestWithParam<std::string> {};

TEST_P(GmmKernelTest, MatchesTheReferenceLoops) {
  std::optional<GmmKindSetup> setup = kindSetup(GetParam());
  ASSERT_TRUE(setup) << "no harness setup for kind " << GetParam();
  std::vector<std::string> missing = missingFeatures(*setup);
  if (!missing.empty()) {
    std::string list;
    for (const std::string &f : missing)
      list += " " + f;
    GTEST_SKIP() << GetParam() << " needs what this CPU lacks:" << list;
  }
  uint64_t seed = 1;
  bool transposes = setup->kind == "fma" || setup->kind == "avx512bf16_dot";
  for (const Case &c : cases()) {
    if (c.shape.transposeRhs && !transposes)
      continue;
    checkCase(*setup, c, seed++);
    if (setup->operands == GmmOperands::F32) {
      Case widened = c;
      widened.shape.bf16ForFma = true;
      checkCase(*setup, widened, seed++);
    }
  }
}

std::vector<std::string> kinds() {
  std::vector<std::string> list;
  for (const mlir::moe::codegen::GmmKernelKind *kind : mlir::moe::codegen::registeredGmmKernels())
    list.push_back(kind->name.str());
  return list;
}

INSTANTIATE_TEST_SUITE_P(Kinds, GmmKernelTest, testing::ValuesIn(kinds()),
                         [](const testing::TestParamInfo<std::string> &info) { return info.param; });

} // namespace
