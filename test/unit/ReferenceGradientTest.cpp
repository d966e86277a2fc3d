//===- ReferenceGradientTest.cpp - the reference backward against FD ------===//
//
// reference::blockBackward is the oracle the compiled gradients are held to,
// so it is itself checked here: every element of dL/dx and of every weight's
// gradient against central finite differences of the reference loss, on tiny
// shapes, in double throughout (the double overload of reference::block, so
// the differences are accurate to ~1e-10 and the tolerance can be tight).
//
//===----------------------------------------------------------------------===//

#include "reference/Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>

using namespace moec;
using reference::BlockGradients;
using reference::BlockShape;
using reference::BlockWeights;
using reference::BlockWeightsF64;
using reference::Routing;

namespace {

struct Case {
  std::string name;
  int64_t tokens = 5, hidden = 6, mlp = 4, experts = 3, shared = 0, k = 2;
  bool fusedW13 = true, sharedFused = true;
  /// [T, K] expert ids; ids >= experts are null slots. Empty: route() below.
  std::vector<int32_t> ids;
  /// When ids is empty: random logits over experts + nullExperts columns
  /// routed with this configuration.
  reference::RouteConfig route;
  /// The family variants (BlockShape's); b13 and b2 are made when biasB13,
  /// biasB2 (with expertBias).
  bool gptOss = false, interleaved = false, expertBias = false, weightInput = false,
       sharedGate = false;
  bool biasB13 = true, biasB2 = true;
  double alpha = 1.702, limit = 7.0;
  /// gpt_oss with a small limit: some gates above it and some ups outside
  /// [-limit, limit] (checked), so that the clamps' zero derivative is tested.
  bool expectClamps = false;
};

BlockShape shapeOf(const Case &c) {
  BlockShape s{c.tokens, c.hidden, c.mlp, c.experts, c.shared, c.fusedW13, c.sharedFused};
  s.gptOss = c.gptOss;
  s.alpha = c.alpha;
  s.limit = c.limit;
  s.interleaved = c.interleaved;
  s.expertBias = c.expertBias;
  s.weightInput = c.weightInput;
  s.sharedGate = c.sharedGate;
  return s;
}

/// A weight of the block: its name and where it lives in each struct.
struct WeightRef {
  const char *name;
  std::vector<float> BlockWeights::*f32;
  std::vector<double> BlockWeightsF64::*f64;
};

std::vector<WeightRef> weightsUsed(const BlockShape &s, const BlockWeights &w) {
  std::vector<WeightRef> used;
  if (s.fusedW13) {
    used.push_back({"w13", &BlockWeights::w13, &BlockWeightsF64::w13});
  } else {
    used.push_back({"w1", &BlockWeights::w1, &BlockWeightsF64::w1});
    used.push_back({"w3", &BlockWeights::w3, &BlockWeightsF64::w3});
  }
  used.push_back({"w2", &BlockWeights::w2, &BlockWeightsF64::w2});
  if (s.expertBias && !w.b13.empty())
    used.push_back({"b13", &BlockWeights::b13, &BlockWeightsF64::b13});
  if (s.expertBias && !w.b2.empty())
    used.push_back({"b2", &BlockWeights::b2, &BlockWeightsF64::b2});
  if (s.shared > 0) {
    if (s.sharedFused) {
      used.push_back({"sw13", &BlockWeights::sw13, &BlockWeightsF64::sw13});
    } else {
      used.push_back({"sw1", &BlockWeights::sw1, &BlockWeightsF64::sw1});
      used.push_back({"sw3", &BlockWeights::sw3, &BlockWeightsF64::sw3});
    }
    used.push_back({"sw2", &BlockWeights::sw2, &BlockWeightsF64::sw2});
    if (s.sharedGate)
      used.push_back({"swg", &BlockWeights::swg, &BlockWeightsF64::swg});
  }
  return used;
}

const WeightRef kAllWeights[] = {
    {"w13", &BlockWeights::w13, &BlockWeightsF64::w13},
    {"w1", &BlockWeights::w1, &BlockWeightsF64::w1},
    {"w3", &BlockWeights::w3, &BlockWeightsF64::w3},
    {"w2", &BlockWeights::w2, &BlockWeightsF64::w2},
    {"sw13", &BlockWeights::sw13, &BlockWeightsF64::sw13},
    {"sw1", &BlockWeights::sw1, &BlockWeightsF64::sw1},
    {"sw3", &BlockWeights::sw3, &BlockWeightsF64::sw3},
    {"sw2", &BlockWeights::sw2, &BlockWeightsF64::sw2},
    {"b13", &BlockWeights::b13, &BlockWeightsF64::b13},
    {"b2", &BlockWeights::b2, &BlockWeightsF64::b2},
    {"swg", &BlockWeights::swg, &BlockWeightsF64::swg},
};

std::vector<float> uniform(std::mt19937_64 &rng, size_t n, float bound) {
  std::uniform_real_distribution<float> d(-bound, bound);
  std::vector<float> v(n);
  for (float &f : v)
    f = d(rng);
  return v;
}

struct Problem {
  std::vector<float> x;
  BlockWeights w;
  Routing routing;
};

/// Random float inputs (values large enough that silu' is far from sigmoid
/// on many gate columns) and the case's routing. Routing weights of real
/// slots are random in [0.2, 1] and do not sum to 1, so a dropped or doubled
/// weight shows; null slots carry a stale nonzero weight, which the block
/// must ignore.
Problem makeProblem(const Case &c, std::mt19937_64 &rng) {
  int64_t T = c.tokens, H = c.hidden, M = c.mlp, E = c.experts, S = c.shared;
  Problem p;
  p.x = uniform(rng, T * H, 1.5f);
  if (c.fusedW13) {
    p.w.w13 = uniform(rng, E * H * 2 * M, 1.0f);
  } else {
    p.w.w1 = uniform(rng, E * H * M, 1.0f);
    p.w.w3 = uniform(rng, E * H * M, 1.0f);
  }
  p.w.w2 = uniform(rng, E * M * H, 1.0f);
  if (c.expertBias && c.biasB13)
    p.w.b13 = uniform(rng, E * 2 * M, 1.0f);
  if (c.expertBias && c.biasB2)
    p.w.b2 = uniform(rng, E * H, 1.0f);
  // Small: x . swg near 0, where the gate's slope is largest (a saturated
  // gate's tiny gradient would sit near the differences' rounding floor).
  if (S > 0 && c.sharedGate)
    p.w.swg = uniform(rng, H, 0.3f);
  if (S > 0) {
    if (c.sharedFused) {
      p.w.sw13 = uniform(rng, H * 2 * S, 1.0f);
    } else {
      p.w.sw1 = uniform(rng, H * S, 1.0f);
      p.w.sw3 = uniform(rng, H * S, 1.0f);
    }
    p.w.sw2 = uniform(rng, S * H, 1.0f);
  }
  if (c.ids.empty()) {
    int64_t columns = E + c.route.nullExperts;
    std::vector<float> logits = uniform(rng, T * columns, 2.0f);
    reference::RouteConfig rc = c.route;
    rc.k = c.k;
    p.routing = reference::route(logits, T, columns, rc);
    int64_t nulls = std::count_if(p.routing.ids.begin(), p.routing.ids.end(),
                                  [&](int32_t id) { return id >= E; });
    EXPECT_GT(nulls, 0) << "case " << c.name << " should route some slots to null";
    EXPECT_LT(nulls, T * c.k) << "case " << c.name << " should route some slots to experts";
  } else {
    EXPECT_EQ(int64_t(c.ids.size()), T * c.k) << "ids of case " << c.name;
    p.routing.ids = c.ids;
    std::uniform_real_distribution<double> d(0.2, 1.0);
    for (int32_t id : c.ids)
      p.routing.weights.push_back(id < E ? d(rng) : 0.75);
  }
  return p;
}

/// Checks `grad` (the analytic gradient of `loss` w.r.t. `values`) element
/// by element against central differences of `loss`, perturbing `values` in
/// place in double. Returns the largest error relative to max |grad|.
double checkAgainstFD(const std::string &what, const std::vector<double> &grad,
                      std::vector<double> &values, const std::function<double()> &loss) {
  EXPECT_EQ(grad.size(), values.size()) << what;
  if (grad.size() != values.size())
    return INFINITY;
  double scale = 0;
  for (double g : grad)
    scale = std::max(scale, std::fabs(g));
  // Fourth-order central differences in double: truncation ~ kStep^4 |L^(5)|
  // / 30, negligible, and rounding ~ 1.5 m eps |L| / kStep for an error of m
  // ulps in each evaluation of L. The tolerance is 1e-8 of the largest
  // gradient element plus that rounding for m = 9 (1e-15 |L| / kStep): a
  // wrong rule (a routing weight missing, silu' replaced by sigmoid, a
  // transposed index, a clamp passing gradient) is off by O(scale); the
  // errors seen are below 1e-9 of it, except where |L| is ~1000 times the
  // gradient (a shared gate's), at the rounding floor.
  constexpr double kStep = 1e-5;
  const double rounding = 1e-15 * std::fabs(loss()) / kStep;
  const double tolerance = 1e-8 * scale + rounding + 1e-13;
  double worst = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    double saved = values[i];
    auto at = [&](double offset) {
      values[i] = saved + offset;
      return loss();
    };
    double up = at(kStep), down = at(-kStep), up2 = at(2 * kStep), down2 = at(-2 * kStep);
    values[i] = saved;
    double fd = (8 * (up - down) - (up2 - down2)) / (12 * kStep);
    EXPECT_NEAR(grad[i], fd, tolerance)
        << "d loss / d " << what << " element " << i << " (max |gradient| " << scale << ")";
    worst = std::max(worst, std::fabs(grad[i] - fd) / std::max(scale, 1e-300));
  }
  return worst;
}

/// The gpt_oss clamps over the problem's real assignments: how many gate
/// values are above the limit and how many not, how many up values are
/// outside [-limit, limit] and how many inside, and the smallest distance of
/// any of them to its clamp's bound (finite differences must not cross it).
/// Written here from the equations, independently of the reference.
struct ClampCensus {
  int gateClamped = 0, gateFree = 0, upClamped = 0, upFree = 0;
  double nearest = INFINITY;
};

ClampCensus clampCensus(const Case &c, const Problem &p) {
  int64_t H = c.hidden, M = c.mlp, E = c.experts;
  ClampCensus census;
  for (int64_t t = 0; t < c.tokens; ++t)
    for (int64_t slot = 0; slot < c.k; ++slot) {
      int64_t e = p.routing.ids[t * c.k + slot];
      if (e < 0 || e >= E)
        continue;
      double r = c.weightInput ? p.routing.weights[t * c.k + slot] : 1.0;
      for (int64_t j = 0; j < M; ++j) {
        // Column of the gate and of the up projection in w13 / b13.
        int64_t gc = c.interleaved ? 2 * j : j, uc = c.interleaved ? 2 * j + 1 : M + j;
        double g = 0, u = 0;
        for (int64_t h = 0; h < H; ++h) {
          double xin = r * double(p.x[t * H + h]);
          if (c.fusedW13) {
            g += xin * p.w.w13[(e * H + h) * 2 * M + gc];
            u += xin * p.w.w13[(e * H + h) * 2 * M + uc];
          } else {
            g += xin * p.w.w1[(e * H + h) * M + j];
            u += xin * p.w.w3[(e * H + h) * M + j];
          }
        }
        if (!p.w.b13.empty()) {
          g += p.w.b13[e * 2 * M + gc];
          u += p.w.b13[e * 2 * M + uc];
        }
        (g > c.limit ? census.gateClamped : census.gateFree)++;
        (std::fabs(u) > c.limit ? census.upClamped : census.upFree)++;
        census.nearest = std::min({census.nearest, std::fabs(g - c.limit),
                                   std::fabs(std::fabs(u) - c.limit)});
      }
    }
  return census;
}

enum class Loss { MeanSquare, Linear };

/// The whole check for one case and one loss: sizes, the float and double
/// overloads agreeing exactly, empty experts' gradients exactly zero, and
/// every element of every gradient against finite differences.
void checkCase(const Case &c, Loss lossKind, uint64_t seed) {
  SCOPED_TRACE("case " + c.name + (lossKind == Loss::MeanSquare ? ", mean(y^2)" : ", <dy, y>") +
               ", seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Problem p = makeProblem(c, rng);
  BlockShape shape = shapeOf(c);
  int64_t T = c.tokens, H = c.hidden, E = c.experts;

  std::vector<double> x = reference::toF64(p.x);
  BlockWeightsF64 w = reference::toF64(p.w);
  std::vector<double> y = reference::block(x, p.routing, shape, w, c.k);
  ASSERT_EQ(int64_t(y.size()), T * H);
  // The double overload on float values is the float overload, exactly.
  EXPECT_EQ(y, reference::block(p.x, p.routing, shape, p.w, c.k));

  std::vector<double> dy;
  std::function<double()> loss;
  if (lossKind == Loss::MeanSquare) {
    dy = reference::meanSquareCotangent(y);
    loss = [&] { return reference::meanSquare(reference::block(x, p.routing, shape, w, c.k)); };
  } else {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (int64_t i = 0; i < T * H; ++i)
      dy.push_back(d(rng));
    loss = [&] {
      std::vector<double> yy = reference::block(x, p.routing, shape, w, c.k);
      double sum = 0;
      for (size_t i = 0; i < yy.size(); ++i)
        sum += dy[i] * yy[i];
      return sum;
    };
  }

  BlockGradients grad = reference::blockBackward(x, p.routing, shape, w, c.k, dy);
  BlockGradients fromFloat = reference::blockBackward(p.x, p.routing, shape, p.w, c.k, dy);
  EXPECT_EQ(grad.x, fromFloat.x);

  if (c.gptOss) {
    ClampCensus census = clampCensus(c, p);
    // Perturbing one input by the step moves g or u by far less than this.
    EXPECT_GT(census.nearest, 1e-3) << "a pre-activation sits on a clamp's bound";
    if (c.expectClamps) {
      EXPECT_GT(census.gateClamped, 0) << "no gate above the limit";
      EXPECT_GT(census.gateFree, 0) << "every gate above the limit";
      EXPECT_GT(census.upClamped, 0) << "no up outside [-limit, limit]";
      EXPECT_GT(census.upFree, 0) << "every up outside [-limit, limit]";
    }
  }

  // Exactly the weights the shape uses have gradients, laid out as the weight.
  std::vector<WeightRef> used = weightsUsed(shape, p.w);
  for (const WeightRef &ref : kAllWeights) {
    bool isUsed = std::any_of(used.begin(), used.end(),
                              [&](const WeightRef &u) { return u.f64 == ref.f64; });
    const std::vector<double> &g = grad.w.*ref.f64;
    EXPECT_EQ(&grad.of(ref.f32), &g) << ref.name;
    if (isUsed)
      EXPECT_EQ(g.size(), (p.w.*ref.f32).size()) << "gradient of " << ref.name;
    else
      EXPECT_TRUE(g.empty()) << "gradient of unused " << ref.name;
    EXPECT_EQ(g, fromFloat.w.*ref.f64) << "float and double overloads, " << ref.name;
  }

  // An expert no real slot names gets exactly zero gradient.
  for (int64_t e = 0; e < E; ++e) {
    bool named = false;
    for (int32_t id : p.routing.ids)
      named = named || id == e;
    if (named)
      continue;
    for (const WeightRef &ref : used) {
      if (std::string(ref.name).rfind("sw", 0) == 0)
        continue;
      const std::vector<double> &g = grad.w.*ref.f64;
      int64_t per = int64_t(g.size()) / E;
      for (int64_t i = e * per; i < (e + 1) * per; ++i)
        ASSERT_EQ(g[i], 0.0) << "empty expert " << e << ", " << ref.name << " element " << i;
    }
  }

  // The routing weights' gradient (checked against finite differences
  // below, null slots included: perturbing their weight changes nothing).
  ASSERT_EQ(grad.routingWeights.size(), p.routing.weights.size());
  EXPECT_EQ(grad.routingWeights, fromFloat.routingWeights);

  auto format = [](const char *name, double worst) {
    char text[64];
    std::snprintf(text, sizeof text, "%s %.1e", name, worst);
    return std::string(text);
  };
  std::string report = format("x", checkAgainstFD("x", grad.x, x, loss));
  for (const WeightRef &ref : used)
    report += ", " + format(ref.name, checkAgainstFD(ref.name, grad.w.*ref.f64, w.*ref.f64, loss));
  report += ", " + format("routing weights", checkAgainstFD("routing weights", grad.routingWeights,
                                                            p.routing.weights, loss));
  ::testing::Test::RecordProperty("worst_relative_error", report);
  std::printf("  worst |analytic - FD| / max|gradient|: %s\n", report.c_str());
}

std::vector<Case> cases() {
  std::vector<Case> list;
  auto add = [&](std::string name, auto edit) {
    Case c;
    c.name = std::move(name);
    edit(c);
    list.push_back(c);
  };
  // E = 3: ids 3 and 4 are null slots. No token names an expert twice
  // (routing never does), but null slots may repeat.
  add("fused w13, top-2", [](Case &c) {
    c.k = 2; c.ids = {0, 1, 2, 0, 1, 2, 0, 2, 1, 0}; });
  add("w1/w3, top-1", [](Case &c) {
    c.fusedW13 = false; c.k = 1; c.ids = {0, 2, 1, 2, 0}; });
  add("fused w13, shared fused, top-3", [](Case &c) {
    c.shared = 3; c.k = 3; c.ids = {0, 1, 2, 2, 0, 1, 1, 2, 0, 0, 2, 1, 2, 1, 0}; });
  add("w1/w3, shared w1/w3, top-2, null ids", [](Case &c) {
    c.fusedW13 = false; c.shared = 3; c.sharedFused = false; c.k = 2;
    c.ids = {1, 3, 3, 3, 2, 0, 0, 4, 3, 1}; });
  add("fused w13, shared w1/w3, top-2, empty expert 1, null ids", [](Case &c) {
    c.shared = 3; c.sharedFused = false; c.k = 2;
    c.ids = {0, 2, 2, 3, 0, 3, 2, 0, 3, 3}; });
  add("w1/w3, shared fused, top-3, E=4, empty expert 2, null ids", [](Case &c) {
    c.fusedW13 = false; c.shared = 3; c.experts = 4; c.k = 3;
    c.ids = {0, 1, 4, 3, 0, 1, 4, 4, 4, 1, 3, 0, 0, 5, 3}; });
  add("every slot null, shared expert only", [](Case &c) {
    c.shared = 3; c.k = 2; c.ids = {3, 3, 3, 4, 4, 3, 3, 3, 4, 4}; });
  add("route(): null experts, take-until-null, renormalised, top-3", [](Case &c) {
    c.k = 3; c.experts = 4; c.shared = 2; c.tokens = 7;
    c.route.nullExperts = 2; c.route.takeUntilNull = true; c.route.renormalize = true; });
  add("uneven sizes, fused, shared fused, top-2", [](Case &c) {
    c.tokens = 4; c.hidden = 5; c.mlp = 3; c.shared = 2; c.k = 2;
    c.ids = {2, 1, 0, 2, 1, 0, 2, 3}; });
  // The model families' variants (shared/docs/model-families.md).
  add("gpt_oss, interleaved, biases, top-2, limit 1 (clamps)", [](Case &c) {
    c.gptOss = true; c.interleaved = true; c.expertBias = true; c.limit = 1.0;
    c.expectClamps = true; c.k = 2; c.ids = {0, 1, 2, 0, 1, 2, 0, 2, 1, 0}; });
  add("gpt_oss, interleaved, biases, top-2, null ids, alpha 1.702 limit 7", [](Case &c) {
    c.gptOss = true; c.interleaved = true; c.expertBias = true; c.k = 2;
    c.ids = {1, 3, 3, 3, 2, 0, 0, 4, 3, 1}; });
  add("gpt_oss halves, w1/w3, down bias only, alpha 1.2 limit 1.5 (clamps)", [](Case &c) {
    c.gptOss = true; c.fusedW13 = false; c.expertBias = true; c.biasB13 = false;
    c.alpha = 1.2; c.limit = 1.5; c.expectClamps = true; c.k = 2;
    c.ids = {2, 1, 0, 2, 1, 0, 2, 1, 1, 0}; });
  add("SwiGLU, fused, gate_up bias only, shared fused, top-2", [](Case &c) {
    c.expertBias = true; c.biasB2 = false; c.shared = 3; c.k = 2;
    c.ids = {0, 2, 2, 3, 0, 1, 2, 0, 1, 2}; });
  add("SwiGLU, w1/w3 with both biases, top-1", [](Case &c) {
    c.fusedW13 = false; c.expertBias = true; c.k = 1; c.ids = {0, 2, 1, 2, 0}; });
  add("weight_input, top-1, shared fused (Llama-4)", [](Case &c) {
    c.weightInput = true; c.shared = 3; c.k = 1; c.ids = {0, 2, 1, 2, 0}; });
  add("weight_input, w1/w3, top-2, null ids, empty expert 1", [](Case &c) {
    c.weightInput = true; c.fusedW13 = false; c.k = 2;
    c.ids = {0, 2, 2, 3, 0, 3, 2, 0, 3, 3}; });
  add("weight_input, gpt_oss interleaved, biases, top-2, limit 1 (clamps)", [](Case &c) {
    c.weightInput = true; c.gptOss = true; c.interleaved = true; c.expertBias = true;
    c.limit = 1.0; c.expectClamps = true; c.k = 2; c.ids = {0, 1, 2, 0, 1, 2, 0, 2, 1, 0}; });
  add("shared gate, shared fused, top-2 (Qwen2-MoE)", [](Case &c) {
    c.sharedGate = true; c.shared = 3; c.k = 2; c.ids = {0, 1, 2, 0, 1, 2, 0, 2, 1, 0}; });
  add("shared gate, shared w1/w3, every slot null", [](Case &c) {
    c.sharedGate = true; c.shared = 3; c.sharedFused = false; c.k = 2;
    c.ids = {3, 3, 3, 4, 4, 3, 3, 3, 4, 4}; });
  add("every variant: gpt_oss interleaved, biases, weight_input, shared gate, top-3, E=4",
      [](Case &c) {
        c.gptOss = true; c.interleaved = true; c.expertBias = true; c.weightInput = true;
        c.limit = 1.0; c.expectClamps = true; c.sharedGate = true; c.shared = 2; c.experts = 4;
        c.k = 3; c.ids = {0, 1, 4, 3, 0, 1, 4, 4, 4, 1, 3, 0, 0, 2, 3}; });
  return list;
}

class ReferenceGradient : public ::testing::TestWithParam<size_t> {};

TEST_P(ReferenceGradient, MeanSquareMatchesFiniteDifferences) {
  static const std::vector<Case> all = cases();
  checkCase(all[GetParam()], Loss::MeanSquare, 1000 + GetParam());
}

TEST_P(ReferenceGradient, LinearCotangentMatchesFiniteDifferences) {
  static const std::vector<Case> all = cases();
  checkCase(all[GetParam()], Loss::Linear, 2000 + GetParam());
}

// The router gradient (reference::routeBackward), every configuration of
// moe.route: against finite differences of <dw, route(logits).weights> with
// a random dw, and composed with the block (dL/dlogits of mean(y^2) through
// the routing weights' gradient), the selection fixed by well-separated
// logits.
struct RouteCase {
  std::string name;
  reference::RouteConfig config;
  int64_t experts = 5;
  /// A random selection bias in [-0.3, 0.3] (C values).
  bool selectionBias = false;
  /// Edits the block the routing weights go through (the family's form).
  std::function<void(Case &)> block = [](Case &) {};
};

std::vector<RouteCase> routeCases() {
  std::vector<RouteCase> list;
  auto add = [&](std::string name, auto edit) {
    RouteCase c;
    c.name = std::move(name);
    c.config.k = 3;
    edit(c);
    list.push_back(c);
  };
  add("softmax over the top-k", [](RouteCase &) {});
  add("softmax over all, then top-k", [](RouteCase &c) { c.config.softmaxThenTopk = true; });
  add("sigmoid", [](RouteCase &c) { c.config.sigmoid = true; });
  add("sigmoid, renormalised", [](RouteCase &c) {
    c.config.sigmoid = true; c.config.renormalize = true; });
  add("softmax over all, renormalised, top-2", [](RouteCase &c) {
    c.config.softmaxThenTopk = true; c.config.renormalize = true; c.config.k = 2; });
  add("null experts, independent, renormalised", [](RouteCase &c) {
    c.config.nullExperts = 2; c.config.renormalize = true; });
  add("null experts, take-until-null, softmax over the top-k", [](RouteCase &c) {
    c.config.nullExperts = 2; c.config.takeUntilNull = true; c.config.k = 4; });
  add("null experts, take-until-null, softmax over all, renormalised", [](RouteCase &c) {
    c.config.nullExperts = 2; c.config.takeUntilNull = true; c.config.softmaxThenTopk = true;
    c.config.renormalize = true; });
  // The model families' routing (shared/docs/model-families.md): E = 8 in 4 groups of 2.
  add("DeepSeek-V2: softmax over all, 4 groups keep 2 by max, scaled 2.5", [](RouteCase &c) {
    c.experts = 8; c.config.softmaxThenTopk = true; c.config.groups = 4;
    c.config.topkGroups = 2; c.config.routedScaling = 2.5;
    c.block = [](Case &b) { b.shared = 2; }; });
  add("DeepSeek-V3: sigmoid, selection bias, 4 groups keep 2 by top-2 sum, renormalised, "
      "scaled 2.5", [](RouteCase &c) {
    c.experts = 8; c.config.sigmoid = true; c.config.softmaxThenTopk = true;
    c.selectionBias = true; c.config.groups = 4; c.config.topkGroups = 2;
    c.config.groupScoreTop2Sum = true; c.config.renormalize = true;
    c.config.routedScaling = 2.5; });
  add("sigmoid, selection bias, 4 groups keep 1 by max, top-2, scaled 0.5", [](RouteCase &c) {
    c.experts = 8; c.config.sigmoid = true; c.config.softmaxThenTopk = true;
    c.selectionBias = true; c.config.groups = 4; c.config.topkGroups = 1;
    c.config.routedScaling = 0.5; c.config.k = 2; });
  add("softmax over all, selection bias, 4 groups keep 2 by top-2 sum, renormalised, "
      "scaled 1.5", [](RouteCase &c) {
    c.experts = 8; c.config.softmaxThenTopk = true; c.selectionBias = true;
    c.config.groups = 4; c.config.topkGroups = 2; c.config.groupScoreTop2Sum = true;
    c.config.renormalize = true; c.config.routedScaling = 1.5; });
  add("softmax over all, selection bias, no groups, top-2", [](RouteCase &c) {
    c.config.softmaxThenTopk = true; c.selectionBias = true; c.config.k = 2; });
  add("sigmoid, 2 groups keep 1 by top-2 sum, renormalised", [](RouteCase &c) {
    c.experts = 8; c.config.sigmoid = true; c.config.groups = 2; c.config.topkGroups = 1;
    c.config.groupScoreTop2Sum = true; c.config.renormalize = true; });
  add("GPT-OSS: softmax over the top-2, through a gpt_oss block with biases", [](RouteCase &c) {
    c.config.k = 2; c.block = [](Case &b) {
      b.gptOss = true; b.interleaved = true; b.expertBias = true; b.limit = 1.0; }; });
  add("softmax over the top-k, scaled 1.5", [](RouteCase &c) { c.config.routedScaling = 1.5; });
  add("Llama-4: sigmoid top-1, through a weight_input block", [](RouteCase &c) {
    c.config.sigmoid = true; c.config.k = 1;
    c.block = [](Case &b) { b.weightInput = true; }; });
  add("Qwen2-MoE: softmax over all, top-2, through a shared-gate block", [](RouteCase &c) {
    c.config.softmaxThenTopk = true; c.config.k = 2;
    c.block = [](Case &b) { b.sharedGate = true; }; });
  return list;
}

/// Logits whose values are at least 0.05 apart within a row (a shuffled
/// grid plus jitter), so that no step of the differences changes the top-k.
std::vector<double> separatedLogits(std::mt19937_64 &rng, int64_t tokens, int64_t columns) {
  std::vector<double> logits(tokens * columns);
  std::uniform_real_distribution<double> jitter(-0.01, 0.01);
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int64_t> order(columns);
    for (int64_t j = 0; j < columns; ++j)
      order[j] = j;
    std::shuffle(order.begin(), order.end(), rng);
    for (int64_t j = 0; j < columns; ++j)
      logits[t * columns + j] = 0.4 * double(order[j]) - 1.2 + jitter(rng);
  }
  return logits;
}

class RouterGradient : public ::testing::TestWithParam<size_t> {};

TEST_P(RouterGradient, MatchesFiniteDifferences) {
  static const std::vector<RouteCase> all = routeCases();
  const RouteCase &c = all[GetParam()];
  SCOPED_TRACE("route case " + c.name);
  std::mt19937_64 rng(3000 + GetParam());
  const int64_t T = 6, C = c.experts + c.config.nullExperts, K = c.config.k;
  std::vector<double> logits = separatedLogits(rng, T, C);
  reference::RouteConfig config = c.config;
  if (c.selectionBias) {
    std::uniform_real_distribution<double> bias(-0.3, 0.3);
    for (int64_t j = 0; j < C; ++j)
      config.selectionBias.push_back(bias(rng));
  }
  // The selection, which no step of the differences may change.
  const std::vector<int32_t> ids = reference::route(logits, T, C, config).ids;
  // The groups and the bias matter here: without them some token selects
  // other columns.
  if (config.groups > 1) {
    reference::RouteConfig ungrouped = config;
    ungrouped.groups = ungrouped.topkGroups = 1;
    EXPECT_NE(reference::route(logits, T, C, ungrouped).ids, ids) << "the groups change nothing";
  }
  if (!config.selectionBias.empty()) {
    reference::RouteConfig unbiased = config;
    unbiased.selectionBias.clear();
    EXPECT_NE(reference::route(logits, T, C, unbiased).ids, ids) << "the bias changes nothing";
  }

  // <dw, weights> for a random dw.
  std::vector<double> dw(T * K);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (double &v : dw)
    v = d(rng);
  auto linear = [&] {
    reference::Routing r = reference::route(logits, T, C, config);
    EXPECT_EQ(r.ids, ids) << "a step of the differences changed the selection";
    double sum = 0;
    for (int64_t i = 0; i < T * K; ++i)
      sum += dw[i] * r.weights[i];
    return sum;
  };
  std::vector<double> dlogits = reference::routeBackward(logits, T, C, config, dw);
  checkAgainstFD("logits (linear in the weights)", dlogits, logits, linear);

  // The float and double routes agree on float values.
  std::vector<float> asFloat(logits.begin(), logits.end());
  std::vector<double> rounded(asFloat.begin(), asFloat.end());
  reference::Routing fromFloat = reference::route(asFloat, T, C, config);
  reference::Routing fromDouble = reference::route(rounded, T, C, config);
  EXPECT_EQ(fromFloat.ids, fromDouble.ids);
  EXPECT_EQ(fromFloat.weights, fromDouble.weights);

  // Through a block: mean(y^2) as a function of the logits.
  Case block;
  block.tokens = T; block.hidden = 4; block.mlp = 3; block.experts = c.experts; block.k = K;
  block.shared = 2;
  c.block(block);
  block.ids.assign(T * K, 0); // makeProblem's routing is not used: the logits route
  Problem p = makeProblem(block, rng);
  BlockShape shape = shapeOf(block);
  auto loss = [&] {
    reference::Routing r = reference::route(logits, T, C, config);
    return reference::meanSquare(reference::block(p.x, r, shape, p.w, K));
  };
  reference::Routing r = reference::route(logits, T, C, config);
  std::vector<double> y = reference::block(p.x, r, shape, p.w, K);
  BlockGradients grad =
      reference::blockBackward(p.x, r, shape, p.w, K, reference::meanSquareCotangent(y));
  checkAgainstFD("logits (through the block)",
                 reference::routeBackward(logits, T, C, config, grad.routingWeights), logits,
                 loss);
}

std::string routeCaseName(const ::testing::TestParamInfo<size_t> &info);

INSTANTIATE_TEST_SUITE_P(Routes, RouterGradient, ::testing::Range<size_t>(0, routeCases().size()),
                         routeCaseName);

/// Test names from case names ("fused w13, top-2" -> fused_w13_top_2).
std::string testName(const std::string &text) {
  std::string name;
  for (char ch : text) {
    bool word = std::isalnum(static_cast<unsigned char>(ch));
    if (word)
      name += ch;
    else if (!name.empty() && name.back() != '_')
      name += '_';
  }
  while (!name.empty() && name.back() == '_')
    name.pop_back();
  return name;
}

std::string caseName(const ::testing::TestParamInfo<size_t> &info) {
  static const std::vector<Case> all = cases();
  return testName(all[info.param].name);
}

std::string routeCaseName(const ::testing::TestParamInfo<size_t> &info) {
  static const std::vector<RouteCase> all = routeCases();
  return testName(all[info.param].name);
}

INSTANTIATE_TEST_SUITE_P(Blocks, ReferenceGradient, ::testing::Range<size_t>(0, cases().size()),
                         caseName);

// mean(y^2) and its cotangent on numbers worked by hand.
TEST(ReferenceLoss, MeanSquareAndCotangent) {
  std::vector<double> y = {1.0, -2.0, 0.5, 3.0};
  EXPECT_DOUBLE_EQ(reference::meanSquare(y), (1.0 + 4.0 + 0.25 + 9.0) / 4.0);
  std::vector<double> dy = reference::meanSquareCotangent(y);
  ASSERT_EQ(dy.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_DOUBLE_EQ(dy[i], 2.0 * y[i] / 4.0);
}

// The families' routing on hand-worked cases (one token each).
double sigmoidOf(double z) { return 1.0 / (1.0 + std::exp(-z)); }
double siluOf(double z) { return z * sigmoidOf(z); }

/// softmax(z)[i] over all of z.
double softmaxAt(const std::vector<double> &z, size_t i) {
  double denom = 0;
  for (double v : z)
    denom += std::exp(v);
  return std::exp(z[i]) / denom;
}

TEST(ReferenceFamilies, GroupLimitedSelectionByMaxAndByTop2Sum) {
  // Softmax over all; 3 groups of 2: {3.0, 0.0}, {2.9, 2.8}, {0.1, 0.2}.
  // Ungrouped top-2: columns 0, 2.
  std::vector<double> z = {3.0, 0.0, 2.9, 2.8, 0.1, 0.2};
  reference::RouteConfig c;
  c.k = 2;
  c.softmaxThenTopk = true;
  EXPECT_EQ(reference::route(z, 1, 6, c).ids, (std::vector<int32_t>{0, 2}));
  c.groups = 3;
  c.topkGroups = 1;
  c.routedScaling = 2.0;
  // By max: group 0 (max e^3.0) is kept; top-2 inside it: 0, then 1.
  reference::Routing byMax = reference::route(z, 1, 6, c);
  EXPECT_EQ(byMax.ids, (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(byMax.weights.size(), 2u);
  EXPECT_NEAR(byMax.weights[0], 2.0 * softmaxAt(z, 0), 1e-15);
  EXPECT_NEAR(byMax.weights[1], 2.0 * softmaxAt(z, 1), 1e-15);
  // By top-2 sum: group 1 (e^2.9 + e^2.8 = 34.6 > e^3 + e^0 = 21.1).
  c.groupScoreTop2Sum = true;
  reference::Routing byTop2 = reference::route(z, 1, 6, c);
  EXPECT_EQ(byTop2.ids, (std::vector<int32_t>{2, 3}));
  EXPECT_NEAR(byTop2.weights[0], 2.0 * softmaxAt(z, 2), 1e-15);
  EXPECT_NEAR(byTop2.weights[1], 2.0 * softmaxAt(z, 3), 1e-15);
  // Renormalised, then scaled.
  c.renormalize = true;
  reference::Routing renormalised = reference::route(z, 1, 6, c);
  double sum = softmaxAt(z, 2) + softmaxAt(z, 3);
  EXPECT_NEAR(renormalised.weights[0], 2.0 * softmaxAt(z, 2) / sum, 1e-15);
  EXPECT_NEAR(renormalised.weights[1], 2.0 * softmaxAt(z, 3) / sum, 1e-15);
  // Two groups kept: 1 and 0 (top-2 sums 34.6, 21.1, 2.3); top-2 of the
  // four: 0, 2.
  c.topkGroups = 2;
  EXPECT_EQ(reference::route(z, 1, 6, c).ids, (std::vector<int32_t>{0, 2}));
}

TEST(ReferenceFamilies, SelectionBiasChoosesWeightsStayUnbiased) {
  // Softmax s = [0.506, 0.186, 0.307]; s + b = [0.506, 0.686, 0.307].
  std::vector<double> z = {1.0, 0.0, 0.5};
  reference::RouteConfig c;
  c.k = 1;
  c.softmaxThenTopk = true;
  EXPECT_EQ(reference::route(z, 1, 3, c).ids, (std::vector<int32_t>{0}));
  c.selectionBias = {0.0, 0.5, 0.0};
  reference::Routing r = reference::route(z, 1, 3, c);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{1}));
  EXPECT_NEAR(r.weights[0], softmaxAt(z, 1), 1e-15);
  // Sigmoid: s = [0.731, 0.5, 0.622]; the bias picks column 1, weight 0.5.
  c.sigmoid = true;
  r = reference::route(z, 1, 3, c);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{1}));
  EXPECT_DOUBLE_EQ(r.weights[0], 0.5);
  // The bias gets no gradient and moves no logit's: the gradient is that
  // of the unbiased route with the same selection (here column 1 alone,
  // sigmoid: s (1 - s) dw).
  std::vector<double> dz = reference::routeBackward(z, 1, 3, c, {2.0});
  EXPECT_EQ(dz, (std::vector<double>{0.0, 2.0 * 0.25, 0.0}));
}

TEST(ReferenceFamilies, MaskedColumnsAreZeroNotMinusInfinity) {
  // Sigmoid, s = [0.5, 0.5, 0.731, 0.5]; bias [-0.2, -0.9, -1.2, -0.9]:
  // s + b = [0.3, -0.4, -0.469, -0.4]. Groups {0, 1}, {2, 3} by top-2 sum:
  // -0.1 and -0.869, so group 0 is kept and s + b of 2 and 3 becomes 0.0
  // (masked_fill(~mask, 0.0) in the families' code). Top-2: column 0
  // (0.3), then the masked 0.0 of column 2 (tied with 3: the lower id)
  // ahead of column 1 (-0.4) of the kept group. (With -inf: 0, 1.)
  std::vector<double> z = {0.0, 0.0, 1.0, 0.0};
  reference::RouteConfig c;
  c.k = 2;
  c.sigmoid = true;
  c.softmaxThenTopk = true;
  c.selectionBias = {-0.2, -0.9, -1.2, -0.9};
  c.groups = 2;
  c.topkGroups = 1;
  c.groupScoreTop2Sum = true;
  c.renormalize = true;
  c.routedScaling = 2.5;
  reference::Routing r = reference::route(z, 1, 4, c);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{0, 2}));
  // The weights: the unbiased scores of the chosen (the masked one's too).
  double s0 = 0.5, s2 = sigmoidOf(1.0);
  EXPECT_NEAR(r.weights[0], 2.5 * s0 / (s0 + s2), 1e-15);
  EXPECT_NEAR(r.weights[1], 2.5 * s2 / (s0 + s2), 1e-15);
  // Group 1 kept instead (a larger bias on 3): s + b = [0.3, -0.4, -0.469,
  // 0.4]; group sums -0.1 and -0.069; top-2: 3 (0.4), then the masked 0.0
  // of column 0 (tied with 1: the lower id), ahead of the kept column 2.
  c.selectionBias[3] = -0.1;
  r = reference::route(z, 1, 4, c);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{3, 0}));
  EXPECT_NEAR(r.weights[0], 2.5 * 0.5, 1e-15);
  EXPECT_NEAR(r.weights[1], 2.5 * 0.5, 1e-15);
}

TEST(ReferenceFamilies, GroupTiesKeepTheLowerGroupAndMoreSlotsThanKeptColumns) {
  // Equal logits: every group scores alike; the lower groups are kept, and
  // inside them the lower ids.
  std::vector<double> z(8, 0.0);
  reference::RouteConfig c;
  c.k = 3;
  c.sigmoid = true;
  c.groups = 4;
  c.topkGroups = 2;
  EXPECT_EQ(reference::route(z, 1, 8, c).ids, (std::vector<int32_t>{0, 1, 2}));
  // K larger than the kept columns: the rest come from the masked 0.0s,
  // lower ids first, with their unbiased scores as weights. (DeepSeek-V2's
  // code weights them 0 - it takes the masked values - so the verifier may
  // refuse K > topk_groups * C / groups.)
  std::vector<double> z2 = {0.0, 1.0, 2.0, 3.0};
  c = reference::RouteConfig();
  c.k = 3;
  c.softmaxThenTopk = true;
  c.groups = 2;
  c.topkGroups = 1;
  reference::Routing r = reference::route(z2, 1, 4, c);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{3, 2, 0}));
  EXPECT_NEAR(r.weights[2], softmaxAt(z2, 0), 1e-15);
}

TEST(ReferenceFamilies, RouterBiasIsAddedInFloat) {
  std::vector<float> x = {0.5f, -1.25f, 2.0f, 0.1f, 0.3f, -0.7f}; // [2, 3]
  std::vector<float> router = {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f}; // [3, 2]
  std::vector<float> bias = {0.125f, -3.0f};
  std::vector<float> plain = reference::routerLogits(x, router, 2, 3, 2);
  std::vector<float> biased = reference::routerLogits(x, router, bias, 2, 3, 2);
  ASSERT_EQ(biased.size(), 4u);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_EQ(biased[t * 2 + c], plain[t * 2 + c] + bias[c]);
}

// The families' experts on hand-worked cases: one token, one expert.
TEST(ReferenceFamilies, GptOssActivationInterleavedAndHalves) {
  // H = 1, M = 2: w13's row is [c0, c1, c2, c3]; interleaved: gate = c0, c2
  // and up = c1, c3; halves: gate = c0, c1 and up = c2, c3.
  BlockShape shape{1, 1, 2, 1};
  shape.gptOss = true;
  shape.expertBias = true;
  shape.limit = 3.0;
  BlockWeights w;
  w.w13 = {1.5f, -3.0f, 0.5f, 1.0f};
  w.b13 = {1.0f, -1.0f, 0.25f, 0.5f};
  w.w2 = {0.5f, -0.75f}; // [M, H]
  w.b2 = {0.25f};
  std::vector<float> x = {2.0f};
  Routing routing{{0}, {0.8}};
  auto gptOss = [&](double g, double u) {
    double gc = std::min(g, 3.0), uc = std::max(-3.0, std::min(u, 3.0));
    return (uc + 1) * gc * sigmoidOf(1.702 * gc);
  };
  // Interleaved: g = [2*1.5 + 1, 2*0.5 + 0.25] = [4, 1.25] (4 clamped to 3),
  // u = [2*-3 - 1, 2*1 + 0.5] = [-7, 2.5] (-7 clamped to -3).
  shape.interleaved = true;
  double a0 = gptOss(4.0, -7.0), a1 = gptOss(1.25, 2.5);
  std::vector<double> y = reference::block(x, routing, shape, w, 1);
  ASSERT_EQ(y.size(), 1u);
  // The routing weight scales the down bias too.
  EXPECT_NEAR(y[0], 0.8 * (a0 * 0.5 + a1 * -0.75 + 0.25), 1e-14);
  // The clamped column passes no gradient to its pre-activations.
  BlockGradients grad = reference::blockBackward(x, routing, shape, w, 1, {1.0});
  EXPECT_EQ(grad.w.b13[0], 0.0); // gate 0 = 4 > 3
  EXPECT_EQ(grad.w.b13[1], 0.0); // up 0 = -7 < -3
  EXPECT_NE(grad.w.b13[2], 0.0);
  EXPECT_NE(grad.w.b13[3], 0.0);
  EXPECT_EQ(grad.w.w13[0], 0.0);
  EXPECT_EQ(grad.w.w13[1], 0.0);
  EXPECT_DOUBLE_EQ(grad.w.b2[0], 0.8);
  EXPECT_NEAR(grad.routingWeights[0], a0 * 0.5 + a1 * -0.75 + 0.25, 1e-14);
  // Halves: g = [2*1.5 + 1, 2*-3 - 1] = [4, -7], u = [2*0.5 + 0.25,
  // 2*1 + 0.5] = [1.25, 2.5].
  shape.interleaved = false;
  y = reference::block(x, routing, shape, w, 1);
  EXPECT_NEAR(y[0], 0.8 * (gptOss(4.0, 1.25) * 0.5 + gptOss(-7.0, 2.5) * -0.75 + 0.25), 1e-14);
}

TEST(ReferenceFamilies, WeightInputScalesTheExpertsInput) {
  // H = 1, M = 1: g = u = x w; SwiGLU; w2 = 1.
  BlockShape shape{1, 1, 1, 1};
  BlockWeights w;
  w.w13 = {1.0f, 1.0f};
  w.w2 = {1.0f};
  std::vector<float> x = {1.0f};
  Routing routing{{0}, {0.5}};
  EXPECT_NEAR(reference::block(x, routing, shape, w, 1)[0], 0.5 * siluOf(1.0) * 1.0, 1e-15);
  shape.weightInput = true;
  EXPECT_NEAR(reference::block(x, routing, shape, w, 1)[0], siluOf(0.5) * 0.5, 1e-15);
  // dL/dr for L = y: d/dr (silu(r) r) = silu'(r) r + silu(r); dL/dx the
  // same times r / x.
  double r = 0.5, s = sigmoidOf(r);
  double expected = s * (1 + r * (1 - s)) * r + siluOf(r);
  BlockGradients grad = reference::blockBackward(x, routing, shape, w, 1, {1.0});
  EXPECT_NEAR(grad.routingWeights[0], expected, 1e-15);
  EXPECT_NEAR(grad.x[0], expected * r, 1e-15);
}

TEST(ReferenceFamilies, SharedGateScalesTheSharedExpert) {
  // No routed slot (id 1 = E: null); the shared expert S = 1 on H = 2.
  BlockShape shape{1, 2, 1, 1, 1};
  shape.sharedGate = true;
  BlockWeights w;
  w.w13 = {0, 0, 0, 0};
  w.w2 = {0, 0};
  w.sw13 = {0.5f, 1.0f, -1.0f, 2.0f}; // [H, 2S]: gate column 0, up column 1
  w.sw2 = {1.0f, -2.0f};              // [S, H]
  w.swg = {0.5f, 0.25f};
  std::vector<float> x = {1.0f, -1.0f};
  Routing routing{{1}, {0.9}};
  double g = 1.0 * 0.5 - 1.0 * -1.0, u = 1.0 * 1.0 - 1.0 * 2.0, gate = sigmoidOf(0.5 - 0.25);
  std::vector<double> y = reference::block(x, routing, shape, w, 1);
  EXPECT_NEAR(y[0], gate * siluOf(g) * u * 1.0, 1e-15);
  EXPECT_NEAR(y[1], gate * siluOf(g) * u * -2.0, 1e-15);
  // Without the gate: the plain SwiGLU.
  shape.sharedGate = false;
  y = reference::block(x, routing, shape, w, 1);
  EXPECT_NEAR(y[0], siluOf(g) * u, 1e-15);
}

TEST(ReferenceTermScale, RootSumSquareOfTheTermsWhereTheyCancel) {
  // H = 1, M = 2, two experts, top-2; g = u = x w13. Expert 0's two
  // columns give terms r a w2 of +t0 and -t0, which cancel in y; expert 1
  // has one nonzero term t1. y = t1, the scale sqrt(2 t0^2 + t1^2).
  BlockShape shape{1, 1, 2, 2};
  BlockWeights w;
  w.w13 = {1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 0.0f, 2.0f, 0.0f}; // [E, H, 2M]
  w.w2 = {3.0f, -3.0f, 0.5f, 0.0f};                        // [E, M, H]
  std::vector<float> x = {1.0f};
  Routing routing{{0, 1}, {0.5, 0.25}};
  double t0 = 0.5 * siluOf(1.0) * 1.0 * 3.0, t1 = 0.25 * siluOf(2.0) * 2.0 * 0.5;
  std::vector<double> y = reference::block(x, routing, shape, w, 2);
  std::vector<double> scale = reference::blockTermScale(x, routing, shape, w, 2);
  ASSERT_EQ(scale.size(), 1u);
  EXPECT_NEAR(y[0], t1, 1e-15);
  EXPECT_NEAR(scale[0], std::sqrt(2 * t0 * t0 + t1 * t1), 1e-15);
  // With one term it is |y|.
  routing = {{1, 2}, {0.25, 0.5}}; // slot 1 null
  EXPECT_NEAR(reference::blockTermScale(x, routing, shape, w, 2)[0],
              std::fabs(reference::block(x, routing, shape, w, 2)[0]), 1e-15);
}

TEST(ReferenceFamilies, NewFieldsDefaultOff) {
  reference::RouteConfig c;
  EXPECT_TRUE(c.selectionBias.empty());
  EXPECT_EQ(c.groups, 1);
  EXPECT_EQ(c.topkGroups, 1);
  EXPECT_FALSE(c.groupScoreTop2Sum);
  EXPECT_EQ(c.routedScaling, 1.0);
  BlockShape s{1, 1, 1, 1};
  EXPECT_FALSE(s.gptOss || s.interleaved || s.expertBias || s.weightInput || s.sharedGate);
  EXPECT_EQ(s.alpha, 1.702);
  EXPECT_EQ(s.limit, 7.0);
}

TEST(ReferenceFamiliesDeathTest, RefusesFormsThatDoNotGoTogether) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<double> z(6, 0.0);
  reference::RouteConfig c;
  c.softmaxThenTopk = true;
  c.groups = 2;
  c.nullExperts = 2;
  EXPECT_DEATH(reference::route(z, 1, 6, c), "null experts");
  c.nullExperts = 0;
  c.groups = 4; // does not divide 6
  EXPECT_DEATH(reference::route(z, 1, 6, c), "groups must divide");
  c.groups = 1;
  c.softmaxThenTopk = false; // softmax over the top-k cannot select on scores
  c.selectionBias.assign(6, 0.0);
  EXPECT_DEATH(reference::route(z, 1, 6, c), "softmax_then_topk");
  c.softmaxThenTopk = true;
  c.selectionBias.assign(5, 0.0);
  EXPECT_DEATH(reference::route(z, 1, 6, c), "one value per column");
  BlockShape shape{1, 1, 1, 1};
  shape.fusedW13 = false;
  shape.interleaved = true;
  BlockWeights w;
  w.w1 = {1.0f};
  w.w3 = {1.0f};
  w.w2 = {1.0f};
  EXPECT_DEATH(reference::block(std::vector<float>{1.0f}, Routing{{0}, {1.0}}, shape, w, 1),
               "interleaved");
}

} // namespace
