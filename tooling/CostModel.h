//===- CostModel.h - predicted time of each way to run an MoE block ------===//
//
// A first-order model of one MoE block (forward or forward_backward) on a
// mesh of D = data x expert devices: each shard's expert-MLP FLOPs at a
// core rate that falls off for small groups (a gmm over few rows per
// expert runs below the rate of large ones), plus each collective's bytes
// over the link bandwidth and its steps times the link latency. The bytes
// are the ones the runtime counts (runtime/ShardComm.h): all-reduce
// 2(D-1)/D N, all-gather and reduce-scatter (D-1)/D N, all-to-all the rows
// sent to other shards, (D-1)/D of them under uniform routing.
//
// It explains the seeds' crossover: EP moves tokens (bytes grow with the
// batch) while DP's training step all-reduces the weights' gradients (bytes
// fixed by the model), and DP splits each expert's rows over the data
// shards (small groups at small batch) while EP keeps them whole.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_COSTMODEL_H
#define MOEC_TOOLING_COSTMODEL_H

#include <cstdint>
#include <string>
#include <vector>

namespace moec {

/// A core's gmm rate on large groups as a share of its unit's peak, when
/// the rate is not given (moec and moe-bench). Fitted with the half-rate
/// rows below to the forward's prepared gmms on an AVX-512 host, T 256 to
/// 4096 top-8, f32 and bf16 (docs/sharding.md, "Calibration").
inline constexpr double kGmmShareOfPeak = 0.88;

/// The machine: what one core computes and what a link moves.
struct Machine {
  double coreGflops = 0;     ///< a core's gmm rate on large groups
  /// Where that rate comes from, as the model's line says it: "0.88 of the
  /// AVX512_BF16 peak" (the unit gmmPeakUnit chose), "given"; "" unsaid.
  std::string coreRateFrom;
  /// The rate's unit: the peak's ("GOP/s" for int8's VNNI or AMX units),
  /// as the model's lines print it.
  std::string rateUnit = "GFLOP/s";
  /// Rows per expert at which a gmm runs at half that rate. F / (rate x
  /// r / (r + h)) = F / rate + 2 h x weights / rate: the half-rate rows are
  /// a fixed cost per weight (its bytes streamed once a call) in FLOPs.
  double halfRateRows = 16;
  /// The same for the weight gradients' tgmm (training): it reduces over
  /// the rows into a full [H, N] output per expert that it writes, and the
  /// training forward packs each weight per call (the weights change), so
  /// a training step's fixed cost per weight is (2 x halfRateRows + this) x
  /// 2 FLOPs of time at the training share of the rate.
  double tgmmHalfRateRows = 39;
  /// A training step's gmms run at this share of the forward's rate on the
  /// same rows: per row it also gathers, scatters and differentiates the
  /// SwiGLU. Fitted with tgmmHalfRateRows to forward_backward at T 512 to
  /// 4096 top-8, f32 and bf16 (docs/sharding.md, "Calibration").
  double trainingShare = 0.89;
  double linkGBps = 0;       ///< bytes per second between two shards, 1e9
  double linkLatencyUs = 5;  ///< per collective step
  int64_t coresPerShard = 1;
};

/// The block.
struct Workload {
  int64_t tokens = 0, hidden = 0, mlp = 0, experts = 0, topk = 0, shared = 0;
  int64_t elementBytes = 4;  ///< f32 4, bf16 2
  bool training = false;     ///< forward_backward: 3x the FLOPs, the backward's collectives
  double nullFraction = 0;   ///< slots routed to no expert (benchmark null routing)
  bool nullDraws = false;    ///< the null draws [T, K] are an input (the ring gathers them)
  /// What moe-partition can make of it: a2a sizes its buffers from a static
  /// token count; dense computes every row, so takes no capacity factor.
  bool staticTokens = true;
  bool capacityFactor = false;
};

/// How it runs: a mode and the mesh.
struct Plan {
  std::string mode;  ///< none, dp, ep-dense, ep-compact, ep-ring, ep-a2a
  int64_t data = 1, expert = 1;
  std::string str() const;  ///< "ep-compact on data=1,expert=2"
};

struct Prediction {
  double computeS = 0, commS = 0;
  double commBytes = 0;     ///< sent by one shard per call (modelled)
  int64_t collectives = 0;  ///< per call
  double usefulGflop = 0;   ///< one shard's expert and shared FLOPs (dense: the local rows only)
  double totalS() const { return computeS + commS; }
};

Prediction predict(const Workload &w, const Plan &p, const Machine &m);

/// Every plan for `devices` devices (the single device when 1): dp,
/// each EP dispatch over expert = devices, and the 2-D meshes in between.
/// Plans whose expert axis does not divide the experts (or data the
/// tokens), or that moe-partition refuses for `w` (a2a without a static
/// token count, dense with a capacity factor), are left out.
std::vector<Plan> candidatePlans(const Workload &w, int64_t devices);

} // namespace moec

#endif
