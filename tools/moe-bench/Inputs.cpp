//===- Inputs.cpp - the benchmark block's inputs --------------------------===//

#include "Inputs.h"
#include "Session.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace moebench;

BlockInputs moebench::makeBlockInputs(const BlockConfig &c, unsigned seed) {
  moec::DType dt = moec::dtypeOf(c.dtype);
  BlockInputs inputs;
  std::map<std::string, moec::Buffer> &pool = inputs.pool;
  std::vector<std::string> &weightNames = inputs.weights;
  pool["x"] = moec::Buffer(dt, {c.tokens, c.hidden});
  fillUniform(pool["x"], seed * 7 + 1, 1.0f);
  auto addWeight = [&](const std::string &name, std::vector<int64_t> shape, float scale) {
    pool[name] = moec::Buffer(dt, shape);
    fillUniform(pool[name], seed * 7 + weightNames.size() + 2, scale);
    weightNames.push_back(name);
  };
  float sH = 1 / std::sqrt(float(c.hidden)), sM = 1 / std::sqrt(float(c.mlp));
  if (c.fusedW13()) {
    addWeight("w13", {c.experts, c.hidden, 2 * c.mlp}, sH);
  } else {
    addWeight("w1", {c.experts, c.hidden, c.mlp}, sH);
    addWeight("w3", {c.experts, c.hidden, c.mlp}, sH);
  }
  if (c.layer.expertBias)
    addWeight("b13", {c.experts, 2 * c.mlp}, 0.1f);
  addWeight("w2", {c.experts, c.mlp, c.hidden}, sM);
  if (c.layer.expertBias)
    addWeight("b2", {c.experts, c.hidden}, 0.1f);
  inputs.expertWeights = weightNames;
  if (c.shared) {
    float sS = 1 / std::sqrt(float(c.shared));
    if (c.sharedFused) {
      addWeight("sw13", {c.hidden, 2 * c.shared}, sH);
    } else {
      addWeight("sw1", {c.hidden, c.shared}, sH);
      addWeight("sw3", {c.hidden, c.shared}, sH);
    }
    addWeight("sw2", {c.shared, c.hidden}, sS);
    if (c.layer.sharedGate)
      addWeight("swg", {c.hidden, 1}, sH);
  }
  // DeepSeek-V3's e_score_correction_bias: a routing input, not a weight
  // (no gradient).
  if (c.layer.selectionBias) {
    pool["sb"] = moec::Buffer(moec::DType::F32, {c.experts});
    fillUniform(pool["sb"], seed * 7 + 97, 0.05f);
  }
  return inputs;
}

moec::Buffer moebench::makeLogits(const std::string &dist, int64_t T, int64_t E, unsigned seed,
                                  int64_t k) {
  std::mt19937_64 rng(seed * 1000003ull + std::hash<std::string>()(dist) + k);
  moec::Buffer logits(moec::DType::F32, {T, E});
  float *l = logits.as<float>();
  if (dist == "random") {
    std::normal_distribution<float> n(0, 1);
    for (int64_t i = 0; i < T * E; ++i)
      l[i] = n(rng);
    return logits;
  }
  // runs: geometric run lengths, each run on a least-loaded expert (not the
  // previous one), logits N(0, 0.35) plus 6 on the run's expert.
  double alpha = 0.98, meanRun = std::max(2.0, 1 / (1 - alpha));
  double p = std::clamp(1 / meanRun, 0.01, 0.9);
  std::geometric_distribution<int64_t> runLength(p);
  std::normal_distribution<float> n(0, 0.35f);
  std::vector<int64_t> load(E, 0);
  int64_t previous = -1;
  for (int64_t t = 0; t < T;) {
    int64_t len = runLength(rng) + 1;
    int64_t best = -1;
    for (int64_t e = 0; e < E; ++e)
      if ((e != previous || E == 1) && (best < 0 || load[e] < load[best]))
        best = e;
    for (int64_t i = 0; i < len && t < T; ++i, ++t) {
      for (int64_t e = 0; e < E; ++e)
        l[t * E + e] = n(rng) + (e == best ? 6.0f : 0.0f);
      ++load[best];
    }
    previous = best;
  }
  return logits;
}

moec::Buffer moebench::makeNullDraws(int64_t T, int64_t k, unsigned seed) {
  // The same draws for every fraction: independent nulls nest as the
  // fraction grows.
  std::mt19937_64 drawRng(seed * 1000003ull + 17 * k + 5);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  moec::Buffer draws(moec::DType::F32, {T, k});
  for (int64_t i = 0; i < T * k; ++i)
    draws.as<float>()[i] = uniform(drawRng);
  return draws;
}
