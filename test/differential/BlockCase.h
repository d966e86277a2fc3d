//===- BlockCase.h - one MoE block, compiled and held to the reference -*- C++ -*-===//
//
// Differential testing of the whole compiler: a BlockCase describes an MoE
// block (shapes, routing, null routing, fusions, int8, gmm strategy, mesh);
// program() writes it as a moe.block function, makeInputs() draws its
// arguments, and checkForward()/checkBackward() compile it through the real
// pipeline (moe-partition, the fusion passes, moe-quantize,
// moe-generate-backward, moe-remat, moe-to-llvm, the JIT, in-process shards)
// and compare what it computes with the plain C++ reference
// (test/reference). The numerics tests run hand-picked cases through it,
// the block fuzzer (fuzz/) random ones.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TEST_DIFFERENTIAL_BLOCKCASE_H
#define MOEC_TEST_DIFFERENTIAL_BLOCKCASE_H

#include "reference/Reference.h"
#include "runtime/Signature.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace moec::differential {

struct BlockCase {
  std::string name;
  int64_t tokens = 16, hidden = 32, mlp = 24, experts = 8, k = 2, shared = 0;
  bool bf16 = false, dynamicTokens = true, fusedW13 = true, sharedFused = true;
  bool routerWeight = false, preweight = false, scatter = false;
  reference::RouteConfig route;
  const char *packStrategy = nullptr;
  std::string passes;           // pipeline before moe-to-llvm (fusions), if any
  std::string toLLVM;           // moe-to-llvm options (gmm strategy and tiles)
  int64_t hotExpert = -1;       // every token's top choice, when >= 0
  bool nullsWin = false;        // null experts score highest
  bool needsAvx512Bf16 = false; // skipped on a host without it
  bool routingGrad = false;     // gradients through the router (f32)
  double nullFraction = -1;     // >= 0: benchmark null routing over draws
  std::string quant;            // moe-quantize mode (int8, int8_routed, fake_int8), f32 only
  bool perExpertScales = false; // with quant: one weight scale per expert
  std::string mesh;             // moe-partition's mesh (e.g. data=2,expert=2); none if empty
  std::string epDispatch = "compact"; // with an expert axis
  // The open models' variants (shared/docs/model-families.md); the routing
  // ones (groups, group score, routed scaling) are in `route`, whose
  // selectionBias values makeInputs draws when `selectionBias` is set.
  bool routerBias = false;    // router_bias(...) (GPT-OSS); needs routerWeight
  bool selectionBias = false; // selection_bias(...) (DeepSeek-V3)
  bool expertBias = false;    // gate_up_bias (fused w13) and down_bias (GPT-OSS)
  bool gptOss = false;        // activation gpt_oss
  bool interleaved = false;   // gate/up columns interleaved (fused w13)
  bool weightInput = false;   // the weight scales the expert's input (Llama-4)
  bool sharedGate = false;    // shared_gate(...) (Qwen2-MoE); needs shared > 0
  std::string family;         // the block's family attribute, if any
};

/// The reference's shape of `c`'s block (sizes and expert variants).
reference::BlockShape shapeOf(const BlockCase &c);

/// A block of one family (mixtral, qwen2_moe, qwen3_moe, olmoe, deepseek_v2,
/// deepseek_v3, gpt_oss, llama4) at the given sizes, with the family's
/// routing and experts and its name on the block; false for an unknown name.
bool familyCase(const std::string &family, int64_t tokens, int64_t hidden, int64_t mlp,
                int64_t experts, int64_t k, BlockCase &c);

/// "tensor<?x32xf32>" for {-1, 32}, "f32".
std::string tensorType(const std::vector<int64_t> &shape, const std::string &element);

/// The block as MLIR, function @moe_block, with its arguments in order: x,
/// router (logits or weight), null draws, expert weights, shared weights.
std::string program(const BlockCase &c);

/// Every switch of `c` on one line, for a failure report.
std::string describe(const BlockCase &c);

/// A random tensor in the storage type, and the float values it holds.
struct Tensor {
  Buffer buffer;
  std::vector<float> values;
};
Tensor randomTensor(std::mt19937_64 &rng, DType dtype, std::vector<int64_t> shape, float scale,
                    float boostColumnFrom = -1, float boost = 0);

/// The arguments of program(c), random, and the weights as the reference
/// takes them (`weightOf[i]` names the reference vector of argument i, null
/// for x, the router and the draws; a weight's values are in `w` only).
struct Inputs {
  std::vector<Tensor> args;
  reference::BlockWeights w;
  std::vector<std::vector<float> reference::BlockWeights::*> weightOf;
  /// The arguments that are neither x, the router nor a BlockWeights
  /// member: their indices (-1 when absent).
  int drawsArg = -1, routerBiasArg = -1, selectionBiasArg = -1;
  const std::vector<float> &valuesOf(int arg) const {
    static const std::vector<float> none;
    return arg < 0 ? none : args[arg].values;
  }
};
Inputs makeInputs(const BlockCase &c, std::mt19937_64 &rng);

/// The logits the block routes by (the argument, or x @ router), and its
/// routing of them, null draws applied.
std::vector<float> logitsOf(const BlockCase &c, const std::vector<float> &x,
                            const std::vector<float> &router,
                            const std::vector<float> &routerBias = {});
reference::Routing routeOf(const BlockCase &c, const std::vector<float> &x,
                           const std::vector<float> &router, const std::vector<float> &draws,
                           const std::vector<float> &routerBias = {},
                           const std::vector<float> &selectionBias = {});
/// The same, on `in`'s arguments.
reference::Routing routeOf(const BlockCase &c, const Inputs &in);

/// The passes before moe-to-llvm (c.passes, then moe-quantize for c.quant),
/// and the whole lowering pipeline after them ("" for the default).
std::string forwardPasses(const BlockCase &c);
std::string lowering(const BlockCase &c, const std::string &passes);

/// With weight-scales=expert, moe-quantize gives each weight tensor it
/// finds one scale per expert: after a fusion that concatenated gate and up
/// (moe-fuse-w13, moe-fuse-shared-expert, grouped or not), one scale covers
/// both. Fuses w1/w3 (sw1/sw3) into w13 (sw13) in `w` and `shape` where c's
/// passes do, so that the int8 reference scales as the compiled code does.
void fuseGateUpAsQuantized(const BlockCase &c, reference::BlockShape &shape,
                           reference::BlockWeights &w);

/// Parses `source`, runs `prepare` over it if given (moe-partition, the
/// backward), lowers it with `pipeline` (moe-to-llvm when empty), JIT-
/// compiles it and runs `entry` on `args` (their buffers moved out): on one
/// device, or, when the entry is a per-shard function, on every rank of its
/// mesh as threads of this process, inputs cut and results assembled by its
/// layout. False with the reason (the diagnostics included) on failure.
bool compileAndRun(const std::string &source, const std::string &prepare,
                   const std::string &entry, const std::string &pipeline,
                   std::vector<Tensor> &args, std::vector<Buffer> &results, std::string &error);

/// Compiles c's forward, runs it on inputs drawn from `seed`, and compares
/// it with reference::block (or blockInt8). Empty when it matches; else
/// what differs, where, and the program.
std::string checkForward(const BlockCase &c, uint64_t seed);

/// The reference's loss, mean(y^2), and its gradients in the order the
/// compiled forward_backward returns them: x, the logits or router weight
/// (routing-grad only), each weight (the draws have none). `argOf[g]` is the
/// argument gradient g belongs to.
struct ReferenceGradients {
  double loss = 0;
  std::vector<std::vector<double>> grads;
  std::vector<size_t> argOf;
};
ReferenceGradients referenceGradients(const BlockCase &c, const Inputs &in);

/// moe-generate-backward's pass for c (with routing-grad when asked).
std::string backwardPass(const BlockCase &c);

/// One byte under what remat policy none keeps for the backward of
/// `source`'s forward_backward after `prepare` (the backward pass): a budget
/// that makes moe-remat=auto recompute something. -1 if it cannot be sized.
int64_t budgetBelowNone(const std::string &source, const std::string &prepare);

/// Compiles c's forward_backward of mean(y^2) with remat `policy` (on c's
/// mesh, if any), runs it on inputs drawn from `seed`, and compares the loss
/// and every gradient with referenceGradients. Empty when they match.
std::string checkBackward(const BlockCase &c, const std::string &policy, uint64_t seed);

/// Where a random case's choices come from: a seeded generator (the
/// driver's runs) or the bytes libFuzzer mutates (each choice reads the
/// next bytes; past the end every choice is its lowest value).
class Choices {
public:
  virtual ~Choices() = default;
  /// A value in [lo, hi].
  virtual int64_t pick(int64_t lo, int64_t hi) = 0;
  bool coin() { return pick(0, 1) == 1; }
};

class RandomChoices : public Choices {
public:
  explicit RandomChoices(uint64_t seed) : rng(seed) {}
  int64_t pick(int64_t lo, int64_t hi) override;

private:
  std::mt19937_64 rng;
};

class ByteChoices : public Choices {
public:
  ByteChoices(const uint8_t *data, size_t size) : data(data), size(size) {}
  int64_t pick(int64_t lo, int64_t hi) override;

private:
  const uint8_t *data;
  size_t size, next = 0;
};

/// A random valid block: sizes (tokens 1..64, hidden and mlp 1..48, experts
/// 1..24, k up to 8), every routing switch, null experts and null draws, a
/// shared expert fused or not, bf16, a fusion pipeline, a gmm strategy,
/// int8, and a mesh (data, expert or both, every dispatch) whose axes divide
/// the sizes. `backward` says the case will be run backward too: no int8 (its
/// adjoint is the float one), a remat policy is drawn by the caller.
BlockCase randomCase(Choices &choices, bool backward);

/// A remat policy for a random backward case (auto only with static
/// shapes).
std::string randomRematPolicy(Choices &choices, const BlockCase &c);

} // namespace moec::differential

#endif // MOEC_TEST_DIFFERENTIAL_BLOCKCASE_H
