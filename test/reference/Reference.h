//===- Reference.h - the MoE block in plain C++ ------------------*- C++ -*-===//
//
// An implementation of shared/docs/moe-semantics.md written independently of
// the compiler: straight loops, double accumulation, no MLIR. The numerics
// tests hold compiled code to it.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TEST_REFERENCE_H
#define MOEC_TEST_REFERENCE_H

#include <cstdint>
#include <vector>

namespace moec::reference {

struct RouteConfig {
  int64_t k = 2;
  bool sigmoid = false;         // scoring
  bool softmaxThenTopk = false; // order
  bool renormalize = false;
  int64_t nullExperts = 0;
  bool takeUntilNull = false;
};

struct Routing {
  std::vector<int32_t> ids;    // [T, K]
  std::vector<double> weights; // [T, K]
};

/// Routes logits [T, C] (C = E + null experts), as moe.route.
Routing route(const std::vector<float> &logits, int64_t tokens, int64_t columns,
              const RouteConfig &config);

struct BlockWeights {
  // Row-major; w13 is [E, H, 2M] when fused, else w1 and w3 are [E, H, M].
  std::vector<float> w13, w1, w3, w2; // w2 [E, M, H]
  // Shared expert (S = 0: none); sw13 [H, 2S] when fused, else sw1, sw3 [H, S].
  std::vector<float> sw13, sw1, sw3, sw2; // sw2 [S, H]
};

struct BlockShape {
  int64_t tokens, hidden, mlp, experts, shared = 0;
  bool fusedW13 = true, sharedFused = true;
};

/// y [T, H] = routed experts + shared expert, for x [T, H] and routing.
std::vector<double> block(const std::vector<float> &x, const Routing &routing,
                          const BlockShape &shape, const BlockWeights &w,
                          int64_t k);

/// logits [T, E'] = x [T, H] @ router [H, E'], accumulated in float in
/// index order: the value the compiled router computes, so that both select
/// the same experts.
std::vector<float> routerLogits(const std::vector<float> &x,
                                const std::vector<float> &router,
                                int64_t tokens, int64_t hidden, int64_t columns);

} // namespace moec::reference

#endif // MOEC_TEST_REFERENCE_H
