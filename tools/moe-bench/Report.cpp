//===- Report.cpp - moe-bench's results and their JSON --------------------===//

#include "Report.h"

#include <cmath>
#include <sstream>

using namespace moebench;

namespace {
/// A number for the JSON: null when not finite (an output that is all zero
/// in f32 but not in int8 has an infinite relative error).
std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  std::ostringstream os;
  os << v;
  return os.str();
}
} // namespace

std::string moebench::resultsJson(const RunInfo &run, const std::vector<Result> &results) {
  std::ostringstream os;
  os << "{\n  \"peak_gflops\": " << run.peak << ",\n  \"peak_kind\": \"" << run.peakKind
     << "\",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    os << "    {\"distribution\": \"" << r.distribution << "\", \"mode\": \"" << r.mode
       << "\", \"pass\": \"" << run.pass << "\", \"impl\": \"" << r.impl << "\", \"backend\": \""
       << run.backend << "\", \"dtype\": \"" << run.dtype << "\", \"tokens\": " << run.tokens
       << ", \"hidden\": " << run.hidden << ", \"mlp_dim\": " << run.mlp << ", \"experts\": "
       << run.experts << ", \"topk\": " << r.k << ", \"shared_expert_dim\": " << r.shared
       << ", \"family\": " << (r.family.empty() ? "null" : "\"" + r.family + "\"")
       << ", \"threads\": " << run.threads << ", \"null_target\": " << r.nullTarget
       << ", \"null_mode\": \"" << run.nullMode << "\", \"renormalize_real_after_null\": "
       << (run.renormalize ? "true" : "false") << ", \"null_realized\": "
       << (r.nullAssignments ? double(r.nullAssignments) / (r.nullAssignments + r.realAssignments) : 0.0)
       << ", \"null_assignments\": " << r.nullAssignments
       << ", \"real_assignments\": " << r.realAssignments << ", \"median_s\": " << r.seconds
       << ", \"tflops\": " << r.tflops << ", \"tokens_per_s\": " << r.tokensPerS
       << ", \"peak_pct\": " << r.peakPct;
    if (r.peak > 0)
      os << ", \"peak_gflops\": " << r.peak;
    os << ", \"compile_s\": " << r.compileS;
    if (r.weightGBps > 0)
      os << ", \"weight_gbps\": " << r.weightGBps
         << ", \"read_bandwidth_pct\": " << r.readBandwidthPct;
    if (r.steal)
      os << ", \"steal_s\": " << r.steal->seconds;
    if (r.steal && r.steal->sharePct)
      os << ", \"steal_pct\": " << *r.steal->sharePct;
    auto list = [&](const char *name, const std::vector<double> &values) {
      os << ", \"" << name << "\": [";
      for (size_t v = 0; v < values.size(); ++v)
        os << (v ? ", " : "") << jsonNumber(values[v]);
      os << "]";
    };
    if (!r.callSteals.empty())
      list("steal_calls_s", r.callSteals);
    if (!r.callSeconds.empty())
      list("calls_s", r.callSeconds);
    if (r.coreSpeed) {
      os << ", \"core_pct\": " << r.coreSpeed->medianPct << ", \"core_rate\": " << r.coreSpeed->medianRate;
      list("core_pcts", r.coreSpeed->pcts);
    }
    if (!r.parallel.empty())
      os << ", \"parallel\": \"" << r.parallel << "\", \"mesh\": \"" << r.mesh
         << "\", \"shards\": " << r.shards << ", \"launcher\": \"" << run.launcher
         << "\", \"predicted_s\": " << r.predictedS
         << ", \"comm_bytes_counted\": " << r.commCountedBytes
         << ", \"comm_bytes_modelled\": " << r.commModelledBytes
         << ", \"shard_tflops_min\": " << r.shardTflopsMin
         << ", \"shard_tflops_max\": " << r.shardTflopsMax;
    os << ", \"quant\": \"" << run.quant << "\"";
    if (!r.relErrors.empty()) {
      os << ", \"quant_weight_scales\": \""
         << run.quantWeightScales
         << "\", \"rel_error\": " << jsonNumber(r.relErrors.front().second) << ", \"rel_errors\": {";
      for (size_t e = 0; e < r.relErrors.size(); ++e)
        os << (e ? ", " : "") << "\"" << r.relErrors[e].first << "\": " << jsonNumber(r.relErrors[e].second);
      os << "}";
    }
    if (!r.remat.empty())
      os << ", \"remat\": \"" << r.remat << "\", \"kept_bytes\": " << r.keptBytes
         << ", \"recomputed_flops\": " << r.recomputedFlops;
    if (!r.stages.empty()) {
      os << ", \"stages_s\": {";
      for (size_t s = 0; s < r.stages.size(); ++s)
        os << (s ? ", " : "") << "\"" << r.stages[s].first << "\": " << r.stages[s].second;
      os << "}, \"gmm_up_gops\": " << r.upGops << ", \"gmm_down_gops\": " << r.downGops;
    }
    if (!r.blockStages.empty()) {
      os << ", \"block_stages\": [";
      for (size_t s = 0; s < r.blockStages.size(); ++s)
        os << (s ? ", " : "") << "{\"name\": \"" << r.blockStages[s].name
           << "\", \"median_s\": " << r.blockStages[s].seconds
           << ", \"one_thread_s\": " << r.blockStages[s].oneThreadSeconds << "}";
      os << "]";
    }
    os << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  os << "  ]\n}\n";
  return os.str();
}
