//===- NumericsTest.cpp - compiled blocks against the C++ reference -------===//
//
// Each configuration is written as a moe.block, compiled through moe-to-llvm
// and the JIT, run on fresh random inputs, and compared with the plain C++
// reference (test/reference). The base seed is random unless MOEC_TEST_SEED
// is set; it is printed, and every failure names its configuration and seed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "strategy/GmmTiling.h"
#include "passes/Remat.h"
#include "differential/BlockCase.h"
#include "reference/Reference.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>

using namespace moec;

namespace {

using differential::BlockCase;
using differential::describe;
using differential::Inputs;
using differential::program;
using differential::randomTensor;
using differential::Tensor;
using differential::tensorType;
using Config = BlockCase;

uint64_t baseSeed() {
  static uint64_t seed = [] {
    const char *env = std::getenv("MOEC_TEST_SEED");
    uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("numerics: base seed %llu (set MOEC_TEST_SEED to repeat)\n",
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

void check(const Config &c, uint64_t seed) {
  SCOPED_TRACE("config " + c.name + ", seed " + std::to_string(seed));
  std::string failure = differential::checkForward(c, seed);
  EXPECT_TRUE(failure.empty()) << describe(c) << "\n" << failure;
}

std::vector<Config> configs() {
  std::vector<Config> list;
  auto add = [&](std::string name, auto edit) {
    Config c;
    c.name = std::move(name);
    edit(c);
    list.push_back(c);
  };
  add("small defaults", [](Config &) {});
  add("60 experts top-1, empty groups", [](Config &c) { c.experts = 60; c.k = 1; c.tokens = 9; });
  add("60 experts top-8 shared", [](Config &c) {
    c.experts = 60; c.k = 8; c.tokens = 33; c.shared = 40; });
  add("every token to one expert", [](Config &c) { c.hotExpert = 3; c.k = 1; c.tokens = 40; });
  add("hot expert top-4", [](Config &c) { c.hotExpert = 5; c.k = 4; c.tokens = 21; });
  add("one token", [](Config &c) { c.tokens = 1; c.k = 3; });
  add("odd sizes", [](Config &c) { c.hidden = 23; c.mlp = 19; c.tokens = 31; c.experts = 7; c.k = 3; });
  add("static tokens baseline", [](Config &c) { c.dynamicTokens = false; c.fusedW13 = false; });
  add("router weight, sigmoid", [](Config &c) {
    c.routerWeight = true; c.route.sigmoid = true; c.k = 3; });
  add("softmax_then_topk renormalize", [](Config &c) {
    c.route.softmaxThenTopk = true; c.route.renormalize = true; c.k = 4; });
  add("softmax_then_topk, no renormalize", [](Config &c) { c.route.softmaxThenTopk = true; c.k = 5; });
  add("sigmoid renormalize", [](Config &c) { c.route.sigmoid = true; c.route.renormalize = true; });
  add("nulls independent", [](Config &c) { c.route.nullExperts = 4; c.k = 4; });
  add("null draws independent, 60 experts top-8", [](Config &c) {
    c.experts = 60; c.k = 8; c.tokens = 37; c.nullFraction = 0.5; });
  add("null draws take_until_null renormalize, with null experts", [](Config &c) {
    c.route.nullExperts = 2; c.k = 4; c.nullFraction = 0.3; c.route.takeUntilNull = true;
    c.route.renormalize = true; });
  add("null draws, every slot null, shared", [](Config &c) {
    c.nullFraction = 1; c.shared = 16; });
  add("nulls take_until_null renormalize", [](Config &c) {
    c.route.nullExperts = 3; c.route.takeUntilNull = true; c.route.renormalize = true; c.k = 6; });
  add("all null", [](Config &c) {
    c.route.nullExperts = 4; c.route.takeUntilNull = true; c.nullsWin = true; c.k = 2; });
  add("all null with shared", [](Config &c) {
    c.route.nullExperts = 2; c.nullsWin = true; c.k = 2; c.shared = 16; });
  add("preweight scatter counting", [](Config &c) {
    c.preweight = true; c.scatter = true; c.packStrategy = "counting"; c.k = 3; });
  add("shared unfused, baseline", [](Config &c) {
    c.shared = 20; c.sharedFused = false; c.fusedW13 = false; });
  add("k = E", [](Config &c) { c.experts = 5; c.k = 5; });
  add("bf16 small", [](Config &c) { c.bf16 = true; });
  add("bf16 60 experts top-8 shared router", [](Config &c) {
    c.bf16 = true; c.experts = 60; c.k = 8; c.tokens = 17; c.shared = 24; c.routerWeight = true; });
  add("bf16 nulls preweight baseline", [](Config &c) {
    c.bf16 = true; c.route.nullExperts = 2; c.k = 3; c.preweight = true; c.fusedW13 = false; });
  // The fusion passes compute the same function.
  const std::string fuseW13 = "moe-expand-block,moe-fuse-w13";
  const std::string fuseShared = "moe-expand-block,moe-fuse-shared-expert";
  const std::string grouped = "moe-fuse-shared-expert{mode=grouped}";
  add("fuse-w13 from baseline", [&](Config &c) { c.fusedW13 = false; c.k = 3; c.passes = fuseW13; });
  add("fuse-w13 bf16 60 experts", [&](Config &c) {
    c.bf16 = true; c.fusedW13 = false; c.experts = 60; c.k = 8; c.tokens = 20; c.passes = fuseW13; });
  add("fuse shared matmul", [&](Config &c) {
    c.shared = 20; c.sharedFused = false; c.passes = fuseShared; });
  add("shared grouped, S = 2M", [&](Config &c) { c.shared = 48; c.mlp = 24; c.passes = grouped; });
  add("shared grouped padded, nulls", [&](Config &c) {
    c.shared = 30; c.mlp = 24; c.sharedFused = false; c.route.nullExperts = 3;
    c.route.takeUntilNull = true; c.k = 4; c.passes = grouped; });
  add("shared grouped bf16 preweight scatter", [&](Config &c) {
    c.bf16 = true; c.shared = 17; c.mlp = 12; c.preweight = true; c.scatter = true;
    c.fusedW13 = false; c.passes = grouped; });
  add("shared grouped, all null", [&](Config &c) {
    c.shared = 16; c.route.nullExperts = 2; c.nullsWin = true; c.passes = grouped; });
  // The gmm code: the reference loops, and microkernel tiles small enough
  // that every remainder (rows, columns, depth) and many tasks per group occur.
  add("reference gmm, odd sizes, nulls", [](Config &c) {
    c.toLLVM = "gmm-strategy=reference"; c.hidden = 23; c.mlp = 19; c.tokens = 31;
    c.route.nullExperts = 2; c.k = 3; });
  // Stage marks (moe-mark-stages) between the ops, the gmm fusions kept.
  add("stage timers, shared expert, nulls", [](Config &c) {
    c.toLLVM = "stage-timers=true"; c.shared = 16; c.route.nullExperts = 2; c.k = 3; });
  add("tiny tiles, odd sizes, hot expert", [](Config &c) {
    c.toLLVM = "gmm-tiling={mr=2,nv=2,kc=5,nc=32,mc=4}"; c.hidden = 37; c.mlp = 35;
    c.tokens = 45; c.hotExpert = 2; c.k = 3; });
  // One vector a row (AVX2's 6 x 16 tile): a SwiGLU's gate and up columns
  // share each vector's halves, 8 outputs a panel (35 = 4 x 8 + 3: a
  // partial one), of a fused w13 and of two weights.
  add("one-vector tiles, odd sizes, hot expert", [](Config &c) {
    c.toLLVM = "gmm-tiling={mr=5,nv=1,kc=7,nc=48,mc=10}"; c.hidden = 37; c.mlp = 35;
    c.tokens = 45; c.hotExpert = 2; c.k = 3; });
  add("one-vector tiles bf16 baseline, shared", [](Config &c) {
    c.toLLVM = "gmm-tiling={mr=6,nv=1,kc=16,nc=32,mc=12}"; c.bf16 = true; c.fusedW13 = false;
    c.hidden = 40; c.mlp = 33; c.tokens = 50; c.k = 4; c.shared = 16; });
  add("tall tiles bf16 baseline", [](Config &c) {
    // The tallest two-vector tile the host's register file holds (14 rows
    // with AVX-512's 32 vectors, 2 with AVX2's 8).
    std::string mr = std::to_string(mlir::moe::strategy::GmmTiling::maxRows(
        2, mlir::moe::strategy::MachineModel::target().vectorRegisters));
    c.toLLVM = "gmm-tiling={mr=" + mr + ",nv=2,kc=16,nc=32,mc=" + mr + "}"; c.bf16 = true; c.fusedW13 = false;
    c.hidden = 40; c.mlp = 33; c.tokens = 50; c.k = 4; });
  // AMX tiles (where the CPU has none, the same code's run-time fallback):
  // depth and width not multiples of the tiles, several row and column
  // blocks of one hot group (the packed weight block reused across them),
  // gathered rows with null slots, the two-gmm SwiGLU.
  add("amx bf16 odd sizes, nulls", [](Config &c) {
    c.toLLVM = "gmm-strategy=microkernel-amx"; c.bf16 = true; c.tokens = 70; c.hidden = 45;
    c.mlp = 37; c.experts = 3; c.k = 2; c.route.nullExperts = 1; });
  add("amx bf16 hot expert, many blocks, baseline", [](Config &c) {
    c.toLLVM = "gmm-strategy=microkernel-amx"; c.bf16 = true; c.fusedW13 = false;
    c.tokens = 300; c.hidden = 530; c.mlp = 40; c.experts = 4; c.k = 1; c.hotExpert = 2; });
  add("amx bf16 small and large groups, preweight", [](Config &c) {
    c.toLLVM = "gmm-strategy=microkernel-amx"; c.bf16 = true; c.preweight = true;
    c.tokens = 40; c.hidden = 64; c.mlp = 48; c.experts = 6; c.k = 3; c.hotExpert = 4; });
  // AVX512_BF16 dot products for every bf16 group: groups over several row
  // tasks, an odd number of column pairs (the register tile's second pair
  // clamped), depth not a multiple of 32, several column blocks, one token.
  add("avx512bf16 odd sizes, nulls", [](Config &c) {
    c.toLLVM = "gmm-strategy=microkernel-avx512bf16"; c.needsAvx512Bf16 = true; c.bf16 = true;
    c.tokens = 70; c.hidden = 45; c.mlp = 37; c.experts = 3; c.k = 2; c.route.nullExperts = 1; });
  add("avx512bf16 hot expert, many blocks, baseline", [](Config &c) {
    c.toLLVM = "gmm-strategy=microkernel-avx512bf16"; c.needsAvx512Bf16 = true; c.bf16 = true;
    c.fusedW13 = false; c.tokens = 300; c.hidden = 530; c.mlp = 40; c.experts = 4; c.k = 1;
    c.hotExpert = 2; });
  add("avx512bf16 one token top-8, shared", [](Config &c) {
    c.toLLVM = "gmm-strategy=microkernel-avx512bf16"; c.needsAvx512Bf16 = true; c.bf16 = true;
    c.tokens = 1; c.experts = 10; c.k = 8; c.hidden = 33; c.mlp = 17; c.shared = 20; });
  // int8 (moe-quantize), against the reference's int8 block: every mode, both
  // weight scales, each gmm lowering (the fast kernel: AMX, AVX512-VNNI or
  // AVX2's vpmaddwd, whichever the host has; the i32 vector task; the
  // reference loops),
  // gathered rows with nulls, hot experts over several tasks, odd sizes.
  add("int8 small defaults", [](Config &c) { c.quant = "int8"; });
  add("int8 60 experts top-8 shared, per expert", [](Config &c) {
    c.quant = "int8"; c.perExpertScales = true; c.experts = 60; c.k = 8; c.tokens = 33;
    c.shared = 40; });
  add("int8 odd sizes, nulls, baseline unfused shared", [](Config &c) {
    c.quant = "int8"; c.hidden = 23; c.mlp = 19; c.tokens = 31; c.experts = 7; c.k = 3;
    c.route.nullExperts = 2; c.fusedW13 = false; c.shared = 13; c.sharedFused = false; });
  add("int8 hot expert, many tasks", [](Config &c) {
    c.quant = "int8"; c.tokens = 300; c.hidden = 70; c.mlp = 150; c.experts = 4; c.k = 1;
    c.hotExpert = 2; });
  add("int8_routed shared float, preweight scatter", [](Config &c) {
    c.quant = "int8_routed"; c.shared = 20; c.preweight = true; c.scatter = true; c.k = 3; });
  add("fake_int8 odd sizes, nulls", [](Config &c) {
    c.quant = "fake_int8"; c.hidden = 23; c.mlp = 19; c.tokens = 31; c.route.nullExperts = 2;
    c.k = 3; c.shared = 9; });
  add("int8 reference gmm", [](Config &c) {
    c.quant = "int8"; c.toLLVM = "gmm-strategy=reference"; c.hidden = 29; c.k = 3; c.shared = 8; });
  add("int8 vector task, per expert, baseline", [](Config &c) {
    c.quant = "int8"; c.toLLVM = "gmm-strategy=microkernel-fma"; c.perExpertScales = true;
    c.fusedW13 = false; c.tokens = 60; c.hidden = 41; c.mlp = 33; c.k = 4; });
  add("int8 null draws, 60 experts top-8", [](Config &c) {
    c.quant = "int8"; c.experts = 60; c.k = 8; c.tokens = 37; c.nullFraction = 0.5; });
  // The open models' layers (shared/docs/model-families.md), each at odd
  // sizes on the host's default kernels, in bf16 on one kernel kind each
  // (AVX512_BF16 dot products, AMX or its fallback, the FMA tiles, tiny
  // tiles with every remainder, the reference loops), on a mesh in each EP
  // dispatch (sharded equals one device), and in int8 (the fast kernel and
  // the reference loops).
  const char *families[] = {"mixtral", "qwen2_moe", "qwen3_moe", "olmoe",
                            "deepseek_v2", "deepseek_v3", "gpt_oss", "llama4"};
  const char *bf16Kernels[] = {"gmm-strategy=microkernel-avx512bf16", "gmm-strategy=microkernel-amx",
                               "gmm-strategy=microkernel-fma",
                               "gmm-tiling={mr=2,nv=2,kc=5,nc=32,mc=4}", "gmm-strategy=reference"};
  const char *dispatches[] = {"compact", "dense", "ring", "a2a"};
  int familyIndex = 0;
  for (const char *family : families) {
    int i = familyIndex++;
    auto familyConfig = [&](std::string what, int64_t tokens, int64_t hidden, int64_t mlp,
                            int64_t experts, int64_t k, auto edit) {
      Config c;
      differential::familyCase(family, tokens, hidden, mlp, experts, k, c);
      c.name = std::string(family) + " " + what;
      edit(c);
      list.push_back(c);
    };
    familyConfig("f32 odd sizes", 37, 40, 19, 8, 3, [](Config &) {});
    familyConfig("f32 wide", 50, 96, 72, 16, 4, [](Config &c) { c.dynamicTokens = false; });
    familyConfig("bf16", 45, 64, 40, 8, 2, [&](Config &c) {
      c.bf16 = true;
      c.toLLVM = bf16Kernels[i % 5];
      c.needsAvx512Bf16 = i % 5 == 0;
    });
    // One-vector SwiGLU tiles: GPT-OSS's interleaved pairs (with biases)
    // deinterleaved within a vector, the others' gate and up halves.
    familyConfig("f32 one-vector tiles", 29, 24, 21, 8, 2,
                 [](Config &c) { c.toLLVM = "gmm-tiling={mr=4,nv=1,kc=9,nc=32,mc=8}"; });
    familyConfig("f32 reference gmm", 21, 33, 17, 8, 2,
                 [](Config &c) { c.toLLVM = "gmm-strategy=reference"; });
    for (int d = 0; d < 4; ++d)
      familyConfig(std::string("on a mesh, ") + dispatches[d], 16, 32, 24, 8, 2, [&](Config &c) {
        c.dynamicTokens = false;
        c.epDispatch = dispatches[d];
        c.mesh = (i + d) % 2 ? "data=2,expert=2" : "expert=2";
      });
    familyConfig("int8", 29, 40, 24, 8, 2, [](Config &c) { c.quant = "int8"; });
    familyConfig("int8 per expert, reference gmm", 17, 24, 16, 8, 2, [](Config &c) {
      c.quant = "int8";
      c.perExpertScales = true;
      c.toLLVM = "gmm-strategy=reference";
    });
  }
  // A few drawn at random (from the base seed) by the block fuzzer's
  // generator: sizes, every switch, every pipeline, meshes.
  differential::RandomChoices choices(baseSeed() ^ 0x5eed);
  for (int i = 0; i < 8; ++i) {
    Config c = differential::randomCase(choices, /*backward=*/false);
    c.name = "random " + std::to_string(i);
    list.push_back(c);
  }
  return list;
}

// The families' layers at their real models' sizes (from each config.json),
// few tokens, bf16 as the checkpoints store them: the ones whose layer fits
// in memory beside its reference copy (the largest here, GPT-OSS-20B's, is
// 1.6 GB of bf16 weights and 3.2 GB of their float values). Mixtral-8x7B,
// Llama-4-Scout and DeepSeek-V3 layers are compiled by the examples test.
struct RealSize {
  const char *name, *family;
  int64_t hidden, mlp, experts, k, shared;
  int64_t groups = 0, topkGroups = 0; // 0: familyCase's
  double routedScaling = 0;           // 0: familyCase's
};
std::vector<RealSize> realSizes() {
  std::vector<RealSize> list = {{"OLMoE-1B-7B", "olmoe", 2048, 1024, 64, 8, 0},
                                {"Qwen3-30B-A3B", "qwen3_moe", 2048, 768, 128, 8, 0},
                                {"Qwen1.5-MoE-A2.7B", "qwen2_moe", 2048, 1408, 60, 4, 5632},
                                {"DeepSeek-V2-Lite", "deepseek_v2", 2048, 1408, 64, 6, 2816, 1, 1,
                                 1.0},
                                {"GPT-OSS-20B", "gpt_oss", 2880, 2880, 32, 4, 0}};
  // The two larger layers need 9 and 13 GB here (bf16 weights and their
  // float values): on request, not in every run (MOEC_TEST_LARGE_LAYERS=1).
  if (const char *large = std::getenv("MOEC_TEST_LARGE_LAYERS"); large && *large == '1') {
    list.push_back({"Mixtral-8x7B", "mixtral", 4096, 14336, 8, 2, 0});
    list.push_back({"Llama-4-Scout", "llama4", 5120, 8192, 16, 1, 8192});
  }
  return list;
}

class RealSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(RealSizes, MatchReference) {
  RealSize r = realSizes()[GetParam()];
  Config c;
  ASSERT_TRUE(differential::familyCase(r.family, 3, r.hidden, r.mlp, r.experts, r.k, c));
  c.name = r.name;
  c.bf16 = true;
  c.shared = r.shared ? r.shared : c.shared;
  if (r.groups) {
    c.route.groups = r.groups;
    c.route.topkGroups = r.topkGroups;
    c.route.groupScoreTop2Sum = false;
  }
  if (r.routedScaling)
    c.route.routedScaling = r.routedScaling;
  check(c, baseSeed() + GetParam());
}
INSTANTIATE_TEST_SUITE_P(Families, RealSizes, ::testing::Range<size_t>(0, realSizes().size()));

class Numerics : public ::testing::TestWithParam<size_t> {};

TEST_P(Numerics, MatchesReference) {
  static const std::vector<Config> all = configs();
  if (all[GetParam()].needsAvx512Bf16 && !mlir::moe::strategy::MachineModel::target().avx512Bf16)
    GTEST_SKIP() << "this CPU has no AVX512_BF16";
  check(all[GetParam()], baseSeed() + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Blocks, Numerics, ::testing::Range<size_t>(0, configs().size()));

// moe-generate-backward: the compiled loss and gradients of mean(y^2),
// routing fixed by the logits (so the loss is smooth in x and the weights)
// or, with routing-grad, through the routing weights to the logits or the
// router weight (the selection is piecewise constant: the loss is smooth
// where it does not change), held to (1) the reference's analytic backward
// at every element, (2) central finite differences of the reference's loss
// in double at a sample of coordinates of every gradient, and (3)
// themselves under every remat policy (moe-remat), which must not change a
// gradient beyond 1e-6 relative.

/// The columns the top-k chose, before any nulling renames them (with
/// take_until_null a nulled slot's id no longer names its column, whose
/// logit a softmax over the top-k still reads).
std::vector<int32_t> chosenColumns(const Config &c, const std::vector<float> &x,
                                   const std::vector<float> &router,
                                   const std::vector<float> &routerBias,
                                   const std::vector<float> &selectionBias) {
  // Chosen by scores (groups, a selection bias): as the block chooses, no
  // null experts to rename a column.
  if (c.selectionBias || c.route.groups > 1)
    return differential::routeOf(c, x, router, {}, routerBias, selectionBias).ids;
  reference::RouteConfig rc;
  rc.k = c.k;
  return reference::route(differential::logitsOf(c, x, router, routerBias), c.tokens,
                          c.experts + c.route.nullExperts, rc)
      .ids;
}

void checkGradients(const Config &c, uint64_t seed) {
  SCOPED_TRACE("config " + c.name + ", seed " + std::to_string(seed));
  std::mt19937_64 inputRng(seed);
  Inputs in = differential::makeInputs(c, inputRng);
  // (1) is the analytic backward, in the order of the compiled results.
  const differential::ReferenceGradients expected = differential::referenceGradients(c, in);
  std::vector<float> x = in.args[0].values;
  std::vector<float> router = in.args[1].values; // logits or router weight
  std::vector<float> routerBias = in.valuesOf(in.routerBiasArg);
  const std::vector<float> selectionBias = in.valuesOf(in.selectionBiasArg);
  reference::BlockWeights w = in.w;
  reference::BlockShape shape = differential::shapeOf(c);
  const std::vector<float> draws = in.valuesOf(in.drawsArg);
  const reference::Routing routing = differential::routeOf(c, in);
  // The loss at perturbed inputs; with routing-grad the routing follows the
  // inputs. `smooth` says whether the loss is still on the base's smooth
  // piece: the same selection, and (gpt_oss) every pre-activation on the
  // same side of its clamps (a step across one measures no derivative).
  const std::vector<int32_t> baseColumns =
      chosenColumns(c, x, router, routerBias, selectionBias);
  const std::vector<int8_t> baseSides = reference::clampSides(x, routing, shape, w, c.k);
  auto referenceLoss = [&](bool &smooth) {
    reference::Routing r =
        c.routingGrad ? differential::routeOf(c, x, router, draws, routerBias, selectionBias)
                      : routing;
    smooth = (!c.routingGrad ||
              chosenColumns(c, x, router, routerBias, selectionBias) == baseColumns) &&
             reference::clampSides(x, r, shape, w, c.k) == baseSides;
    return reference::meanSquare(reference::block(x, r, shape, w, c.k));
  };

  std::string backward = differential::backwardPass(c);
  std::vector<std::string> policies = {"none", "expert_mlp", "combine"};
  if (!c.dynamicTokens) { // auto weighs bytes: static shapes only
    int64_t budget = differential::budgetBelowNone(program(c), backward);
    ASSERT_GT(budget, 0);
    policies.push_back("auto activation-budget=" + std::to_string(budget));
  }
  std::vector<std::vector<Buffer>> byPolicy;
  for (const std::string &policy : policies) {
    SCOPED_TRACE("remat policy " + policy);
    std::mt19937_64 again(seed); // the same inputs for every policy
    Inputs fresh = differential::makeInputs(c, again);
    std::vector<Buffer> results;
    std::string error;
    ASSERT_TRUE(differential::compileAndRun(
        program(c), backward + ",func.func(moe-remat{policy=" + policy + "})",
        "moe_block_forward_backward", "moe-to-llvm{" + c.toLLVM + "}", fresh.args, results, error))
        << error;
    byPolicy.push_back(std::move(results));
  }
  const std::vector<Buffer> &results = byPolicy[0];
  // The loss, then x, the logits or router weight (routing-grad only) and
  // every weight (the null draws have no gradient).
  size_t gradients = expected.grads.size();
  ASSERT_EQ(results.size(), 1 + gradients);

  // bf16 stores every activation and gradient rounded to 8 bits of
  // mantissa (products accumulate in f32): percent-level agreement.
  double lossTolerance = c.bf16 ? 2e-2 : 1e-5, gradTolerance = c.bf16 ? 4e-2 : 1e-4;
  // Policies agree to 1e-6 in f32. In bf16 they round differently, by
  // design: where the backward keeps h, the forward stores h in bf16 and
  // computes a from it; where h is recomputed, the forward's gmm applies
  // SwiGLU to its f32 sums (the fused epilogue) and h is never rounded.
  double rematTolerance = c.bf16 ? gradTolerance : 1e-6;
  EXPECT_NEAR(results[0].at(0), expected.loss, lossTolerance * std::max(1.0, expected.loss));

  std::mt19937_64 rng(seed + 1);
  constexpr double kStep = 1e-3;
  for (size_t g = 0; g < gradients; ++g) {
    size_t arg = expected.argOf[g];
    const Buffer &grad = results[1 + g];
    std::vector<float> &values = arg == 0                      ? x
                                 : arg == 1                    ? router
                                 : int(arg) == in.routerBiasArg ? routerBias
                                                               : w.*in.weightOf[arg];
    ASSERT_EQ(grad.numElements(), int64_t(values.size())) << "gradient of argument " << arg;
    double scale = 0;
    for (int64_t i = 0; i < grad.numElements(); ++i)
      scale = std::max(scale, std::fabs(double(grad.at(i))));

    // (1) Every element against the analytic backward.
    const std::vector<double> &exact = expected.grads[g];
    ASSERT_EQ(exact.size(), values.size());
    for (int64_t i = 0; i < grad.numElements(); ++i)
      ASSERT_NEAR(grad.at(i), exact[i], gradTolerance * scale + 1e-9)
          << "analytic d loss / d argument " << arg << " element " << i;

    // (2) A sample against finite differences of the loss, at coordinates
    // where the step stays on the loss's smooth piece.
    int sample = 0;
    for (int tries = 0; sample < 6 && tries < 60; ++tries) {
      size_t i = rng() % values.size();
      float saved = values[i];
      bool smoothUp, smoothDown;
      values[i] = saved + float(kStep);
      double up = referenceLoss(smoothUp);
      values[i] = saved - float(kStep);
      double down = referenceLoss(smoothDown);
      values[i] = saved;
      if (!smoothUp || !smoothDown)
        continue;
      ++sample;
      double fd = (up - down) / (2 * kStep);
      EXPECT_NEAR(grad.at(i), fd, (c.bf16 ? gradTolerance : 2e-3) * scale + 1e-6)
          << "d loss / d argument " << arg << " element " << i << " (max |gradient| " << scale << ")";
    }
    EXPECT_GE(sample, 3) << "too few coordinates of argument " << arg
                         << " stay on the loss's smooth piece under the step";

    // (3) The same gradient under every remat policy.
    for (size_t p = 1; p < policies.size(); ++p) {
      ASSERT_EQ(byPolicy[p].size(), results.size()) << policies[p];
      const Buffer &other = byPolicy[p][1 + g];
      for (int64_t i = 0; i < grad.numElements(); ++i)
        ASSERT_NEAR(other.at(i), grad.at(i), rematTolerance * scale)
            << "remat " << policies[p] << ": d loss / d argument " << arg << " element " << i;
    }
  }
}

std::vector<Config> gradientConfigs() {
  std::vector<Config> list;
  auto add = [&](std::string name, auto edit) {
    Config c;
    c.name = std::move(name);
    c.tokens = 13; c.hidden = 12; c.mlp = 10; c.experts = 4; c.k = 2;
    c.dynamicTokens = false; // as a training step compiles it (remat auto needs it)
    edit(c);
    list.push_back(c);
  };
  add("fused_w13", [](Config &) {});
  add("baseline, shared expert unfused, dynamic tokens", [](Config &c) {
    c.fusedW13 = false; c.shared = 7; c.sharedFused = false; c.dynamicTokens = true; });
  add("shared fused, preweight, scatter, top-3", [](Config &c) {
    c.shared = 9; c.preweight = true; c.scatter = true; c.k = 3; });
  add("null experts, reference gmm", [](Config &c) {
    c.route.nullExperts = 2; c.toLLVM = "gmm-strategy=reference"; });
  add("stage timers, shared expert", [](Config &c) {
    c.toLLVM = "stage-timers=true"; c.shared = 9; });
  // Backward kernels over several depth tiles and column blocks, remainders
  // in both, a hot expert (one group holding most rows: more than one of
  // the tgmm kernel's chunks, at most 80 rows on the FMA tiles and 160 on
  // AVX512_BF16's row pairs, an odd count leaving a pair half empty).
  // bf16 storage: the backward's kernels accumulate in f32 and round the
  // gradients once (tgmm's f32 register tiles and the block that carries
  // them between chunks, the transposed gmm's tiles).
  // Hidden 136: dW2's first 128-column block lies inside N (the tgmm's
  // unmasked bf16 store), its second passes N (the masked one).
  add("bf16, shared expert, hot expert over two tgmm chunks", [](Config &c) {
    c.bf16 = true; c.tokens = 171; c.hidden = 136; c.mlp = 24; c.experts = 3; c.hotExpert = 0;
    c.shared = 8; });
  // tgmm tasks are 128 columns by 192 depth values: hidden 200 and 2M = 74
  // (gate|up) make the down and up projections' weight gradients span two
  // column blocks and two depth blocks, with remainders.
  add("wide, hot expert, several tiles and tgmm blocks", [](Config &c) {
    c.tokens = 75; c.hidden = 200; c.mlp = 37; c.experts = 3; c.hotExpert = 1; });
  // Through the router: softmax over the top-k into the logits; sigmoid,
  // renormalised, preweighted (scale_rows gives the weights' gradient) into
  // the router weight and x; softmax over all with null experts scored by
  // the router, take-until-null, scatter combine (not renormalised: that
  // would cancel the softmax denominator's gradient to the columns not
  // chosen, which this case is here to check).
  add("routing-grad, logits", [](Config &c) { c.routingGrad = true; });
  add("routing-grad, router weight, sigmoid renormalised, preweight, shared expert",
      [](Config &c) {
        c.routingGrad = true; c.routerWeight = true; c.route.sigmoid = true;
        c.route.renormalize = true; c.preweight = true; c.shared = 5; c.k = 3; });
  add("routing-grad, softmax over all, null experts take-until-null, dynamic", [](Config &c) {
    c.routingGrad = true; c.route.softmaxThenTopk = true; c.route.nullExperts = 2;
    c.route.takeUntilNull = true; c.scatter = true; c.dynamicTokens = true; c.k = 3; });
  add("null draws take_until_null renormalize, fixed routing", [](Config &c) {
    c.nullFraction = 0.4; c.route.takeUntilNull = true; c.route.renormalize = true; c.k = 3; });
  add("routing-grad through null draws, shared expert", [](Config &c) {
    c.routingGrad = true; c.nullFraction = 0.5; c.k = 3; c.shared = 16; });
  // Every family, f32, through the router (the router bias, the routed
  // scaling, the selection bias and groups held fixed, the weighted
  // input, the shared gate, GPT-OSS's clamped activation and biases).
  for (const char *family : {"mixtral", "qwen2_moe", "qwen3_moe", "olmoe", "deepseek_v2",
                             "deepseek_v3", "gpt_oss", "llama4"}) {
    Config c;
    differential::familyCase(family, 13, 12, 10, 8, 2, c);
    c.name = std::string(family) + ", routing-grad";
    c.dynamicTokens = false;
    c.routingGrad = true;
    list.push_back(c);
  }
  Config bf16;
  differential::familyCase("gpt_oss", 20, 16, 12, 4, 2, bf16);
  bf16.name = "gpt_oss bf16";
  bf16.dynamicTokens = false;
  bf16.bf16 = true;
  list.push_back(bf16);
  return list;
}

class Gradients : public ::testing::TestWithParam<size_t> {};

TEST_P(Gradients, MatchFiniteDifferences) {
  static const std::vector<Config> all = gradientConfigs();
  checkGradients(all[GetParam()], baseSeed() + 500 + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Blocks, Gradients, ::testing::Range<size_t>(0, gradientConfigs().size()));

/// Parses `source` (one public function), lowers it with moe-to-llvm and
/// runs it on `inputs`: its results, or none with `error` saying which step
/// failed.
std::optional<std::vector<Buffer>> compileAndRun(const std::string &source,
                                                 std::vector<Buffer> &inputs,
                                                 std::string &error) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) {
    error = "the program does not parse";
    return std::nullopt;
  }
  auto sig = entrySignature(*module, "", error);
  if (!sig)
    return std::nullopt;
  if (mlir::failed(lowerModule(*module))) {
    error = "moe-to-llvm failed";
    return std::nullopt;
  }
  auto jit = JitProgram::create(*module, error);
  if (!jit)
    return std::nullopt;
  return jit->run(*sig, inputs, error);
}

// A function of moe.route on [?, columns] f32 logits, `attributes` after
// `top k`, returning the ids and weights.
std::string routeFunction(int64_t columns, int64_t k, const std::string &attributes) {
  std::ostringstream src;
  std::string lt = tensorType({-1, columns}, "f32");
  std::string results = tensorType({-1, k}, "i32") + ", " + tensorType({-1, k}, "f32");
  src << "func.func @route(%l: " << lt << ") -> (" << results << ") {\n  %i, %w = moe.route %l top "
      << k << attributes << " : " << lt << "\n  return %i, %w : " << results << "\n}\n";
  return src.str();
}

// Runs routeFunction's `src` on `logits` [T, columns]: its T x k ids exactly,
// weights to float precision (NaN where the reference's are NaN).
void expectRouting(const std::string &src, Tensor logits, const reference::Routing &expected,
                   int64_t T, int64_t k) {
  std::vector<Buffer> inputs;
  inputs.push_back(std::move(logits.buffer));
  std::string error;
  std::optional<std::vector<Buffer>> results = compileAndRun(src, inputs, error);
  ASSERT_TRUE(results) << error;
  for (int64_t i = 0; i < T * k; ++i) {
    std::string where = "token " + std::to_string(i / k) + ", slot " + std::to_string(i % k);
    ASSERT_EQ((*results)[0].as<int32_t>()[i], expected.ids[i]) << where;
    float got = (*results)[1].as<float>()[i], want = expected.weights[i];
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(got)) << where << ": " << got;
    else
      ASSERT_NEAR(got, want, 1e-6) << where;
  }
}

// moe.route on its own: ids exactly (including the ids of nulled slots,
// which the block's output cannot show), weights to float precision.
TEST(RouteNumerics, IdsAndWeightsMatchReference) {
  uint64_t seed = baseSeed() + 1000;
  std::mt19937_64 rng(seed);
  struct Case {
    int64_t columns, k, nulls;
    bool sigmoid, overAll, renormalize, untilNull;
  };
  std::vector<Case> cases = {
      {8, 2, 0, false, false, false, false}, {60, 8, 0, false, true, false, false},
      {12, 4, 4, false, false, true, true},  {12, 6, 3, true, true, true, true},
      {10, 10, 2, false, true, true, false}, {7, 1, 0, true, false, false, false},
  };
  for (const Case &c : cases) {
    int64_t T = 37;
    std::string attributes = std::string(c.sigmoid ? " scoring sigmoid" : "") +
                             (c.overAll ? " order softmax_then_topk" : "") + (c.renormalize ? " renormalize" : "");
    if (c.nulls)
      attributes += " null_experts " + std::to_string(c.nulls) + (c.untilNull ? " null_policy take_until_null" : "");
    std::string src = routeFunction(c.columns, c.k, attributes);
    SCOPED_TRACE(src + "seed " + std::to_string(seed));
    Tensor logits = randomTensor(rng, DType::F32, {T, c.columns}, 1.0f);
    reference::RouteConfig rc{c.k, c.sigmoid, c.overAll, c.renormalize, c.nulls, c.untilNull};
    reference::Routing expected = reference::route(logits.values, T, c.columns, rc);
    ASSERT_NO_FATAL_FAILURE(expectRouting(src, std::move(logits), expected, T, c.k));
  }
}

// The selection's edge values against the reference scan (ties to the
// lower id, strictly greater replaces): logits drawn from a few values with
// ties, -0 beside +0, -inf and NaN, and tokens of all -inf, all NaN, a NaN
// first, all equal; column counts around the 16 columns the route selects
// from at once, and k equal to the columns. The weights too: NaN where
// the reference's are.
TEST(RouteNumerics, SelectionOfTiesInfinitiesAndNaNsMatchesTheScan) {
  uint64_t seed = baseSeed() + 3000;
  std::mt19937_64 rng(seed);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const float palette[] = {1.0f, 1.0f, 0.0f, -0.0f, -inf, nan, 2.5f, -3.0f, 2.5f};
  struct Case {
    int64_t columns, k;
  };
  for (Case c : std::vector<Case>{{5, 3}, {5, 5}, {16, 16}, {17, 8}, {17, 17}, {33, 6}, {60, 8}}) {
    int64_t T = 24;
    std::string src = routeFunction(c.columns, c.k, "");
    SCOPED_TRACE(src + "seed " + std::to_string(seed));
    Tensor logits = randomTensor(rng, DType::F32, {T, c.columns}, 1.0f);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < c.columns; ++j) {
        float v = palette[rng() % std::size(palette)];
        if (t == 0) v = -inf;               // all -inf: the first columns, in order
        if (t == 1) v = nan;                // all NaN: the same
        if (t == 2) v = j == 0 ? nan : v;   // a NaN first: kept by the scan
        if (t == 3) v = 0.5f;               // all equal
        if (t == 4) v = j % 2 ? -0.0f : 0.0f;
        logits.values[t * c.columns + j] = v;
        logits.buffer.as<float>()[t * c.columns + j] = v;
      }
    reference::RouteConfig rc{c.k, false, false, false, 0, false};
    reference::Routing expected = reference::route(logits.values, T, c.columns, rc);
    ASSERT_NO_FATAL_FAILURE(expectRouting(src, std::move(logits), expected, T, c.k));
  }
}

// moe.route_grad where the router is sure of one expert (its logit 20 above
// the rest, as a trained router can be): the gradient of every logit,
// including the top one's (p rounds to 1.0f there and ds - s . ds cancels to
// 0 in the textbook formula), against double precision, relative to the
// largest element and with no absolute floor.
TEST(RouteNumerics, SaturatedRouterGradientMatchesDoublePrecision) {
  uint64_t seed = baseSeed() + 2000;
  std::mt19937_64 rng(seed);
  struct Case {
    int64_t columns, k;
    bool sigmoid, overAll, renormalize;
  };
  std::vector<Case> cases = {
      {16, 5, false, true, false}, {16, 4, false, false, false}, {16, 4, false, true, true},
      {9, 2, true, false, false},  {60, 8, false, true, false},
  };
  for (const Case &c : cases) {
    int64_t T = 29;
    std::ostringstream src;
    std::string lt = tensorType({-1, c.columns}, "f32"), wt = tensorType({-1, c.k}, "f32");
    src << "func.func @route_grad(%dw: " << wt << ", %l: " << lt << ") -> " << lt
        << " {\n  %g = moe.route_grad %dw, %l" << (c.sigmoid ? " scoring sigmoid" : "")
        << (c.overAll ? " order softmax_then_topk" : "") << (c.renormalize ? " renormalize" : "")
        << " : " << wt << ", " << lt << "\n  return %g : " << lt << "\n}\n";
    SCOPED_TRACE(src.str() + "seed " + std::to_string(seed));
    Tensor logits = randomTensor(rng, DType::F32, {T, c.columns}, 1.0f);
    // One hot column per token; with the sigmoid every chosen column is
    // hot (its gradient ds s (1 - s) ~ 2e-9 ds is what is checked, not
    // dwarfed by a cooler chosen column's).
    for (int64_t t = 0; t < T; ++t) {
      int64_t first = int64_t(rng() % uint64_t(c.columns - c.k + 1));
      for (int64_t hot = first; hot < first + (c.sigmoid ? c.k : 1); ++hot) {
        logits.values[t * c.columns + hot] += 20.0f;
        logits.buffer.as<float>()[t * c.columns + hot] = logits.values[t * c.columns + hot];
      }
    }
    Tensor dweights = randomTensor(rng, DType::F32, {T, c.k}, 4.0f);
    reference::RouteConfig rc{c.k, c.sigmoid, c.overAll, c.renormalize, 0, false};
    std::vector<double> expected = reference::routeBackward(
        reference::toF64(logits.values), T, c.columns, rc, reference::toF64(dweights.values));

    std::vector<Buffer> inputs;
    inputs.push_back(std::move(dweights.buffer));
    inputs.push_back(std::move(logits.buffer));
    std::string error;
    std::optional<std::vector<Buffer>> results = compileAndRun(src.str(), inputs, error);
    ASSERT_TRUE(results) << error;
    // Per token: relative to that token's largest gradient, which is itself
    // near e^-20 times ds in the softmax cases.
    for (int64_t t = 0; t < T; ++t) {
      double scale = 0;
      for (int64_t j = 0; j < c.columns; ++j)
        scale = std::max(scale, std::fabs(expected[t * c.columns + j]));
      ASSERT_GT(scale, 0.0) << "token " << t;
      for (int64_t j = 0; j < c.columns; ++j)
        ASSERT_NEAR((*results)[0].as<float>()[t * c.columns + j], expected[t * c.columns + j],
                    1e-4 * scale)
            << "token " << t << ", column " << j;
    }
  }
}


} // namespace
