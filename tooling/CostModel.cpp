//===- CostModel.cpp - predicted time of each way to run an MoE block ----===//

#include "tooling/CostModel.h"

#include <algorithm>

using namespace moec;

std::string Plan::str() const {
  return mode + " on data=" + std::to_string(data) + ",expert=" + std::to_string(expert);
}

namespace {
/// (D-1)/D: the share of a gathered or reduced buffer a shard exchanges.
double away(int64_t d) { return d > 1 ? double(d - 1) / double(d) : 0.0; }
} // namespace

Prediction moec::predict(const Workload &w, const Plan &p, const Machine &m) {
  Prediction r;
  const double T = double(w.tokens), H = double(w.hidden), M = double(w.mlp),
               E = double(w.experts), S = double(w.shared);
  // Null slots occupy no row (dense EP still computes them, on its zero
  // expert).
  const double Kall = double(w.topk), K = Kall * (1 - w.nullFraction);
  const double b = double(w.elementBytes), f32 = 4;
  const int64_t De = p.expert, Dd = p.data;
  const double tokensPerData = T / double(Dd);
  const bool ep = p.mode.rfind("ep-", 0) == 0;
  // Rows each shard computes, and how many fall to each of its experts.
  double rows, rowsPerExpert, sharedTokens, computedRows;
  if (!ep) {
    rows = tokensPerData * K;
    rowsPerExpert = rows / E;
    sharedTokens = tokensPerData;
    computedRows = rows;
  } else {
    double local = E / double(De);
    rows = tokensPerData * K / double(De);
    rowsPerExpert = rows / local;
    // Ring and all-to-all split the shared expert's tokens over expert too;
    // dense and compact compute it on every expert shard.
    bool tokensSplit = p.mode == "ep-ring" || p.mode == "ep-a2a";
    sharedTokens = tokensSplit ? tokensPerData / double(De) : tokensPerData;
    // Dense computes every row (other shards' on a zero expert).
    computedRows = p.mode == "ep-dense" ? tokensPerData * Kall : rows;
    if (p.mode == "ep-dense")
      rowsPerExpert = computedRows / (local + 1);
  }
  double passes = w.training ? 3 : 1;
  double expertFlop = 6 * H * M * passes;
  r.usefulGflop = (expertFlop * rows + 6 * H * S * passes * sharedTokens) * 1e-9;
  double rate = m.coreGflops * double(m.coresPerShard);
  auto at = [&](double flop, double rowsPerGroup, double halfRate) {
    return flop * 1e-9 / (rate * rowsPerGroup / (rowsPerGroup + halfRate));
  };
  // Forward: the gmms. Training: the forward's and the rows' gradients'
  // gmms, and the weights' gradients (tgmm) at their own efficiency, all at
  // the training share of the rate.
  auto gmms = [&](double flop, double rowsPerGroup) {
    if (!w.training)
      return at(flop, rowsPerGroup, m.halfRateRows);
    return (at(2 * flop, rowsPerGroup, m.halfRateRows) +
            at(flop, rowsPerGroup, m.tgmmHalfRateRows)) /
           m.trainingShare;
  };
  r.computeS = gmms(6 * H * M * computedRows, rowsPerExpert);
  if (S > 0)
    r.computeS += gmms(6 * H * S * sharedTokens, sharedTokens);

  // Collectives: bytes one shard sends, steps of latency.
  double bytes = 0, steps = 0;
  int64_t calls = 0;
  auto allReduce = [&](double n, int64_t d) {
    if (d <= 1)
      return;
    bytes += 2 * away(d) * n, steps += 2 * double(d - 1), ++calls;
  };
  auto gatherOrScatter = [&](double n, int64_t d) {
    if (d <= 1)
      return;
    bytes += away(d) * n, steps += double(d - 1), ++calls;
  };
  double y = tokensPerData * H * f32;  // the combined output, f32 accumulation
  if (p.mode == "ep-dense" || p.mode == "ep-compact") {
    allReduce(y, De);
    if (w.training)
      allReduce(y, De), allReduce(tokensPerData * H * f32, De);  // dy's psum back, dx's
  } else if (p.mode == "ep-ring") {
    double n = tokensPerData * H * b, logits = tokensPerData * E * f32;
    gatherOrScatter(n, De), gatherOrScatter(logits, De), gatherOrScatter(y, De);
    if (w.nullDraws)
      gatherOrScatter(tokensPerData * Kall * f32, De);
    if (w.training)
      gatherOrScatter(y, De), gatherOrScatter(n, De);  // each other's adjoint
  } else if (p.mode == "ep-a2a") {
    // Rows there (with their local ids and counts) and back.
    double sent = tokensPerData / double(De) * K * away(De);
    double there = sent * (H * b + 4), back = sent * H * f32;
    bytes += there + back, steps += 3 * double(De - 1), calls += 3;
    if (w.training)
      bytes += there + back, steps += 2 * double(De - 1), calls += 2;
  }
  if (w.training) {
    // Gradients of replicated arguments, summed over their replicas: the
    // expert weights over data, the shared expert's over every axis.
    double expertWeights = 3 * E / double(De) * H * M * b;
    allReduce(expertWeights, Dd);
    if (S > 0)
      allReduce(3 * H * S * b, Dd * De);
    allReduce(f32, Dd * (p.mode == "ep-ring" || p.mode == "ep-a2a" ? De : 1));  // the loss
  }
  r.commBytes = bytes;
  r.collectives = calls;
  r.commS = (m.linkGBps > 0 ? bytes / (m.linkGBps * 1e9) : 0) + steps * m.linkLatencyUs * 1e-6;
  return r;
}

std::vector<Plan> moec::candidatePlans(const Workload &w, int64_t devices) {
  if (devices <= 1)
    return {Plan{"none", 1, 1}};
  std::vector<Plan> plans;
  for (int64_t expert = 1; expert <= devices; ++expert) {
    if (devices % expert || w.experts % expert)
      continue;
    int64_t data = devices / expert;
    if (w.tokens % (data * expert))
      continue;
    if (expert == 1) {
      plans.push_back({"dp", data, 1});
      continue;
    }
    for (const char *mode : {"ep-dense", "ep-compact", "ep-ring", "ep-a2a"}) {
      if ((mode == std::string("ep-a2a") && !w.staticTokens) ||
          (mode == std::string("ep-dense") && w.capacityFactor))
        continue;
      plans.push_back({mode, data, expert});
    }
  }
  return plans;
}
