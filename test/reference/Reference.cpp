//===- Reference.cpp - the MoE block in plain C++ --------------------------===//

#include "Reference.h"

#include <cmath>

using namespace moec::reference;

Routing moec::reference::route(const std::vector<float> &logits, int64_t tokens,
                               int64_t columns, const RouteConfig &c) {
  int64_t experts = columns - c.nullExperts;
  Routing r;
  r.ids.resize(tokens * c.k);
  r.weights.resize(tokens * c.k);
  for (int64_t t = 0; t < tokens; ++t) {
    const float *row = &logits[t * columns];
    // Top-k by logit, ties to the lower id.
    std::vector<bool> taken(columns, false);
    std::vector<int64_t> chosen;
    for (int64_t s = 0; s < c.k; ++s) {
      int64_t best = -1;
      for (int64_t j = 0; j < columns; ++j)
        if (!taken[j] && (best < 0 || row[j] > row[best]))
          best = j;
      taken[best] = true;
      chosen.push_back(best);
    }
    std::vector<double> w(c.k);
    if (c.sigmoid) {
      for (int64_t s = 0; s < c.k; ++s)
        w[s] = 1.0 / (1.0 + std::exp(-double(row[chosen[s]])));
    } else {
      double shift = c.softmaxThenTopk ? -INFINITY : double(row[chosen[0]]);
      if (c.softmaxThenTopk)
        for (int64_t j = 0; j < columns; ++j)
          shift = std::max(shift, double(row[j]));
      double denom = 0;
      if (c.softmaxThenTopk)
        for (int64_t j = 0; j < columns; ++j)
          denom += std::exp(double(row[j]) - shift);
      else
        for (int64_t s = 0; s < c.k; ++s)
          denom += std::exp(double(row[chosen[s]]) - shift);
      for (int64_t s = 0; s < c.k; ++s)
        w[s] = std::exp(double(row[chosen[s]]) - shift) / denom;
    }
    bool seen = false;
    double sum = 0;
    for (int64_t s = 0; s < c.k; ++s) {
      int64_t id = chosen[s];
      bool nullExpert = id >= experts;
      bool isNull = nullExpert || (c.takeUntilNull && seen);
      if (c.takeUntilNull && seen)
        id = experts;
      if (c.nullExperts > 0 && isNull)
        w[s] = 0;
      seen = seen || nullExpert;
      r.ids[t * c.k + s] = static_cast<int32_t>(id);
      sum += w[s];
    }
    for (int64_t s = 0; s < c.k; ++s)
      r.weights[t * c.k + s] = c.renormalize && sum > 0 ? w[s] / sum : w[s];
  }
  return r;
}

namespace {
double silu(double z) { return z / (1.0 + std::exp(-z)); }

/// silu(x @ gate) * (x @ up) @ down for one row; `gateUp` gives column j of
/// the gate (j < width) and of the up projection.
template <typename GateUp, typename Down>
void mlp(const float *x, int64_t hidden, int64_t width, GateUp gateUp,
         Down down, double scale, double *out) {
  std::vector<double> act(width);
  for (int64_t j = 0; j < width; ++j) {
    double g = 0, u = 0;
    for (int64_t h = 0; h < hidden; ++h) {
      g += double(x[h]) * gateUp(h, j, /*up=*/false);
      u += double(x[h]) * gateUp(h, j, /*up=*/true);
    }
    act[j] = silu(g) * u;
  }
  for (int64_t h = 0; h < hidden; ++h) {
    double acc = 0;
    for (int64_t j = 0; j < width; ++j)
      acc += act[j] * down(j, h);
    out[h] += scale * acc;
  }
}
} // namespace

std::vector<double> moec::reference::block(const std::vector<float> &x,
                                           const Routing &routing,
                                           const BlockShape &s,
                                           const BlockWeights &w, int64_t k) {
  int64_t H = s.hidden, M = s.mlp, E = s.experts, S = s.shared;
  std::vector<double> y(s.tokens * H, 0.0);
  for (int64_t t = 0; t < s.tokens; ++t) {
    const float *xt = &x[t * H];
    double *yt = &y[t * H];
    for (int64_t slot = 0; slot < k; ++slot) {
      int64_t e = routing.ids[t * k + slot];
      if (e < 0 || e >= E)
        continue; // null: no compute
      auto gateUp = [&](int64_t h, int64_t j, bool up) -> double {
        if (s.fusedW13)
          return w.w13[(e * H + h) * 2 * M + (up ? M + j : j)];
        return (up ? w.w3 : w.w1)[(e * H + h) * M + j];
      };
      auto down = [&](int64_t j, int64_t h) -> double { return w.w2[(e * M + j) * H + h]; };
      mlp(xt, H, M, gateUp, down, routing.weights[t * k + slot], yt);
    }
    if (S > 0) {
      auto gateUp = [&](int64_t h, int64_t j, bool up) -> double {
        if (s.sharedFused)
          return w.sw13[h * 2 * S + (up ? S + j : j)];
        return (up ? w.sw3 : w.sw1)[h * S + j];
      };
      auto down = [&](int64_t j, int64_t h) -> double { return w.sw2[j * H + h]; };
      mlp(xt, H, S, gateUp, down, 1.0, yt);
    }
  }
  return y;
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
