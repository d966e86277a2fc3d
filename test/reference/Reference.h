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
  /// The model families' routing (shared/docs/model-families.md). With a selection
  /// bias or groups > 1 the selection is made on the scores (softmax over
  /// all C columns, which needs softmaxThenTopk, or sigmoid each):
  ///   s' = s + selectionBias (DeepSeek-V3 e_score_correction_bias),
  ///   the C columns form `groups` contiguous groups of C / groups; a
  ///   group's score is the max of its s' (DeepSeek-V2) or, with
  ///   groupScoreTop2Sum, the sum of its two largest s' (DeepSeek-V3); the
  ///   topkGroups best groups are kept (ties: lower group id); s' outside
  ///   them is replaced by 0.0 (as the families' code masks it:
  ///   masked_fill(~mask, 0.0), so a masked column outranks a kept one
  ///   whose s' < 0); top-K of that (ties: lower id).
  /// The weights are the unbiased s of the chosen columns, renormalised
  /// when `renormalize`, then times routedScaling (every form).
  /// Not with null experts (the verifier refuses groups and selection bias
  /// with null_experts).
  std::vector<double> selectionBias; // [C], or empty: none
  int64_t groups = 1, topkGroups = 1;
  bool groupScoreTop2Sum = false; // else the group's max
  double routedScaling = 1.0;
};

struct Routing {
  std::vector<int32_t> ids;    // [T, K]
  std::vector<double> weights; // [T, K]
};

/// Routes logits [T, C] (C = E + null experts), as moe.route. The double
/// overload selects and scores in double (finite differences perturb it);
/// on float values it returns what the float overload does.
Routing route(const std::vector<float> &logits, int64_t tokens, int64_t columns,
              const RouteConfig &config);
Routing route(const std::vector<double> &logits, int64_t tokens, int64_t columns,
              const RouteConfig &config);

/// Benchmark null routing (semantics doc, section 6) over a routing of
/// `experts` real experts, with uniform draws [T, K]: a slot is nulled (id
/// `experts`, weight 0) when its id is not a real expert already, when its
/// draw is below the slot probability (the fraction for independent; for
/// take_until_null the p whose expected null fraction over K nested slots is
/// the fraction), or with take_until_null after the token's first null.
/// `renormalize` rescales the real weights to sum 1.
Routing nullSlots(const Routing &routing, const std::vector<float> &draws, int64_t tokens,
                  int64_t k, int64_t experts, double fraction, bool takeUntilNull,
                  bool renormalize);

/// The router gradient: dL/dlogits [T, C] for dweights = dL/d(routing
/// weights) [T, K], the selection held fixed (it is piecewise constant in
/// the logits; the selection bias and the groups only move it, so they get
/// no gradient). Written from the math per token: scores s (softmax over
/// the K chosen, over all C columns, or sigmoid each), null slots weight 0,
/// renormalised w = F v / sum(v) (F = routedScaling):
///   dw' = F dw;
///   dv = (dw' - (w' . dw')) / sum(v) when renormalising (w' = v / sum(v)),
///   else dw';
///   ds = dv outside null slots, 0 in them;
///   sigmoid: dz[c_k] = ds_k s_k (1 - s_k);
///   softmax: dz_j = p_j (dp_j - sum_k s_k ds_k), dp_j = ds_k at j = c_k,
///   where p is the softmax over the K chosen or over all columns.
std::vector<double> routeBackward(const std::vector<double> &logits, int64_t tokens,
                                  int64_t columns, const RouteConfig &config,
                                  const std::vector<double> &dweights);

/// logits = x @ router: adds dlogits @ router^T to dx [T, H] and sets
/// drouter [H, C] = x^T @ dlogits.
void routerBackward(const std::vector<float> &x, const std::vector<float> &router,
                    int64_t tokens, int64_t hidden, int64_t columns,
                    const std::vector<double> &dlogits, std::vector<double> &dx,
                    std::vector<double> &drouter);

struct BlockWeights {
  // Row-major; w13 is [E, H, 2M] when fused, else w1 and w3 are [E, H, M].
  std::vector<float> w13, w1, w3, w2; // w2 [E, M, H]
  // Shared expert (S = 0: none); sw13 [H, 2S] when fused, else sw1, sw3 [H, S].
  std::vector<float> sw13, sw1, sw3, sw2; // sw2 [S, H]
  // Expert biases (used with BlockShape::expertBias; each may be empty:
  // none): b13 [E, 2M] (gate_up bias, columns laid out as w13's: halves,
  // or alternating gate, up with BlockShape::interleaved), b2 [E, H] (down
  // bias). The shared gate swg [H] (an [H, 1] weight; BlockShape::sharedGate).
  std::vector<float> b13, b2, swg;
};

struct BlockShape {
  int64_t tokens, hidden, mlp, experts, shared = 0;
  bool fusedW13 = true, sharedFused = true;
  /// The routed experts' activation: gpt_oss (else SwiGLU, silu(g) * u):
  /// g = min(g, limit), u = clamp(u, -limit, limit),
  /// a = (u + 1) * g * sigmoid(alpha * g). The shared expert is SwiGLU.
  bool gptOss = false;
  double alpha = 1.702, limit = 7.0;
  /// w13's (and b13's) columns alternate gate, up, gate, up (gate = 0::2,
  /// up = 1::2); else gate = the first M, up = the last M. Needs fusedW13.
  bool interleaved = false;
  /// Add b13 to the gate/up projections and b2 to the down projection
  /// (before the routing weight: y += r * (a W2 + b2)).
  bool expertBias = false;
  /// Llama-4: the routing weight r multiplies the expert's input, not its
  /// output: y += expert(r * x).
  bool weightInput = false;
  /// Qwen2-MoE: the shared expert's output times sigmoid(x . swg) per token.
  bool sharedGate = false;
};

/// BlockWeights in double, same names and layouts: the inputs finite
/// differences can perturb exactly, and the form gradients come back in.
struct BlockWeightsF64 {
  std::vector<double> w13, w1, w3, w2;
  std::vector<double> sw13, sw1, sw3, sw2;
  std::vector<double> b13, b2, swg;
};

/// The same values in double (exact).
std::vector<double> toF64(const std::vector<float> &v);
BlockWeightsF64 toF64(const BlockWeights &w);

/// y [T, H] = routed experts + shared expert, for x [T, H] and routing.
/// Slots whose id is outside [0, E) are null: no compute, whatever their
/// weight.
std::vector<double> block(const std::vector<float> &x, const Routing &routing,
                          const BlockShape &shape, const BlockWeights &w,
                          int64_t k);
/// The same block on double inputs; on inputs that are floats it returns
/// exactly what the float overload does.
std::vector<double> block(const std::vector<double> &x, const Routing &routing,
                          const BlockShape &shape, const BlockWeightsF64 &w,
                          int64_t k);

/// Per element of block()'s y, the root-sum-square of the terms it sums:
/// each routed and shared expert's a_j * down(j, h) and down bias, times
/// its routing weight or shared gate. Rounding each term by a relative u
/// moves y by about u times this (the errors add as a random walk), however
/// much the terms cancel: the scale a low-precision result's error is
/// measured against where y is much smaller than its terms.
std::vector<double> blockTermScale(const std::vector<float> &x, const Routing &routing,
                                   const BlockShape &shape, const BlockWeights &w,
                                   int64_t k);

/// Which side of its clamps each routed pre-activation of the gpt_oss
/// activation is on, per assignment and column: the gate above the limit
/// (1) or not (0), then the up below -limit (-1), inside (0) or above (1).
/// The loss has a kink where one changes: a finite difference whose step
/// changes them measures no derivative. Empty without gpt_oss.
std::vector<int8_t> clampSides(const std::vector<float> &x, const Routing &routing,
                               const BlockShape &shape, const BlockWeights &w, int64_t k);

/// The gradients of a loss L(y) of the block's output, routing fixed.
struct BlockGradients {
  std::vector<double> x; // dL/dx [T, H]
  /// dL/d(each weight), laid out as the weight. Only the weights the shape
  /// uses are filled (w13, or w1 and w3; w2; with S > 0 sw13, or sw1 and sw3;
  /// sw2; with expertBias each of b13 and b2 that is not empty; with S > 0
  /// and sharedGate swg); the others are empty.
  BlockWeightsF64 w;
  /// dL/d(routing weights) [T, K]: dy[t] . (expert output of slot k before
  /// its weight, down bias included); with weightInput d(r x[t]) . x[t],
  /// d(r x[t]) the gradient of the expert's input; 0 for null slots.
  std::vector<double> routingWeights;

  /// The gradient of the weight `weight` names, e.g. of(&BlockWeights::w2).
  const std::vector<double> &of(std::vector<float> BlockWeights::*weight) const;
};

/// Reverse mode of block(): for the cotangent dy = dL/dy [T, H], dL/dx and
/// dL/d(weights), in double, written from the math per token and assignment
/// (the routing weights are inputs here: their gradient is routingWeights;
/// routeBackward carries it on to the logits). For an
/// assignment of token t to expert e with routing weight r,
///   g = x W1[e], u = x W3[e], a = silu(g) * u, y += r * a W2[e];
///   da = r * dy W2[e]^T, dW2[e] += r * a^T dy,
///   dg = da * u * silu'(g), du = da * silu(g),
///   dW1[e] += x^T dg, dW3[e] += x^T du, dx += dg W1[e]^T + du W3[e]^T,
/// with silu'(z) = s(z) (1 + z (1 - s(z))), s = sigmoid; W1 and W3 are the
/// gate and up halves (or the alternating columns) of w13 when fused. The
/// shared expert is the same with r = 1 (r = sigmoid(x . swg) with the
/// shared gate: dswg += (dy . shared output) r (1 - r) x, dx likewise with
/// swg). Null slots contribute nothing. The family variants:
///   biases: g += b1[e], u += b3[e], out = a W2[e] + b2[e], y += r * out:
///     db1 += dg, db3 += du, db2 += r dy, dr = dy . out;
///   gpt_oss: gc = min(g, limit), uc = clamp(u, -limit, limit),
///     a = (uc + 1) gc s(alpha gc): dg = da (uc + 1) (s + alpha gc s (1 - s))
///     where g <= limit, else 0; du = da gc s where |u| <= limit, else 0;
///   weightInput: the expert on x' = r x, y += out: dx += r dx',
///     dr = dx' . x, dW1[e] += x'^T dg (and W3).
BlockGradients blockBackward(const std::vector<float> &x, const Routing &routing,
                             const BlockShape &shape, const BlockWeights &w,
                             int64_t k, const std::vector<double> &dy);
BlockGradients blockBackward(const std::vector<double> &x, const Routing &routing,
                             const BlockShape &shape, const BlockWeightsF64 &w,
                             int64_t k, const std::vector<double> &dy);

/// int8 (semantics doc, section 7): symmetric, no zero point; rows scaled
/// per row, weights per expert or per output channel; q = clamp(
/// nearbyint(v * (127 / max|v|)), -127, 127), scale max|v| / 127 (q = 0 for
/// an all-zero row or column), exact integer sums, dequantised as
/// float(sum) * (row scale * weight scale) in float.
struct Int8Config {
  bool perChannel = true; // else one scale per expert (per weight matrix)
  bool routedOnly = false; // the shared expert stays float
};

/// The block of block() with its routed (and, unless routedOnly, shared)
/// matmuls in int8: each gate/up projection quantizes the token's row, the
/// down projection the activation row (float, silu(g) * u in float); the
/// shared expert's weights are one-expert matrices. What moe-quantize's int8
/// modes compute (fake_int8 too, up to float rounding).
/// The family variants of BlockShape: the expert biases are added in float
/// to the dequantized sums, GPT-OSS's activation (over interleaved columns)
/// runs in float, a weighted input (Llama-4) quantizes the row r x, the
/// shared gate is a float dot product.
std::vector<double> blockInt8(const std::vector<float> &x, const Routing &routing,
                              const BlockShape &shape, const BlockWeights &w, int64_t k,
                              const Int8Config &config);

/// The harness's forward_backward loss, mean(y^2) over all T * H elements,
/// and its cotangent dL/dy = 2 y / (T * H).
double meanSquare(const std::vector<double> &y);
std::vector<double> meanSquareCotangent(const std::vector<double> &y);

/// logits [T, E'] = x [T, H] @ router [H, E'], accumulated in float in
/// index order: the value the compiled router computes, so that both select
/// the same experts.
std::vector<float> routerLogits(const std::vector<float> &x,
                                const std::vector<float> &router,
                                int64_t tokens, int64_t hidden, int64_t columns);
/// The same plus a router bias [C] (GPT-OSS), added to each float sum in
/// float: logits[t, c] = float(sum) + bias[c].
std::vector<float> routerLogits(const std::vector<float> &x,
                                const std::vector<float> &router,
                                const std::vector<float> &bias,
                                int64_t tokens, int64_t hidden, int64_t columns);

} // namespace moec::reference

#endif // MOEC_TEST_REFERENCE_H
