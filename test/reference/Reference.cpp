//===- Reference.cpp - the MoE block in plain C++ --------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace moec::reference;

namespace {
/// One token's routing forward, kept for the backward: the chosen columns
/// (top-k by logit, ties to the lower id), their scores (softmax over the
/// K chosen or over every column, or sigmoid each), the softmax over every
/// column (softmax_then_topk only), which slots are null, and the sum of
/// the scores of the real slots.
struct TokenRoute {
  std::vector<int64_t> chosen;
  std::vector<double> score, prob;
  std::vector<bool> null;
  double sum = 0;
};

/// Whether the configuration selects on the scores (a selection bias or
/// groups: the families' forms) rather than on the logits.
bool selectsOnScores(const RouteConfig &c) { return !c.selectionBias.empty() || c.groups > 1; }

void checkRouteConfig(int64_t columns, const RouteConfig &c) {
  auto fail = [](const char *what) {
    std::fprintf(stderr, "route: %s\n", what);
    std::abort();
  };
  if (c.k < 0 || c.k > columns)
    fail("k must be in [0, columns]");
  if (!selectsOnScores(c))
    return;
  if (c.nullExperts > 0)
    fail("groups and a selection bias do not go with null experts");
  if (!c.sigmoid && !c.softmaxThenTopk)
    fail("groups and a selection bias need order softmax_then_topk (or sigmoid scoring)");
  if (!c.selectionBias.empty() && int64_t(c.selectionBias.size()) != columns)
    fail("the selection bias must have one value per column");
  if (c.groups < 1 || columns % c.groups != 0)
    fail("groups must divide the columns");
  if (c.topkGroups < 1 || c.topkGroups > c.groups)
    fail("topkGroups must be in [1, groups]");
}

/// The top-k of `value` [columns] (ties: the lower id), in order.
template <typename Value>
std::vector<int64_t> topk(const Value *value, int64_t columns, int64_t k) {
  std::vector<int64_t> chosen;
  std::vector<bool> taken(columns, false);
  for (int64_t s = 0; s < k; ++s) {
    int64_t best = -1;
    for (int64_t j = 0; j < columns; ++j)
      if (!taken[j] && (best < 0 || value[j] > value[best]))
        best = j;
    taken[best] = true;
    chosen.push_back(best);
  }
  return chosen;
}

/// The families' selection (RouteConfig): the scores s of every column
/// (softmax over all or sigmoid), s' = s + bias, the groups kept, s' of the
/// others 0.0, top-K of that. Sets r.prob to s with softmax.
template <typename Real>
std::vector<int64_t> selectOnScores(const Real *row, int64_t columns, const RouteConfig &c,
                                    TokenRoute &r) {
  std::vector<double> score(columns);
  if (c.sigmoid) {
    for (int64_t j = 0; j < columns; ++j)
      score[j] = 1.0 / (1.0 + std::exp(-double(row[j])));
  } else {
    double shift = -INFINITY, denom = 0;
    for (int64_t j = 0; j < columns; ++j)
      shift = std::max(shift, double(row[j]));
    for (int64_t j = 0; j < columns; ++j)
      denom += std::exp(double(row[j]) - shift);
    for (int64_t j = 0; j < columns; ++j)
      score[j] = std::exp(double(row[j]) - shift) / denom;
    r.prob = score;
  }
  std::vector<double> choice = score;
  if (!c.selectionBias.empty())
    for (int64_t j = 0; j < columns; ++j)
      choice[j] += c.selectionBias[j];
  if (c.groups > 1) {
    int64_t size = columns / c.groups;
    std::vector<double> groupScore(c.groups);
    for (int64_t g = 0; g < c.groups; ++g) {
      const double *member = &choice[g * size];
      if (c.groupScoreTop2Sum) {
        // The sum of the two largest (the one value of a group of one).
        std::vector<int64_t> top = topk(member, size, std::min<int64_t>(2, size));
        groupScore[g] = 0;
        for (int64_t i : top)
          groupScore[g] += member[i];
      } else {
        groupScore[g] = *std::max_element(member, member + size);
      }
    }
    std::vector<int64_t> kept = topk(groupScore.data(), c.groups, c.topkGroups);
    std::vector<bool> keep(c.groups, false);
    for (int64_t g : kept)
      keep[g] = true;
    // masked_fill(~mask, 0.0), as the families' code: not -inf.
    for (int64_t j = 0; j < columns; ++j)
      if (!keep[j / size])
        choice[j] = 0.0;
  }
  return topk(choice.data(), columns, c.k);
}

template <typename Real>
TokenRoute routeToken(const Real *row, int64_t columns, const RouteConfig &c) {
  int64_t experts = columns - c.nullExperts;
  TokenRoute r;
  r.chosen = selectsOnScores(c) ? selectOnScores(row, columns, c, r) : topk(row, columns, c.k);
  r.score.resize(c.k);
  if (c.sigmoid) {
    for (int64_t s = 0; s < c.k; ++s)
      r.score[s] = 1.0 / (1.0 + std::exp(-double(row[r.chosen[s]])));
  } else if (c.softmaxThenTopk && !r.prob.empty()) {
    for (int64_t s = 0; s < c.k; ++s)
      r.score[s] = r.prob[r.chosen[s]];
  } else if (c.softmaxThenTopk) {
    double shift = -INFINITY, denom = 0;
    for (int64_t j = 0; j < columns; ++j)
      shift = std::max(shift, double(row[j]));
    for (int64_t j = 0; j < columns; ++j)
      denom += std::exp(double(row[j]) - shift);
    r.prob.resize(columns);
    for (int64_t j = 0; j < columns; ++j)
      r.prob[j] = std::exp(double(row[j]) - shift) / denom;
    for (int64_t s = 0; s < c.k; ++s)
      r.score[s] = r.prob[r.chosen[s]];
  } else {
    double shift = double(row[r.chosen[0]]), denom = 0;
    for (int64_t s = 0; s < c.k; ++s)
      denom += std::exp(double(row[r.chosen[s]]) - shift);
    for (int64_t s = 0; s < c.k; ++s)
      r.score[s] = std::exp(double(row[r.chosen[s]]) - shift) / denom;
  }
  // Null: a null expert's slot, and with take_until_null every slot after
  // the first one (only when the router scores null experts at all).
  r.null.assign(c.k, false);
  bool seen = false;
  for (int64_t s = 0; s < c.k; ++s) {
    bool nullExpert = r.chosen[s] >= experts;
    r.null[s] = c.nullExperts > 0 && (nullExpert || (c.takeUntilNull && seen));
    seen = seen || nullExpert;
    r.sum += r.null[s] ? 0.0 : r.score[s];
  }
  return r;
}

template <typename Real>
Routing routeImpl(const std::vector<Real> &logits, int64_t tokens, int64_t columns,
                  const RouteConfig &c) {
  int64_t experts = columns - c.nullExperts;
  checkRouteConfig(columns, c);
  Routing r;
  for (int64_t t = 0; t < tokens; ++t) {
    TokenRoute token = routeToken(&logits[t * columns], columns, c);
    bool seen = false;
    for (int64_t s = 0; s < c.k; ++s) {
      // Slots after the first null expert report null expert E.
      int64_t id = c.takeUntilNull && seen ? experts : token.chosen[s];
      seen = seen || token.chosen[s] >= experts;
      double w = token.null[s] ? 0.0 : token.score[s];
      r.ids.push_back(static_cast<int32_t>(id));
      w = c.renormalize && token.sum > 0 ? w / token.sum : w;
      r.weights.push_back(c.routedScaling == 1.0 ? w : w * c.routedScaling);
    }
  }
  return r;
}
} // namespace

Routing moec::reference::route(const std::vector<float> &logits, int64_t tokens,
                               int64_t columns, const RouteConfig &c) {
  return routeImpl(logits, tokens, columns, c);
}

Routing moec::reference::nullSlots(const Routing &routing, const std::vector<float> &draws,
                                   int64_t tokens, int64_t k, int64_t experts, double fraction,
                                   bool takeUntilNull, bool renormalize) {
  double p = fraction;
  if (takeUntilNull && k > 1 && fraction > 0 && fraction < 1) {
    // Slot j (1-based) survives with probability (1 - p)^j; solve
    // mean_j (1 - (1 - p)^j) = fraction by halving the interval.
    double lo = 0, hi = 1;
    for (int step = 0; step < 100; ++step) {
      double mid = (lo + hi) / 2, nulls = 0;
      for (int64_t j = 1; j <= k; ++j)
        nulls += 1 - std::pow(1 - mid, double(j));
      if (nulls / double(k) < fraction)
        lo = mid;
      else
        hi = mid;
    }
    p = (lo + hi) / 2;
  }
  Routing out = routing;
  for (int64_t t = 0; t < tokens; ++t) {
    bool seen = false;
    double sum = 0;
    for (int64_t s = 0; s < k; ++s) {
      int64_t i = t * k + s;
      bool isNull = out.ids[i] < 0 || out.ids[i] >= experts || draws[i] < float(p) ||
                    (takeUntilNull && seen);
      seen = seen || isNull;
      if (isNull) {
        out.ids[i] = int32_t(experts);
        out.weights[i] = 0;
      }
      sum += out.weights[i];
    }
    if (renormalize && sum > 0)
      for (int64_t s = 0; s < k; ++s)
        out.weights[t * k + s] /= sum;
  }
  return out;
}

Routing moec::reference::route(const std::vector<double> &logits, int64_t tokens,
                               int64_t columns, const RouteConfig &c) {
  return routeImpl(logits, tokens, columns, c);
}

std::vector<double> moec::reference::routeBackward(const std::vector<double> &logits,
                                                   int64_t tokens, int64_t columns,
                                                   const RouteConfig &c,
                                                   const std::vector<double> &dweights) {
  if (int64_t(logits.size()) != tokens * columns || int64_t(dweights.size()) != tokens * c.k) {
    std::fprintf(stderr, "routeBackward: logits must be [T, C] and dweights [T, K]\n");
    std::abort();
  }
  checkRouteConfig(columns, c);
  std::vector<double> dlogits(tokens * columns, 0.0);
  for (int64_t t = 0; t < tokens; ++t) {
    double *dz = &dlogits[t * columns];
    // w = F w': dw' = F dw.
    std::vector<double> scaled(&dweights[t * c.k], &dweights[t * c.k] + c.k);
    for (double &v : scaled)
      v *= c.routedScaling;
    const double *dw = scaled.data();
    // The forward again, keeping what the chain rule needs.
    TokenRoute token = routeToken(&logits[t * columns], columns, c);
    const std::vector<int64_t> &chosen = token.chosen;
    const std::vector<double> &score = token.score, &prob = token.prob;
    const std::vector<bool> &null = token.null;
    double sum = token.sum;
    // w = v / sum(v) (renormalize) with v = null ? 0 : score:
    // dv_j = (dw_j - sum_i w_i dw_i) / sum(v).
    std::vector<double> dv(dw, dw + c.k);
    if (c.renormalize && sum > 0) {
      double dot = 0;
      for (int64_t s = 0; s < c.k; ++s)
        dot += (null[s] ? 0.0 : score[s] / sum) * dw[s];
      for (int64_t s = 0; s < c.k; ++s)
        dv[s] = (dw[s] - dot) / sum;
    }
    std::vector<double> dscore(c.k);
    for (int64_t s = 0; s < c.k; ++s)
      dscore[s] = null[s] ? 0.0 : dv[s];
    if (c.sigmoid) {
      for (int64_t s = 0; s < c.k; ++s)
        dz[chosen[s]] += dscore[s] * score[s] * (1.0 - score[s]);
    } else {
      // Softmax (over the K chosen or every column):
      // dz_j = p_j (dp_j - sum_i p_i dp_i), dp nonzero at the chosen only.
      double dot = 0;
      for (int64_t s = 0; s < c.k; ++s)
        dot += score[s] * dscore[s];
      if (c.softmaxThenTopk)
        for (int64_t j = 0; j < columns; ++j)
          dz[j] -= prob[j] * dot;
      for (int64_t s = 0; s < c.k; ++s)
        dz[chosen[s]] += score[s] * dscore[s] - (c.softmaxThenTopk ? 0.0 : score[s] * dot);
    }
  }
  return dlogits;
}

void moec::reference::routerBackward(const std::vector<float> &x, const std::vector<float> &router,
                                     int64_t tokens, int64_t hidden, int64_t columns,
                                     const std::vector<double> &dlogits,
                                     std::vector<double> &dx, std::vector<double> &drouter) {
  drouter.assign(hidden * columns, 0.0);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < hidden; ++h)
      for (int64_t c = 0; c < columns; ++c) {
        double g = dlogits[t * columns + c];
        dx[t * hidden + h] += g * double(router[h * columns + c]);
        drouter[h * columns + c] += double(x[t * hidden + h]) * g;
      }
}

namespace {
double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }
double silu(double z) { return z / (1.0 + std::exp(-z)); }
double siluGrad(double z) {
  double s = sigmoid(z);
  return s * (1.0 + z * (1.0 - s));
}

/// The gated activation a(g, u) of an expert's column: SwiGLU, silu(g) * u,
/// or GPT-OSS's, (clamp(u, -limit, limit) + 1) * gc * sigmoid(alpha * gc)
/// with gc = min(g, limit).
struct Activation {
  bool gptOss = false;
  double alpha = 1.702, limit = 7.0;

  double operator()(double g, double u) const {
    if (!gptOss)
      return silu(g) * u;
    double gc = std::min(g, limit), uc = std::min(std::max(u, -limit), limit);
    return (uc + 1.0) * (gc * sigmoid(alpha * gc));
  }

  /// da/dg and da/du; a clamp passes no gradient where it clamps (g >
  /// limit; |u| > limit) and all of it inside (the bounds included).
  void grad(double g, double u, double &dg, double &du) const {
    if (!gptOss) {
      dg = u * siluGrad(g);
      du = silu(g);
      return;
    }
    double gc = std::min(g, limit), uc = std::min(std::max(u, -limit), limit);
    double s = sigmoid(alpha * gc);
    // d(gc s(alpha gc)) / dgc = s + alpha gc s (1 - s).
    dg = g <= limit ? (uc + 1.0) * (s + alpha * gc * s * (1.0 - s)) : 0.0;
    du = std::fabs(u) <= limit ? gc * s : 0.0;
  }
};

const Activation kSwiGLU{};

Activation routedActivation(const BlockShape &s) {
  Activation act;
  act.gptOss = s.gptOss;
  act.alpha = s.alpha;
  act.limit = s.limit;
  return act;
}

/// What mlp() adds to its output: the values, or the squares of the terms
/// each value sums (for blockTermScale()).
enum class Sum { Values, SquaredTerms };

/// scale * (act(x' @ gate + bias, x' @ up + bias) @ down + downBias) added
/// to `out` for one row, x' = inScale * x; `gateUp(h, j, up)` gives column
/// j of the gate (up = false) or of the up projection, `gateUpBias(j, up)`
/// and `downBias(h)` the biases (0 when there are none). With
/// Sum::SquaredTerms, the squares of scale * a_j * down(j, h) and of
/// scale * downBias(h) instead.
template <Sum sum = Sum::Values, typename Real, typename GateUp, typename GateUpBias,
          typename Down, typename DownBias>
void mlp(const Real *x, double inScale, int64_t hidden, int64_t width, const Activation &act,
         GateUp gateUp, GateUpBias gateUpBias, Down down, DownBias downBias, double scale,
         double *out) {
  std::vector<double> a(width);
  for (int64_t j = 0; j < width; ++j) {
    double g = 0, u = 0;
    for (int64_t h = 0; h < hidden; ++h) {
      double xin = inScale * double(x[h]);
      g += xin * gateUp(h, j, /*up=*/false);
      u += xin * gateUp(h, j, /*up=*/true);
    }
    g += gateUpBias(j, /*up=*/false);
    u += gateUpBias(j, /*up=*/true);
    a[j] = act(g, u);
  }
  for (int64_t h = 0; h < hidden; ++h) {
    double acc = 0;
    if (sum == Sum::SquaredTerms) {
      for (int64_t j = 0; j < width; ++j)
        acc += (scale * a[j] * down(j, h)) * (scale * a[j] * down(j, h));
      out[h] += acc + (scale * downBias(h)) * (scale * downBias(h));
      continue;
    }
    for (int64_t j = 0; j < width; ++j)
      acc += a[j] * down(j, h);
    acc += downBias(h);
    out[h] += scale * acc;
  }
}

/// The reverse of mlp() for one row: `dy` [hidden] is the cotangent of
/// `out`; adds the gradient of the expert's input x' to `dxin` [hidden]
/// and, through `gateUpGrad(h, j, up)`, `gateUpBiasGrad(j, up)`,
/// `downGrad(j, h)` and `downBiasGrad(h)` (references into the gradients,
/// indexed as the weights), to the weights' gradients. Returns the
/// gradient of `scale` (the routing weight on the output): dy . (mlp
/// output before scaling, down bias included).
template <typename Real, typename GateUp, typename GateUpBias, typename Down, typename DownBias,
          typename GateUpGrad, typename GateUpBiasGrad, typename DownGrad, typename DownBiasGrad>
double mlpBackward(const Real *x, double inScale, int64_t hidden, int64_t width,
                   const Activation &act, GateUp gateUp, GateUpBias gateUpBias, Down down,
                   DownBias downBias, double scale, const double *dy, double *dxin,
                   GateUpGrad gateUpGrad, GateUpBiasGrad gateUpBiasGrad, DownGrad downGrad,
                   DownBiasGrad downBiasGrad) {
  // out[h] = sum_j a_j down(j, h) + downBias(h).
  double dscale = 0;
  for (int64_t h = 0; h < hidden; ++h) {
    dscale += downBias(h) * dy[h];
    downBiasGrad(h) += scale * dy[h];
  }
  for (int64_t j = 0; j < width; ++j) {
    // Forward of column j.
    double g = 0, u = 0;
    for (int64_t h = 0; h < hidden; ++h) {
      double xin = inScale * double(x[h]);
      g += xin * gateUp(h, j, /*up=*/false);
      u += xin * gateUp(h, j, /*up=*/true);
    }
    g += gateUpBias(j, /*up=*/false);
    u += gateUpBias(j, /*up=*/true);
    double a = act(g, u);
    // out[h] += scale * a * down(j, h).
    double da = 0;
    double aDownDy = 0; // a * (down[j, :] . dy)
    for (int64_t h = 0; h < hidden; ++h) {
      da += scale * down(j, h) * dy[h];
      downGrad(j, h) += scale * a * dy[h];
      aDownDy += a * down(j, h) * dy[h];
    }
    dscale += aDownDy;
    // a = act(g, u).
    double dadg, dadu;
    act.grad(g, u, dadg, dadu);
    double dg = da * dadg, du = da * dadu;
    gateUpBiasGrad(j, /*up=*/false) += dg;
    gateUpBiasGrad(j, /*up=*/true) += du;
    // g = x' . gate[:, j], u = x' . up[:, j].
    for (int64_t h = 0; h < hidden; ++h) {
      double xin = inScale * double(x[h]);
      gateUpGrad(h, j, /*up=*/false) += xin * dg;
      gateUpGrad(h, j, /*up=*/true) += xin * du;
      dxin[h] += gateUp(h, j, /*up=*/false) * dg + gateUp(h, j, /*up=*/true) * du;
    }
  }
  return dscale;
}

/// The column of w13 (and b13) holding column j of the gate (up = false)
/// or of the up projection: halves, or alternating with `interleaved`.
int64_t gateUpColumn(const BlockShape &s, int64_t j, bool up) {
  if (s.interleaved)
    return 2 * j + (up ? 1 : 0);
  return up ? s.mlp + j : j;
}

/// Element j of the gate (up = false) or up projection (up = true) in row h
/// of expert e's w13, or of w1 / w3.
template <typename Vec>
auto &expertGateUp(Vec &w13, Vec &w1, Vec &w3, const BlockShape &s, int64_t e,
                   int64_t h, int64_t j, bool up) {
  int64_t H = s.hidden, M = s.mlp;
  if (s.fusedW13)
    return w13[(e * H + h) * 2 * M + gateUpColumn(s, j, up)];
  return (up ? w3 : w1)[(e * H + h) * M + j];
}

template <typename Vec>
auto &sharedGateUp(Vec &sw13, Vec &sw1, Vec &sw3, const BlockShape &s,
                   int64_t h, int64_t j, bool up) {
  int64_t S = s.shared;
  if (s.sharedFused)
    return sw13[h * 2 * S + (up ? S + j : j)];
  return (up ? sw3 : sw1)[h * S + j];
}

/// Which of the optional weights the block uses.
struct Uses {
  bool b13 = false, b2 = false, swg = false;
};

/// Checks the shape's variants against the weights' sizes.
template <typename Weights>
Uses checkBlock(const BlockShape &s, const Weights &w, const char *who) {
  int64_t H = s.hidden, M = s.mlp, E = s.experts;
  auto fail = [&](const char *what) {
    std::fprintf(stderr, "%s: %s\n", who, what);
    std::abort();
  };
  if (s.interleaved && !s.fusedW13)
    fail("interleaved gate/up columns need a fused w13");
  Uses uses;
  uses.b13 = s.expertBias && !w.b13.empty();
  uses.b2 = s.expertBias && !w.b2.empty();
  uses.swg = s.sharedGate && s.shared > 0;
  if (uses.b13 && int64_t(w.b13.size()) != E * 2 * M)
    fail("b13 must be [E, 2M]");
  if (uses.b2 && int64_t(w.b2.size()) != E * H)
    fail("b2 must be [E, H]");
  if (uses.swg && int64_t(w.swg.size()) != H)
    fail("the shared gate swg must be [H]");
  return uses;
}

/// sigmoid(x . swg) for one row.
template <typename Real, typename Vec>
double sharedGateOf(const Real *x, const Vec &swg, int64_t hidden) {
  double z = 0;
  for (int64_t h = 0; h < hidden; ++h)
    z += double(x[h]) * double(swg[h]);
  return sigmoid(z);
}

template <Sum sum = Sum::Values, typename Real, typename Weights>
std::vector<double> blockImpl(const std::vector<Real> &x, const Routing &routing,
                              const BlockShape &s, const Weights &w, int64_t k) {
  int64_t H = s.hidden, M = s.mlp, E = s.experts, S = s.shared;
  Uses uses = checkBlock(s, w, "block");
  Activation act = routedActivation(s);
  auto none = [](auto...) -> double { return 0.0; };
  std::vector<double> y(s.tokens * H, 0.0);
  for (int64_t t = 0; t < s.tokens; ++t) {
    const Real *xt = &x[t * H];
    double *yt = &y[t * H];
    for (int64_t slot = 0; slot < k; ++slot) {
      int64_t e = routing.ids[t * k + slot];
      if (e < 0 || e >= E)
        continue; // null: no compute
      auto gateUp = [&](int64_t h, int64_t j, bool up) -> double {
        return expertGateUp(w.w13, w.w1, w.w3, s, e, h, j, up);
      };
      auto gateUpBias = [&](int64_t j, bool up) -> double {
        return uses.b13 ? double(w.b13[e * 2 * M + gateUpColumn(s, j, up)]) : 0.0;
      };
      auto down = [&](int64_t j, int64_t h) -> double { return w.w2[(e * M + j) * H + h]; };
      auto downBias = [&](int64_t h) -> double { return uses.b2 ? double(w.b2[e * H + h]) : 0.0; };
      double r = routing.weights[t * k + slot];
      // weight_input: the expert on r x, its output unweighted.
      mlp<sum>(xt, s.weightInput ? r : 1.0, H, M, act, gateUp, gateUpBias, down, downBias,
          s.weightInput ? 1.0 : r, yt);
    }
    if (S > 0) {
      auto gateUp = [&](int64_t h, int64_t j, bool up) -> double {
        return sharedGateUp(w.sw13, w.sw1, w.sw3, s, h, j, up);
      };
      auto down = [&](int64_t j, int64_t h) -> double { return w.sw2[j * H + h]; };
      double gate = uses.swg ? sharedGateOf(xt, w.swg, H) : 1.0;
      mlp<sum>(xt, 1.0, H, S, kSwiGLU, gateUp, none, down, none, gate, yt);
    }
  }
  return y;
}

template <typename Real, typename Weights>
BlockGradients backwardImpl(const std::vector<Real> &x, const Routing &routing,
                            const BlockShape &s, const Weights &w, int64_t k,
                            const std::vector<double> &dy) {
  int64_t T = s.tokens, H = s.hidden, M = s.mlp, E = s.experts, S = s.shared;
  if (int64_t(dy.size()) != T * H || int64_t(x.size()) != T * H) {
    std::fprintf(stderr, "blockBackward: x and dy must be [T, H]\n");
    std::abort();
  }
  Uses uses = checkBlock(s, w, "blockBackward");
  Activation act = routedActivation(s);
  BlockGradients grad;
  grad.x.assign(T * H, 0.0);
  grad.routingWeights.assign(T * k, 0.0);
  BlockWeightsF64 &dw = grad.w;
  if (s.fusedW13) {
    dw.w13.assign(E * H * 2 * M, 0.0);
  } else {
    dw.w1.assign(E * H * M, 0.0);
    dw.w3.assign(E * H * M, 0.0);
  }
  dw.w2.assign(E * M * H, 0.0);
  if (uses.b13)
    dw.b13.assign(E * 2 * M, 0.0);
  if (uses.b2)
    dw.b2.assign(E * H, 0.0);
  if (S > 0) {
    if (s.sharedFused) {
      dw.sw13.assign(H * 2 * S, 0.0);
    } else {
      dw.sw1.assign(H * S, 0.0);
      dw.sw3.assign(H * S, 0.0);
    }
    dw.sw2.assign(S * H, 0.0);
    if (uses.swg)
      dw.swg.assign(H, 0.0);
  }
  auto none = [](auto...) -> double { return 0.0; };
  double sink = 0; // the gradient of a bias the block does not have
  auto noneGrad = [&](auto...) -> double & { return sink; };
  std::vector<double> dxin(H);
  for (int64_t t = 0; t < T; ++t) {
    const Real *xt = &x[t * H];
    const double *dyt = &dy[t * H];
    double *dxt = &grad.x[t * H];
    for (int64_t slot = 0; slot < k; ++slot) {
      int64_t e = routing.ids[t * k + slot];
      if (e < 0 || e >= E)
        continue; // null: no compute, no gradient
      auto gateUp = [&](int64_t h, int64_t j, bool up) -> double {
        return expertGateUp(w.w13, w.w1, w.w3, s, e, h, j, up);
      };
      auto gateUpBias = [&](int64_t j, bool up) -> double {
        return uses.b13 ? double(w.b13[e * 2 * M + gateUpColumn(s, j, up)]) : 0.0;
      };
      auto down = [&](int64_t j, int64_t h) -> double { return w.w2[(e * M + j) * H + h]; };
      auto downBias = [&](int64_t h) -> double { return uses.b2 ? double(w.b2[e * H + h]) : 0.0; };
      auto gateUpGrad = [&](int64_t h, int64_t j, bool up) -> double & {
        return expertGateUp(dw.w13, dw.w1, dw.w3, s, e, h, j, up);
      };
      auto gateUpBiasGrad = [&](int64_t j, bool up) -> double & {
        return uses.b13 ? dw.b13[e * 2 * M + gateUpColumn(s, j, up)] : sink;
      };
      auto downGrad = [&](int64_t j, int64_t h) -> double & { return dw.w2[(e * M + j) * H + h]; };
      auto downBiasGrad = [&](int64_t h) -> double & {
        return uses.b2 ? dw.b2[e * H + h] : sink;
      };
      double r = routing.weights[t * k + slot];
      double &dr = grad.routingWeights[t * k + slot];
      if (!s.weightInput) {
        dr = mlpBackward(xt, 1.0, H, M, act, gateUp, gateUpBias, down, downBias, r, dyt, dxt,
                         gateUpGrad, gateUpBiasGrad, downGrad, downBiasGrad);
        continue;
      }
      // weight_input: x' = r x, y += expert(x'): dx += r dx', dr = dx' . x.
      std::fill(dxin.begin(), dxin.end(), 0.0);
      mlpBackward(xt, r, H, M, act, gateUp, gateUpBias, down, downBias, 1.0, dyt, dxin.data(),
                  gateUpGrad, gateUpBiasGrad, downGrad, downBiasGrad);
      dr = 0;
      for (int64_t h = 0; h < H; ++h) {
        dxt[h] += r * dxin[h];
        dr += dxin[h] * double(xt[h]);
      }
    }
    if (S > 0) {
      auto gateUp = [&](int64_t h, int64_t j, bool up) -> double {
        return sharedGateUp(w.sw13, w.sw1, w.sw3, s, h, j, up);
      };
      auto down = [&](int64_t j, int64_t h) -> double { return w.sw2[j * H + h]; };
      auto gateUpGrad = [&](int64_t h, int64_t j, bool up) -> double & {
        return sharedGateUp(dw.sw13, dw.sw1, dw.sw3, s, h, j, up);
      };
      auto downGrad = [&](int64_t j, int64_t h) -> double & { return dw.sw2[j * H + h]; };
      double gate = uses.swg ? sharedGateOf(xt, w.swg, H) : 1.0;
      double dgate = mlpBackward(xt, 1.0, H, S, kSwiGLU, gateUp, none, down, none, gate, dyt, dxt,
                                 gateUpGrad, noneGrad, downGrad, noneGrad);
      if (uses.swg) {
        // gate = sigmoid(z), z = x . swg.
        double dz = dgate * gate * (1.0 - gate);
        for (int64_t h = 0; h < H; ++h) {
          dxt[h] += dz * double(w.swg[h]);
          dw.swg[h] += dz * double(xt[h]);
        }
      }
    }
  }
  return grad;
}
} // namespace

std::vector<double> moec::reference::toF64(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

BlockWeightsF64 moec::reference::toF64(const BlockWeights &w) {
  return {toF64(w.w13),  toF64(w.w1),  toF64(w.w3),  toF64(w.w2),
          toF64(w.sw13), toF64(w.sw1), toF64(w.sw3), toF64(w.sw2),
          toF64(w.b13),  toF64(w.b2),  toF64(w.swg)};
}

std::vector<double> moec::reference::block(const std::vector<float> &x,
                                           const Routing &routing,
                                           const BlockShape &s,
                                           const BlockWeights &w, int64_t k) {
  return blockImpl(x, routing, s, w, k);
}

std::vector<double> moec::reference::block(const std::vector<double> &x,
                                           const Routing &routing,
                                           const BlockShape &s,
                                           const BlockWeightsF64 &w, int64_t k) {
  return blockImpl(x, routing, s, w, k);
}

std::vector<double> moec::reference::blockTermScale(const std::vector<float> &x,
                                                    const Routing &routing,
                                                    const BlockShape &s,
                                                    const BlockWeights &w, int64_t k) {
  std::vector<double> scale = blockImpl<Sum::SquaredTerms>(x, routing, s, w, k);
  for (double &v : scale)
    v = std::sqrt(v);
  return scale;
}

const std::vector<double> &moec::reference::BlockGradients::of(
    std::vector<float> BlockWeights::*weight) const {
  if (weight == &BlockWeights::w13) return w.w13;
  if (weight == &BlockWeights::w1) return w.w1;
  if (weight == &BlockWeights::w3) return w.w3;
  if (weight == &BlockWeights::w2) return w.w2;
  if (weight == &BlockWeights::sw13) return w.sw13;
  if (weight == &BlockWeights::sw1) return w.sw1;
  if (weight == &BlockWeights::sw3) return w.sw3;
  if (weight == &BlockWeights::sw2) return w.sw2;
  if (weight == &BlockWeights::b13) return w.b13;
  if (weight == &BlockWeights::b2) return w.b2;
  if (weight == &BlockWeights::swg) return w.swg;
  std::fprintf(stderr, "BlockGradients::of: not a weight of BlockWeights\n");
  std::abort();
}

BlockGradients moec::reference::blockBackward(const std::vector<float> &x,
                                              const Routing &routing,
                                              const BlockShape &s,
                                              const BlockWeights &w, int64_t k,
                                              const std::vector<double> &dy) {
  return backwardImpl(x, routing, s, w, k, dy);
}

BlockGradients moec::reference::blockBackward(const std::vector<double> &x,
                                              const Routing &routing,
                                              const BlockShape &s,
                                              const BlockWeightsF64 &w, int64_t k,
                                              const std::vector<double> &dy) {
  return backwardImpl(x, routing, s, w, k, dy);
}

std::vector<int8_t> moec::reference::clampSides(const std::vector<float> &x, const Routing &routing,
                                                const BlockShape &s, const BlockWeights &w, int64_t k) {
  if (!s.gptOss)
    return {};
  int64_t H = s.hidden, M = s.mlp, E = s.experts;
  Uses uses = checkBlock(s, w, "clampSides");
  std::vector<int8_t> sides;
  for (int64_t t = 0; t < s.tokens; ++t)
    for (int64_t slot = 0; slot < k; ++slot) {
      int64_t e = routing.ids[t * k + slot];
      if (e < 0 || e >= E)
        continue;
      double inScale = s.weightInput ? routing.weights[t * k + slot] : 1.0;
      for (int64_t j = 0; j < M; ++j) {
        // The pre-activations as mlp() computes them.
        double g = 0, u = 0;
        for (int64_t h = 0; h < H; ++h) {
          double xin = inScale * double(x[t * H + h]);
          g += xin * double(expertGateUp(w.w13, w.w1, w.w3, s, e, h, j, /*up=*/false));
          u += xin * double(expertGateUp(w.w13, w.w1, w.w3, s, e, h, j, /*up=*/true));
        }
        if (uses.b13) {
          g += double(w.b13[e * 2 * M + gateUpColumn(s, j, /*up=*/false)]);
          u += double(w.b13[e * 2 * M + gateUpColumn(s, j, /*up=*/true)]);
        }
        sides.push_back(int8_t(g > s.limit));
        sides.push_back(int8_t(u > s.limit ? 1 : u < -s.limit ? -1 : 0));
      }
    }
  return sides;
}

double moec::reference::meanSquare(const std::vector<double> &y) {
  double sum = 0;
  for (double v : y)
    sum += v * v;
  return sum / double(y.size());
}

std::vector<double> moec::reference::meanSquareCotangent(const std::vector<double> &y) {
  std::vector<double> dy(y.size());
  for (size_t i = 0; i < y.size(); ++i)
    dy[i] = 2.0 * y[i] / double(y.size());
  return dy;
}

std::vector<float> moec::reference::routerLogits(const std::vector<float> &x,
                                                 const std::vector<float> &router,
                                                 int64_t tokens, int64_t hidden,
                                                 int64_t columns) {
  std::vector<float> logits(tokens * columns);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < columns; ++c) {
      float acc = 0.0f;
      for (int64_t h = 0; h < hidden; ++h)
        acc += x[t * hidden + h] * router[h * columns + c];
      logits[t * columns + c] = acc;
    }
  return logits;
}

std::vector<float> moec::reference::routerLogits(const std::vector<float> &x,
                                                 const std::vector<float> &router,
                                                 const std::vector<float> &bias,
                                                 int64_t tokens, int64_t hidden,
                                                 int64_t columns) {
  if (int64_t(bias.size()) != columns) {
    std::fprintf(stderr, "routerLogits: the router bias must be [C]\n");
    std::abort();
  }
  std::vector<float> logits = routerLogits(x, router, tokens, hidden, columns);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < columns; ++c)
      logits[t * columns + c] += bias[c];
  return logits;
}

namespace {
/// One weight matrix [D, N] quantized: q row-major, one scale per column or
/// one for all.
struct Int8Matrix {
  int64_t depth = 0, width = 0;
  std::vector<int32_t> q;
  std::vector<float> scales; // [N] per channel, else [1]
  float scale(int64_t n) const { return scales.size() == 1 ? scales[0] : scales[n]; }
};

/// max(a, b), NaN if either is: the int8 scales keep a NaN (moe.gmm's
/// arith.maximumf), so it reaches every value they scale.
float nanMax(float a, float b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
float int8Reciprocal(float maxAbs) { return maxAbs > 0 ? 127.0f / maxAbs : 0.0f; }
int32_t quantizeInt8(float v, float reciprocal) {
  float q = std::nearbyint(v * reciprocal); // half to even, the default rounding mode
  return static_cast<int32_t>(std::min(127.0f, std::max(-127.0f, q)));
}

/// w(d, n) for d < depth, n < width.
template <typename At>
Int8Matrix quantizeMatrix(At w, int64_t depth, int64_t width, bool perChannel) {
  Int8Matrix m;
  m.depth = depth, m.width = width;
  std::vector<float> maxAbs(perChannel ? width : 1, 0.0f);
  for (int64_t d = 0; d < depth; ++d)
    for (int64_t n = 0; n < width; ++n) {
      float &mx = maxAbs[perChannel ? n : 0];
      mx = nanMax(mx, std::fabs(w(d, n)));
    }
  for (float mx : maxAbs)
    m.scales.push_back(mx / 127.0f);
  m.q.resize(depth * width);
  for (int64_t d = 0; d < depth; ++d)
    for (int64_t n = 0; n < width; ++n)
      m.q[d * width + n] = quantizeInt8(w(d, n), int8Reciprocal(maxAbs[perChannel ? n : 0]));
  return m;
}

/// row [D] (float values) times m, as the int8 moe.gmm computes it.
std::vector<float> int8RowTimes(const float *row, const Int8Matrix &m) {
  float maxAbs = 0;
  for (int64_t d = 0; d < m.depth; ++d)
    maxAbs = nanMax(maxAbs, std::fabs(row[d]));
  float reciprocal = int8Reciprocal(maxAbs), rowScale = maxAbs / 127.0f;
  std::vector<int64_t> sums(m.width, 0);
  for (int64_t d = 0; d < m.depth; ++d) {
    int64_t q = quantizeInt8(row[d], reciprocal);
    for (int64_t n = 0; n < m.width; ++n)
      sums[n] += q * m.q[d * m.width + n];
  }
  std::vector<float> out(m.width);
  for (int64_t n = 0; n < m.width; ++n)
    out[n] = static_cast<float>(sums[n]) * (rowScale * m.scale(n));
  return out;
}

/// One expert (or the shared one) in int8: gate/up as one matrix [H, 2W]
/// when fused, else two [H, W]; down [W, H].
struct Int8Expert {
  std::vector<Int8Matrix> gateUp;
  Int8Matrix down;
  int64_t width = 0;
  // The families' variants: float biases added to the dequantized sums
  // (gate_up's [2W] in its column layout, down's [H]; null: none), GPT-OSS's
  // clamped activation, interleaved gate/up columns.
  const float *gateUpBias = nullptr, *downBias = nullptr;
  bool gptOss = false, interleaved = false;
  float alpha = 1.702f, limit = 7.0f;

  /// The activation in float, then the down projection.
  std::vector<float> apply(const float *x) const {
    std::vector<float> g(width), u(width);
    if (gateUp.size() == 1) {
      std::vector<float> h = int8RowTimes(x, gateUp[0]);
      if (gateUpBias)
        for (int64_t n = 0; n < 2 * width; ++n)
          h[n] += gateUpBias[n];
      for (int64_t j = 0; j < width; ++j) {
        g[j] = interleaved ? h[2 * j] : h[j];
        u[j] = interleaved ? h[2 * j + 1] : h[width + j];
      }
    } else {
      g = int8RowTimes(x, gateUp[0]);
      u = int8RowTimes(x, gateUp[1]);
    }
    std::vector<float> act(width);
    for (int64_t j = 0; j < width; ++j) {
      if (!gptOss) {
        act[j] = g[j] / (1.0f + std::exp(-g[j])) * u[j];
        continue;
      }
      float gc = std::min(g[j], limit), uc = std::max(-limit, std::min(u[j], limit));
      act[j] = (uc + 1.0f) * (gc / (1.0f + std::exp(-alpha * gc)));
    }
    std::vector<float> out = int8RowTimes(act.data(), down);
    if (downBias)
      for (size_t n = 0; n < out.size(); ++n)
        out[n] += downBias[n];
    return out;
  }
};
} // namespace

std::vector<double> moec::reference::blockInt8(const std::vector<float> &x, const Routing &routing,
                                               const BlockShape &s, const BlockWeights &w, int64_t k,
                                               const Int8Config &config) {
  int64_t H = s.hidden, M = s.mlp, E = s.experts, S = s.shared;
  if (s.interleaved && !s.fusedW13) {
    std::fprintf(stderr, "blockInt8: interleaved gate/up columns need a fused w13\n");
    std::abort();
  }
  bool perChannel = config.perChannel;
  std::vector<Int8Expert> experts(E);
  for (int64_t e = 0; e < E; ++e) {
    Int8Expert &ex = experts[e];
    ex.width = M;
    if (s.fusedW13)
      ex.gateUp.push_back(quantizeMatrix(
          [&](int64_t h, int64_t j) { return w.w13[(e * H + h) * 2 * M + j]; }, H, 2 * M, perChannel));
    else
      for (const std::vector<float> *half : {&w.w1, &w.w3})
        ex.gateUp.push_back(quantizeMatrix(
            [&](int64_t h, int64_t j) { return (*half)[(e * H + h) * M + j]; }, H, M, perChannel));
    ex.down = quantizeMatrix([&](int64_t j, int64_t h) { return w.w2[(e * M + j) * H + h]; }, M, H,
                             perChannel);
    if (s.expertBias && !w.b13.empty())
      ex.gateUpBias = &w.b13[e * 2 * M];
    if (s.expertBias && !w.b2.empty())
      ex.downBias = &w.b2[e * H];
    ex.gptOss = s.gptOss;
    ex.interleaved = s.interleaved;
    ex.alpha = float(s.alpha), ex.limit = float(s.limit);
  }
  Int8Expert shared;
  bool sharedInt8 = S > 0 && !config.routedOnly;
  if (sharedInt8) {
    shared.width = S;
    if (s.sharedFused)
      shared.gateUp.push_back(
          quantizeMatrix([&](int64_t h, int64_t j) { return w.sw13[h * 2 * S + j]; }, H, 2 * S, perChannel));
    else
      for (const std::vector<float> *half : {&w.sw1, &w.sw3})
        shared.gateUp.push_back(
            quantizeMatrix([&](int64_t h, int64_t j) { return (*half)[h * S + j]; }, H, S, perChannel));
    shared.down = quantizeMatrix([&](int64_t j, int64_t h) { return w.sw2[j * H + h]; }, S, H, perChannel);
  }
  // The float block for the shared expert when it stays float.
  std::vector<double> y;
  if (S > 0 && !sharedInt8) {
    Routing none{std::vector<int32_t>(routing.ids.size(), int32_t(E)),
                 std::vector<double>(routing.weights.size(), 0.0)};
    y = block(x, none, s, w, k);
  } else {
    y.assign(s.tokens * H, 0.0);
  }
  std::vector<float> weighted(H);
  for (int64_t t = 0; t < s.tokens; ++t) {
    const float *xt = &x[t * H];
    for (int64_t slot = 0; slot < k; ++slot) {
      int64_t e = routing.ids[t * k + slot];
      if (e < 0 || e >= E)
        continue;
      float r = float(routing.weights[t * k + slot]);
      if (s.weightInput) {
        // Llama-4: the expert quantizes the weighted row (r x, in float);
        // its output is summed as it is.
        for (int64_t h = 0; h < H; ++h)
          weighted[h] = r * xt[h];
        std::vector<float> out = experts[e].apply(weighted.data());
        for (int64_t h = 0; h < H; ++h)
          y[t * H + h] += out[h];
        continue;
      }
      std::vector<float> out = experts[e].apply(xt);
      for (int64_t h = 0; h < H; ++h)
        y[t * H + h] += routing.weights[t * k + slot] * out[h];
    }
    if (sharedInt8) {
      std::vector<float> out = shared.apply(xt);
      // Qwen2-MoE: the gate x . w_gate stays a float matmul.
      double gate = 1.0;
      if (s.sharedGate) {
        float z = 0.0f;
        for (int64_t h = 0; h < H; ++h)
          z += xt[h] * w.swg[h];
        gate = 1.0 / (1.0 + std::exp(-double(z)));
      }
      for (int64_t h = 0; h < H; ++h)
        y[t * H + h] += gate * out[h];
    }
  }
  return y;
}
