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
};

BlockShape shapeOf(const Case &c) {
  return BlockShape{c.tokens, c.hidden, c.mlp, c.experts, c.shared, c.fusedW13, c.sharedFused};
}

/// A weight of the block: its name and where it lives in each struct.
struct WeightRef {
  const char *name;
  std::vector<float> BlockWeights::*f32;
  std::vector<double> BlockWeightsF64::*f64;
};

std::vector<WeightRef> weightsUsed(const BlockShape &s) {
  std::vector<WeightRef> used;
  if (s.fusedW13) {
    used.push_back({"w13", &BlockWeights::w13, &BlockWeightsF64::w13});
  } else {
    used.push_back({"w1", &BlockWeights::w1, &BlockWeightsF64::w1});
    used.push_back({"w3", &BlockWeights::w3, &BlockWeightsF64::w3});
  }
  used.push_back({"w2", &BlockWeights::w2, &BlockWeightsF64::w2});
  if (s.shared > 0) {
    if (s.sharedFused) {
      used.push_back({"sw13", &BlockWeights::sw13, &BlockWeightsF64::sw13});
    } else {
      used.push_back({"sw1", &BlockWeights::sw1, &BlockWeightsF64::sw1});
      used.push_back({"sw3", &BlockWeights::sw3, &BlockWeightsF64::sw3});
    }
    used.push_back({"sw2", &BlockWeights::sw2, &BlockWeightsF64::sw2});
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
  // Central differences in double: truncation ~ kStep^2 |L'''| / 6 and
  // rounding ~ 1e-16 |L| / kStep, both ~1e-11 here. The tolerance is 1e-8 of
  // the largest gradient element: a wrong rule (a routing weight missing,
  // silu' replaced by sigmoid, a transposed index) is off by O(scale); the
  // errors seen are below 1e-9 of it.
  constexpr double kStep = 1e-5;
  const double tolerance = 1e-8 * scale + 1e-13;
  double worst = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    double saved = values[i];
    values[i] = saved + kStep;
    double up = loss();
    values[i] = saved - kStep;
    double down = loss();
    values[i] = saved;
    double fd = (up - down) / (2 * kStep);
    EXPECT_NEAR(grad[i], fd, tolerance)
        << "d loss / d " << what << " element " << i << " (max |gradient| " << scale << ")";
    worst = std::max(worst, std::fabs(grad[i] - fd) / std::max(scale, 1e-300));
  }
  return worst;
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

  // Exactly the weights the shape uses have gradients, laid out as the weight.
  std::vector<WeightRef> used = weightsUsed(shape);
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

  // <dw, weights> for a random dw.
  std::vector<double> dw(T * K);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (double &v : dw)
    v = d(rng);
  auto linear = [&] {
    reference::Routing r = reference::route(logits, T, C, c.config);
    double sum = 0;
    for (int64_t i = 0; i < T * K; ++i)
      sum += dw[i] * r.weights[i];
    return sum;
  };
  std::vector<double> dlogits = reference::routeBackward(logits, T, C, c.config, dw);
  checkAgainstFD("logits (linear in the weights)", dlogits, logits, linear);

  // The float and double routes agree on float values.
  std::vector<float> asFloat(logits.begin(), logits.end());
  std::vector<double> rounded(asFloat.begin(), asFloat.end());
  reference::Routing fromFloat = reference::route(asFloat, T, C, c.config);
  reference::Routing fromDouble = reference::route(rounded, T, C, c.config);
  EXPECT_EQ(fromFloat.ids, fromDouble.ids);
  EXPECT_EQ(fromFloat.weights, fromDouble.weights);

  // Through a block: mean(y^2) as a function of the logits.
  Case block;
  block.tokens = T; block.hidden = 4; block.mlp = 3; block.experts = c.experts; block.k = K;
  block.shared = 2;
  block.ids.assign(T * K, 0); // makeProblem's routing is not used: the logits route
  Problem p = makeProblem(block, rng);
  BlockShape shape = shapeOf(block);
  auto loss = [&] {
    reference::Routing r = reference::route(logits, T, C, c.config);
    return reference::meanSquare(reference::block(p.x, r, shape, p.w, K));
  };
  reference::Routing r = reference::route(logits, T, C, c.config);
  std::vector<double> y = reference::block(p.x, r, shape, p.w, K);
  BlockGradients grad =
      reference::blockBackward(p.x, r, shape, p.w, K, reference::meanSquareCotangent(y));
  checkAgainstFD("logits (through the block)",
                 reference::routeBackward(logits, T, C, c.config, grad.routingWeights), logits,
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

} // namespace
