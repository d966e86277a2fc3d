//===- moe-bench.cpp - the seeds' MoE harness over generated code ---------===//
//
// Compiles an MoE block for a configuration (the seeds' flags), runs it on
// inputs drawn from a routing distribution, and prints the seeds' lines: the
// run, the load, the timing, optional stage timing, and one RESULT line per
// configuration, with the share of this machine's FP32 FMA peak measured in
// the same run. --tune searches the gmm tiles and stores a tuning table the
// compiler reads.
//
//===----------------------------------------------------------------------===//

#include "tooling/AutoParallel.h"
#include "tooling/Peak.h"
#include "tooling/RunLauncher.h"
#include "tooling/RunReport.h"
#include "tooling/ThreadsOption.h"
#include "tooling/ToolChoices.h"
#include "Program.h"
#include "Quant.h"
#include "Session.h"
#include "Sweep.h"
#include "dialect/MoeOps.h"
#include "Tune.h"

#include "strategy/GmmStrategy.h"
#include "strategy/TargetCpu.h"
#include "strategy/GmmTiling.h"
#include "passes/Remat.h"
#include "runtime/AtomicFile.h"
#include "runtime/ThreadLimit.h"
#include "runtime/HostMemory.h"
#include "runtime/MemoryGuard.h"
#include "runtime/RunTimeChecks.h"
#include "runtime/ShardComm.h"
#include "runtime/Npy.h"

#include "llvm/Support/FormatVariadic.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace llvm;
using namespace moebench;
// The parallel plans and their cost model (tooling/ParallelPlan.h).
using moec::Machine, moec::MeshRequest, moec::Plan, moec::Prediction, moec::ShardWork,
    moec::Workload;
using moec::amxTilesGranted;
using moec::measureAmxBf16PeakGflops;
using moec::measureAmxInt8PeakGops;
using moec::measureAvx512Bf16PeakGflops;
using moec::measureFp32PeakGflops;
using moec::measureVnniPeakGops;

namespace {
cl::OptionCategory category("moe-bench options");
cl::opt<int64_t> tokens("tokens", cl::desc("Tokens T"), cl::init(4096), cl::cat(category));
cl::opt<int64_t> hidden("hidden", cl::desc("Hidden size H"), cl::init(2048), cl::cat(category));
cl::opt<int64_t> mlpDim("mlp-dim", cl::desc("Expert MLP size M"), cl::init(1408), cl::cat(category));
cl::opt<int64_t> experts("experts", cl::desc("Routed experts E"), cl::init(60), cl::cat(category));
cl::opt<int64_t> topk("topk", cl::desc("Experts per token K"), cl::init(8), cl::cat(category));
cl::opt<std::string> topkList("topk-list", cl::desc("Comma-separated K values (overrides --topk)"),
                              cl::init(""), cl::cat(category));
cl::opt<int64_t> sharedDim("shared-expert-dim", cl::desc("Shared expert size S (0: none)"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> familyName(
    "family",
    cl::desc("Benchmark an open model's MoE layer: mixtral | qwen2_moe | qwen3_moe | olmoe | "
             "deepseek_v2 | deepseek_v3 | gpt_oss | llama4 (the family's routing over the "
             "distribution's logits, its experts and shared expert; sizes from --hidden, "
             "--mlp-dim, --experts, --topk)"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> hfConfig(
    "hf-config",
    cl::desc("Benchmark the MoE block of a Hugging Face model's layer (its config.json; with "
             "--layer): the family, sizes and routing knobs from the config, random weights of "
             "the right shapes (the timing depends on the weights only through the routing, "
             "which the distributions set)"),
    cl::value_desc("config.json"), cl::init(""), cl::cat(category));
cl::opt<int64_t> hfLayerNumber("layer", cl::desc("With --hf-config: the layer (default: the "
                                                 "first MoE layer)"),
                               cl::init(moec::kFirstMoeLayer), cl::cat(category));
/// The layer --hf-config describes.
std::optional<moec::HfLayer> hfLayer;
cl::opt<int64_t> familyGroups("groups",
                              cl::desc("--family deepseek_*: expert groups (n_group; default 8 "
                                       "for deepseek_v3 when the experts divide, else 1)"),
                              cl::init(0), cl::cat(category));
cl::opt<int64_t> familyTopkGroups("topk-groups",
                                  cl::desc("--family deepseek_*: groups kept (topk_group; "
                                           "default half the groups)"),
                                  cl::init(0), cl::cat(category));
cl::opt<double> familyScaling("routed-scaling",
                              cl::desc("--family deepseek_*: routed_scaling_factor (default "
                                       "2.5 for deepseek_v3, 1 for deepseek_v2)"),
                              cl::init(0), cl::cat(category));
cl::opt<bool> sharedFused("shared-fused", cl::desc("Shared expert gate/up as one [H, 2S] weight"),
                          cl::cat(category));
// moe-bench's own choices, spelled once (BenchChoices.h).
cl::opt<Impl> impl("impl", cl::desc("How the block is written:"), kImplChoices.values(),
                   cl::init(Impl::fusedW13), cl::cat(category));
// moec's --gmm-strategy, spelled once (strategy/GmmStrategy.h); --backend,
// its older name, stays an alias.
cl::opt<mlir::moe::strategy::GmmStrategy> gmmStrategy(
    "gmm-strategy", cl::desc("Which gmm kernel kinds the code may use"),
    cl::init(mlir::moe::strategy::GmmStrategy::microkernel), mlir::moe::strategy::kGmmStrategyChoices.values(),
    cl::cat(category));
cl::alias backendAlias("backend", cl::desc("Alias for --gmm-strategy"), cl::aliasopt(gmmStrategy),
                       cl::cat(category));
/// The strategy's spelling, for the report lines (backend=...).
std::string backendName() { return mlir::moe::strategy::kGmmStrategyChoices.name(gmmStrategy).str(); }
cl::opt<mlir::moe::PackStrategy> packStrategy(
    "routing-pack-strategy", cl::desc("How the routing packs the rows:"),
    kPackStrategyChoices.values(), cl::init(mlir::moe::PackStrategy::argsort), cl::cat(category));
cl::opt<Distribution> distribution("distribution", cl::desc("The routing's logits:"),
                                   kDistributionChoices.values(),
                                   cl::init(Distribution::random), cl::cat(category));
cl::opt<BenchPass> benchPass("bench-pass",
                             cl::desc("What is timed (forward_backward: loss mean(y^2), routing "
                                      "fixed, FLOPs 3x the forward's):"),
                             kBenchPassChoices.values(), cl::init(BenchPass::forward),
                             cl::cat(category));
// moec's --remat, spelled once (passes/Choices.h); here a comma list, each
// compiled and measured. --remat-mode, its older name, stays an alias.
cl::list<mlir::moe::RematPolicy> rematPolicies(
    "remat",
    cl::desc("--bench-pass forward_backward: what the backward recomputes, or a comma list, "
             "each compiled and measured (default none):"),
    mlir::moe::kRematPolicyChoices.values(), cl::CommaSeparated, cl::cat(category));
cl::alias rematModeAlias("remat-mode", cl::desc("Alias for --remat"), cl::aliasopt(rematPolicies),
                         cl::CommaSeparated,
                         cl::cat(category));
cl::opt<int64_t> activationBudget("activation-budget",
                                  cl::desc("Bytes the backward may keep from the forward "
                                           "(--remat auto picks under it)"),
                                  cl::init(-1), cl::cat(category));
cl::opt<QueueMode> queueMode("queue-mode", cl::desc("What the timed call runs:"),
                             kQueueModeChoices.values(), cl::init(QueueMode::full),
                             cl::cat(category));
cl::opt<bool> stageTiming("stage-timing", cl::desc("Time pack, up, down, combine separately"),
                          cl::cat(category));
cl::opt<int> iters("iters", cl::desc("Timed runs (the median is reported)"), cl::init(5),
                   cl::cat(category));
cl::opt<int> warmup("warmup", cl::desc("Untimed runs first"), cl::init(1), cl::cat(category));
// moec's --dtype, spelled once (tooling/ToolChoices.h).
cl::opt<moec::FloatType> dtype("dtype", cl::desc("The block's activations and weights:"),
                               moec::kFloatTypeChoices.values(), cl::init(moec::FloatType::f32),
                               cl::cat(category));
/// The type's spelling, for reports and the sweep's points.
std::string dtypeName() { return moec::kFloatTypeChoices.name(dtype).str(); }
cl::opt<unsigned> seed("seed", cl::desc("Seed of inputs and routing"), cl::init(0),
                       cl::cat(category));
// --threads is read before cl::ParseCommandLineOptions: a library linked in
// (OpenMP's LLVM support) registers a global option of that name.
unsigned threads = 2;
cl::opt<std::string> jsonFile("json", cl::desc("Also write the results as JSON to this file"),
                              cl::init(""), cl::cat(category));
cl::opt<std::string> gmmTiling("gmm-tiling", cl::desc("gmm tiles for every gmm (see moec)"),
                               cl::init(""), cl::cat(category));
cl::opt<std::string> tuningTable("tuning-table",
                                 cl::desc("Tuning table to read (and --tune to write)"),
                                 cl::init(""), cl::cat(category));
cl::opt<bool> tune("tune", cl::desc("Search the gmm tiles for this shape first and store them "
                                    "in --tuning-table (default moec-tuning.txt)"),
                   cl::cat(category));
cl::opt<double> peakOption("peak-gflops",
                           cl::desc("Peak GFLOP/s to report against: FP32 FMA, or for bf16 AMX BF16 (on AMX tiles) or AVX512_BF16 (on the dot products) (default: measured now)"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> dumpRouting("dump-routing",
                                 cl::desc("Write ids.npy and weights.npy of each routing "
                                          "here (what bench/ gives the peers)"),
                                 cl::init(""), cl::cat(category));

// moec's --parallel-mode, spelled once (tooling/ToolChoices.h).
cl::opt<moec::ParallelMode> parallelMode(
    "parallel-mode", cl::desc("How the block runs (auto: for --devices):"),
    moec::kParallelModeChoices.values(), cl::init(moec::ParallelMode::none), cl::cat(category));
// moec's --ep-dispatch, spelled once (passes/Choices.h).
cl::opt<mlir::moe::EpDispatch> epDispatch(
    "ep-dispatch", cl::desc("How expert shards exchange rows (--parallel-mode ep):"),
    mlir::moe::kEpDispatchChoices.values(), cl::init(mlir::moe::EpDispatch::compact),
    cl::cat(category));
/// The dispatch's spelling, for plans and reports.
std::string epDispatchName() { return mlir::moe::kEpDispatchChoices.name(epDispatch).str(); }
cl::opt<std::string> meshText("mesh",
                              cl::desc("data=2,expert=2 (default: data=N for dp, expert=N for "
                                       "ep, N = --devices)"),
                              cl::init(""), cl::cat(category));
cl::opt<int64_t> devices("devices", cl::desc("Shards of dp, ep and auto without --mesh"),
                         cl::init(2), cl::cat(category));
// moec run's --launcher, spelled once (tooling/ToolChoices.h).
cl::opt<moec::Launcher> launcher("launcher", cl::desc("How a sharded block's shards run:"),
                                 moec::kLauncherChoices.values(),
                                 cl::init(moec::Launcher::inprocess), cl::cat(category));
std::string launcherName() { return moec::kLauncherChoices.name(launcher).str(); }
cl::opt<unsigned> collectiveTimeout("collective-timeout-ms",
                                    cl::desc("How long a shard waits for its peers in a "
                                             "collective before the run stops with an error"),
                                    cl::init(60000), cl::cat(category));
cl::opt<double> capacityFactor("capacity-factor",
                               cl::desc("EP compact/ring/a2a: rows per shard buffer as a factor "
                                        "of the fair share (0: room for every row)"),
                               cl::init(0), cl::cat(category));
cl::opt<double> coreGflops("core-gflops",
                           cl::desc("Cost model: one core's gmm rate on large groups "
                                    "(default: 0.75 x the measured peak per thread)"),
                           cl::init(0), cl::cat(category));
cl::opt<double> halfRateRows("half-rate-rows",
                             cl::desc("Cost model: rows per expert at which a gmm runs at half "
                                      "the core rate"),
                             cl::init(64), cl::cat(category));
cl::opt<double> tgmmHalfRateRows("tgmm-half-rate-rows",
                                 cl::desc("Cost model: the same for the weight gradients' tgmm "
                                          "(training)"),
                                 cl::init(1400), cl::cat(category));
cl::opt<double> linkGBps("link-gbps",
                         cl::desc("Cost model: GB/s between two shards (default: this "
                                  "machine's measured memcpy bandwidth, the in-process link)"),
                         cl::init(0), cl::cat(category));
cl::opt<double> linkLatencyUs("link-latency-us",
                              cl::desc("Cost model: microseconds per collective step"),
                              cl::init(5), cl::cat(category));
cl::opt<double> nullRouteFrac("null-route-frac",
                              cl::desc("Benchmark null routing: the fraction of slots sent to "
                                       "no expert (semantics doc, section 6)"),
                              cl::init(0.0), cl::cat(category));
cl::opt<std::string> nullRouteFracList("null-route-frac-list",
                                       cl::desc("Comma-separated null fractions, each run in turn"),
                                       cl::cat(category));
cl::opt<bool> nullRouteSweep("null-route-sweep",
                             cl::desc("Null fractions 0.1, 0.2, .., 0.9 (the seeds' sweep)"),
                             cl::cat(category));
cl::opt<mlir::moe::NullPolicy> nullRoutingMode(
    "null-routing-mode", cl::desc("How null slots are drawn:"), kNullPolicyChoices.values(),
    cl::init(mlir::moe::NullPolicy::independent), cl::cat(category));
cl::opt<bool> renormalizeRealAfterNull("renormalize-real-after-null",
                                       cl::desc("Renormalise each token's real weights to sum 1 "
                                                "after nulling"),
                                       cl::cat(category));
cl::opt<QuantRun> quantMode(
    "quant-mode",
    cl::desc("moe-quantize's mode, the weights quantized once before the timed runs and the "
             "outputs compared with the f32 block's:"),
    kQuantRunChoices.values(), cl::init(QuantRun::none), cl::cat(category));
// moe-quantize's weight-scales, spelled once (passes/Choices.h).
cl::opt<mlir::moe::QuantWeightScales> quantWeightScales(
    "quant-weight-scales", cl::desc("int8 weight scales:"),
    mlir::moe::kQuantWeightScalesChoices.values(),
    cl::init(mlir::moe::QuantWeightScales::channel), cl::cat(category));
/// The choices' spellings, for the report lines and the JSON.
std::string implName() { return kImplChoices.name(impl).str(); }
std::string packName() { return kPackStrategyChoices.name(packStrategy).str(); }
std::string passName() { return kBenchPassChoices.name(benchPass).str(); }
std::string nullModeName() { return kNullPolicyChoices.name(nullRoutingMode).str(); }
bool isTraining() { return benchPass == BenchPass::forwardBackward; }
cl::opt<std::string> sweepSpec(
    "sweep",
    cl::desc("Run every point of a grid, one process each: 'axis=v,v; axis=v,..' over tokens, "
             "hidden, mlp_dim, experts, topk, null, dtype, quant, parallel, ep_dispatch, pass, "
             "impl; "
             "results to --json (default moe-bench-sweep.json) and --csv"),
    cl::cat(category));
cl::opt<std::string> csvFile("csv", cl::desc("With --sweep: also write the results as CSV"),
                             cl::cat(category));
cl::opt<std::string> plotFile("plot",
                              cl::desc("With --sweep: draw the curves into this SVG (or PNG, "
                                       "PDF) file with matplotlib"),
                              cl::cat(category));
cl::opt<bool> predictOnly("predict-only",
                          cl::desc("Print the cost model's prediction of every plan for "
                                   "--devices and stop (nothing is compiled or run)"),
                          cl::cat(category));

/// moe-bench's failure (tooling/RunLauncher.h: under MPI it ends every rank).
int fail(const std::string &message) { return moec::failRun(message); }

double median(const std::vector<double> &v) { return moec::medianOf(v); }

/// The seeds' routing distributions (semantics doc, section 5), as logits.
moec::Buffer makeLogits(const std::string &dist, int64_t T, int64_t E, std::mt19937_64 &rng) {
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

struct Result {
  std::string distribution, mode, impl, remat;
  std::string family; // --family, or empty
  int64_t shared = 0; // the shared expert's width run
  int64_t keptBytes = 0, recomputedFlops = 0;
  int64_t k = 0, realAssignments = 0, nullAssignments = 0;
  double nullTarget = 0;
  double seconds = 0, tflops = 0, tokensPerS = 0, peakPct = 0, compileS = 0;
  std::vector<std::pair<std::string, double>> stages;
  double upGops = 0, downGops = 0; // --stage-timing: the routed gmms' rates
  // Sharded runs: the plan, the model's prediction, counted and modelled
  // bytes of the busiest shard, the slowest and fastest shard's TF/s.
  std::string parallel, mesh;
  int64_t shards = 1;
  double predictedS = 0, commCountedBytes = 0, commModelledBytes = 0;
  double shardTflopsMin = 0, shardTflopsMax = 0;
  // --quant-mode: each result's relative error against the f32 block.
  std::vector<std::pair<std::string, double>> relErrors;
};

/// What the peak is of: "FP32 FMA" or "AMX BF16".
std::string peakKindName = "FP32 FMA";

/// A number for the JSON: null when not finite (an output that is all zero
/// in f32 but not in int8 has an infinite relative error).
std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string jsonOf(const std::vector<Result> &results, double peak) {
  std::ostringstream os;
  os << "{\n  \"peak_gflops\": " << peak << ",\n  \"peak_kind\": \"" << peakKindName
     << "\",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    os << "    {\"distribution\": \"" << r.distribution << "\", \"mode\": \"" << r.mode
       << "\", \"pass\": \"" << passName() << "\", \"impl\": \"" << r.impl << "\", \"backend\": \""
       << backendName() << "\", \"dtype\": \"" << dtypeName() << "\", \"tokens\": " << tokens
       << ", \"hidden\": " << hidden << ", \"mlp_dim\": " << mlpDim << ", \"experts\": "
       << experts << ", \"topk\": " << r.k << ", \"shared_expert_dim\": " << r.shared
       << ", \"family\": " << (r.family.empty() ? "null" : "\"" + r.family + "\"")
       << ", \"threads\": " << threads << ", \"null_target\": " << r.nullTarget
       << ", \"null_mode\": \"" << nullModeName() << "\", \"renormalize_real_after_null\": "
       << (renormalizeRealAfterNull ? "true" : "false") << ", \"null_realized\": "
       << (r.nullAssignments ? double(r.nullAssignments) / (r.nullAssignments + r.realAssignments) : 0.0)
       << ", \"null_assignments\": " << r.nullAssignments
       << ", \"real_assignments\": " << r.realAssignments << ", \"median_s\": " << r.seconds
       << ", \"tflops\": " << r.tflops << ", \"tokens_per_s\": " << r.tokensPerS
       << ", \"peak_pct\": " << r.peakPct << ", \"compile_s\": " << r.compileS;
    if (!r.parallel.empty())
      os << ", \"parallel\": \"" << r.parallel << "\", \"mesh\": \"" << r.mesh
         << "\", \"shards\": " << r.shards << ", \"launcher\": \"" << launcherName()
         << "\", \"predicted_s\": " << r.predictedS
         << ", \"comm_bytes_counted\": " << r.commCountedBytes
         << ", \"comm_bytes_modelled\": " << r.commModelledBytes
         << ", \"shard_tflops_min\": " << r.shardTflopsMin
         << ", \"shard_tflops_max\": " << r.shardTflopsMax;
    os << ", \"quant\": \"" << kQuantRunChoices.name(quantMode).str() << "\"";
    if (!r.relErrors.empty()) {
      os << ", \"quant_weight_scales\": \""
         << mlir::moe::kQuantWeightScalesChoices.name(quantWeightScales).str()
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
    os << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  os << "  ]\n}\n";
  return os.str();
}

/// The null fractions to run: the sweep, the list, the one fraction, or
/// {-1} (no null routing: the block has no draws).
std::string nullFractions(std::vector<double> &fractions) {
  fractions.clear();
  int given = (nullRouteSweep ? 1 : 0) + (nullRouteFracList.empty() ? 0 : 1) +
              (nullRouteFrac.getNumOccurrences() ? 1 : 0);
  if (given > 1)
    return "give one of --null-route-frac, --null-route-frac-list and --null-route-sweep";
  if (nullRouteSweep) {
    for (int i = 1; i <= 9; ++i)
      fractions.push_back(i / 10.0);
  } else if (!nullRouteFracList.empty()) {
    SmallVector<StringRef> items;
    StringRef(nullRouteFracList).split(items, ',', -1, false);
    for (StringRef item : items) {
      double f;
      if (item.trim().getAsDouble(f))
        return "--null-route-frac-list: '" + item.str() + "' is not a number";
      fractions.push_back(f);
    }
    if (fractions.empty())
      return "--null-route-frac-list is empty";
  } else if (nullRouteFrac.getNumOccurrences()) {
    fractions.push_back(nullRouteFrac);
  }
  for (double f : fractions)
    if (!(f >= 0 && f <= 1))
      return "a null fraction must be in [0, 1] (got " + std::to_string(f) + ")";
  if (fractions.empty()) {
    if (nullRoutingMode.getNumOccurrences() || renormalizeRealAfterNull)
      return "--null-routing-mode and --renormalize-real-after-null apply to null routing: "
             "give --null-route-frac, --null-route-frac-list or --null-route-sweep";
    fractions.push_back(-1);
  }
  return "";
}

std::string validate(std::vector<int64_t> &ks, std::vector<std::string> &policies,
                     std::vector<double> &fractions) {
  if (std::string why = nullFractions(fractions); !why.empty())
    return why;
  if (!hfConfig.empty()) {
    if (!familyName.empty())
      return "give --hf-config or --family, not both";
    for (const cl::Option *sized : std::initializer_list<const cl::Option *>{
             &hidden, &mlpDim, &experts, &topk, &topkList, &sharedDim, &familyGroups,
             &familyTopkGroups, &familyScaling})
      if (sized->getNumOccurrences())
        return "--hf-config sets the layer's sizes and routing: drop --" + sized->ArgStr.str();
    std::string error;
    auto layer = moec::readHfLayer(
        hfConfig, hfLayerNumber, error); // by default kFirstMoeLayer
    if (!layer)
      return error;
    hfLayer = *layer;
    hidden.setValue(layer->hidden), mlpDim.setValue(layer->mlp);
    experts.setValue(layer->experts), topk.setValue(layer->k);
    sharedDim.setValue(layer->shared);
    if (stageTiming || queueMode != QueueMode::full)
      return "--hf-config times the layer's block whole: --stage-timing and --queue-mode "
             "prequeue cut the plain block's stages";
    if (quantMode != QuantRun::none && (layer->expertBias || layer->sharedGate || layer->weightInput))
      return "--hf-config's " + layer->family + " layer with --quant-mode: its experts' "
             "biases, shared gate or weighted input are not in moe-bench's int8 preparation yet";
  } else if (hfLayerNumber.getNumOccurrences()) {
    return "--layer applies to --hf-config";
  }
  if (!familyName.empty()) {
    // The families are the dialect's (moe.block's family attribute).
    std::string list;
    for (uint32_t i = 0; i <= mlir::moe::getMaxEnumValForFamily(); ++i)
      list += std::string(list.empty() ? "" : ", ") +
              mlir::moe::stringifyFamily(*mlir::moe::symbolizeFamily(i)).str();
    std::optional<moec::HfLayer> form = moec::familyLayer(familyName, 1, 1, 1, 1);
    if (!mlir::moe::symbolizeFamily(familyName) || !form)
      return "--family must be one of " + list + " (got '" + familyName + "')";
    if (stageTiming || queueMode != QueueMode::full)
      return "--family times the family's block whole: --stage-timing and --queue-mode "
             "prequeue cut the plain block's stages";
    if (quantMode != QuantRun::none && (form->expertBias || form->sharedGate || form->weightInput))
      return "--family " + familyName + " with --quant-mode: its experts' biases, shared gate "
             "or weighted input are not in moe-bench's int8 preparation yet";
  } else if (familyGroups || familyTopkGroups || familyScaling) {
    return "--groups, --topk-groups and --routed-scaling apply to --family deepseek_v2 or "
           "deepseek_v3";
  }
  if (quantMode != QuantRun::none && queueMode != QueueMode::full)
    return "--queue-mode prequeue times the float block without its gather; give it without "
           "--quant-mode";
  policies.clear();
  for (mlir::moe::RematPolicy policy : rematPolicies)
    policies.push_back(mlir::moe::kRematPolicyChoices.name(policy).str());
  if (policies.empty())
    policies.push_back("none");
  if (activationBudget.getNumOccurrences() && activationBudget < 0)
    return "--activation-budget must be a number of bytes (got " +
           std::to_string(activationBudget) + ")";
  if (benchPass == BenchPass::forward) {
    if (policies != std::vector<std::string>{"none"} || activationBudget >= 0)
      return "--remat and --activation-budget apply to --bench-pass forward_backward";
    policies = {""};
  } else {
    if (stageTiming || queueMode != QueueMode::full)
      return "--stage-timing and --queue-mode prequeue time the forward's stages; "
             "use them with --bench-pass forward";
    if (llvm::is_contained(policies, "auto") && activationBudget < 0)
      return "--remat auto needs --activation-budget BYTES";
  }
  for (auto [name, v] : {std::pair{"tokens", int64_t(tokens)}, {"hidden", hidden},
                         {"mlp-dim", mlpDim}, {"experts", experts}})
    if (v <= 0)
      return std::string("--") + name + " must be positive (got " + std::to_string(v) + ")";
  if (sharedDim < 0)
    return "--shared-expert-dim must be >= 0";
  if (iters < 1 || warmup < 0)
    return "--iters must be >= 1 and --warmup >= 0";
  ks.clear();
  if (!topkList.empty()) {
    SmallVector<StringRef> items;
    StringRef(topkList).split(items, ',', -1, false);
    for (StringRef item : items) {
      int64_t k;
      if (item.trim().getAsInteger(10, k))
        return "--topk-list: '" + item.str() + "' is not an integer";
      ks.push_back(k);
    }
  } else {
    ks.push_back(topk);
  }
  for (int64_t k : ks)
    if (k < 1 || k > experts)
      return "top-k " + std::to_string(k) + " must be in 1.." + std::to_string(experts);
  // The weights must fit in memory, with the activations.
  int64_t bytes = dtype == moec::FloatType::bf16 ? 2 : 4;
  int64_t kMax = *std::max_element(ks.begin(), ks.end());
  // forward_backward: the weights' gradients too, and the backward's rows.
  double copies = isTraining() ? 2 : 1;
  double need = double(bytes) * copies * (3.0 * experts * hidden * mlpDim + 3.0 * hidden * sharedDim +
                                          tokens * hidden * 3.0) +
                4.0 * copies * tokens * kMax * (2.0 * mlpDim + 2.0 * hidden);
  // --quant-mode: the prepared int8 weights beside the float ones, and for a
  // bf16 block the f32 copies the reference runs on.
  if (quantMode != QuantRun::none) {
    double weights = 3.0 * experts * hidden * mlpDim + 3.0 * hidden * sharedDim;
    need += weights * (1.0 + (bytes == 2 ? 4.0 : 0.0));
  }
  // What the kernel can give without swapping or the out-of-memory killer
  // (the tensors of shapes the sizes depend on at run time meet the JIT's
  // allocation guard, runtime/MemoryGuard.h).
  double have = double(moec::availableMemoryBytes());
  if (have > 0 && need > 0.9 * have && !predictOnly)  // a prediction allocates nothing
    return "this configuration needs about " + std::to_string(int64_t(need / 1e9)) +
           " GB, more than the " + std::to_string(int64_t(have / 1e9)) +
           " GB of memory available: refused before allocating (fewer experts, tokens or "
           "a smaller hidden size fit)";
  return "";
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  moec::setFailingTool("moe-bench", 2);
  moec::keepFreedMemory();
  moec::setRunTimeErrorToolName("moe-bench");
  // A run-time error (runtime/RunTimeChecks.h, MemoryGuard.h) ends the
  // process with _Exit, which flushes no buffer: the lines before it stay.
  outs().SetUnbuffered();
  std::vector<std::string> rawArgs(argv + 1, argv + argc);
  if (std::string error; !moec::takeThreadsOption(argc, argv, threads, error))
    return fail(error);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "moe-bench: compile an MoE block with moec, run it, report "
                              "TF/s, tokens/s and the share of this machine's peak\n\n"
                              "  --threads N    threads of the generated code (default 2)\n");
  // The files written after the runs can be written: checked before them.
  for (const std::string *path : {&jsonFile.getValue(), &csvFile.getValue(), &plotFile.getValue()}) {
    std::string error;
    if (!path->empty() && !moec::checkOutputFile(*path, error))
      return fail(error);
  }
  if (!plotFile.empty() && plotFormat(plotFile).empty())
    return fail("--plot " + plotFile + ": the plot is drawn as .svg, .svgz, .png, .pdf, .ps "
                "or .eps (named by the extension)");
  if (!sweepSpec.empty()) {
    SweepRequest request;
    request.args = sweepPointArgs(rawArgs);
    if (std::string why = parseSweep(sweepSpec, request.args, request.axes); !why.empty())
      return fail(why);
    request.jsonFile = jsonFile, request.csvFile = csvFile, request.plotFile = plotFile;
    return runSweep(request);
  }
  if (!csvFile.empty() || !plotFile.empty())
    return fail("--csv and --plot write a sweep's results: give --sweep");
  std::vector<int64_t> ks;
  std::vector<std::string> policies; // remat policies ("" for the forward)
  std::vector<double> fractions;     // null fractions (-1: no null routing)
  if (std::string why = validate(ks, policies, fractions); !why.empty())
    return fail(why);
  moec::setCodeThreads(threads);

  moec::GmmChoices gmm;
  gmm.strategy = gmmStrategy;
  gmm.tiling = gmmTiling;
  gmm.tuningTable = tuningTable;
  if (tune) {
    if (gmm.tuningTable.empty())
      gmm.tuningTable = "moec-tuning.txt";
    if (!gmmTiling.empty())
      return fail("--tune searches the tiles; do not give --gmm-tiling with it");
    if (gmmStrategy == mlir::moe::strategy::GmmStrategy::reference)
      return fail("--tune tunes the microkernel strategies' tiles, not the reference loops");
  }
  // The runs after --tune read the table back: a device or FIFO cannot be.
  if (tune && sys::fs::exists(gmm.tuningTable) && !sys::fs::is_regular_file(gmm.tuningTable))
    return fail("--tune --tuning-table " + gmm.tuningTable + ": not a regular file (the runs "
                "after the search read the table back)");
  if (!gmm.tuningTable.empty() && !tune && !sys::fs::exists(gmm.tuningTable))
    return fail("tuning table '" + gmm.tuningTable + "' does not exist (make it with --tune)");
  // A table that is not one (a wrong path) is refused here, once, and
  // before --tune would replace it.
  if (!gmm.tuningTable.empty() && gmmTiling.empty() && sys::fs::exists(gmm.tuningTable))
    if (Error bad = mlir::moe::strategy::checkTuningTable(gmm.tuningTable))
      return fail(toString(std::move(bad)));
  if (tune) {
    std::string error;
    if (!moec::checkOutputFile(gmm.tuningTable, error))
      return fail(error);
  }

  // bf16 gmms are measured against the peak of the unit that does most of
  // their work: AMX tiles (large groups) where used, else the AVX512_BF16
  // dot products; all else against FP32 FMA (bf16 on the FMA tiles is
  // widened to f32).
  std::string kindsError;
  auto kinds = mlir::moe::strategy::packedKindsFor(gmmStrategy, mlir::moe::strategy::MachineModel::target(),
                                                   mlir::moe::strategy::targetCpuName(), kindsError);
  if (!kinds)
    return fail(kindsError);
  // int8 gmms against the int8 unit's: AMX INT8 tiles where granted, else
  // the AVX512-VNNI dot products (one multiply and one add per product,
  // counted as FLOPs are).
  QuantChoice quant{quantMode, quantWeightScales};
  bool amxInt8Code = quant.realInt8() && kinds->amxInt8 && amxTilesGranted();
  bool vnniCode = quant.realInt8() && !amxInt8Code && kinds->avx512Vnni;
  bool int8Code = amxInt8Code || vnniCode;
  bool amxCode = !int8Code && dtype == moec::FloatType::bf16 && kinds->amxBf16 && amxTilesGranted();
  bool dotCode = !int8Code && !amxCode && dtype == moec::FloatType::bf16 && kinds->avx512Bf16;
  auto measurePeak = [&] {
    if (amxInt8Code)
      return measureAmxInt8PeakGops(threads);
    if (vnniCode)
      return measureVnniPeakGops(threads);
    if (amxCode)
      return measureAmxBf16PeakGflops(threads);
    return dotCode ? measureAvx512Bf16PeakGflops(threads) : measureFp32PeakGflops(threads);
  };
  double peak = peakOption > 0 ? double(peakOption) : measurePeak();
  const char *peakKind = amxInt8Code ? "AMX INT8"
                         : vnniCode  ? "AVX512_VNNI"
                         : amxCode   ? "AMX BF16"
                         : dotCode   ? "AVX512_BF16"
                                     : "FP32 FMA";
  peakKindName = peakKind;
  const char *peakUnit = int8Code ? "GOP/s" : "GFLOP/s";
  outs() << format("peak: %.1f %s %s, %u threads (%s)\n", peak, peakUnit, peakKind,
                   unsigned(threads), peakOption > 0 ? "given" : "measured now");
  outs().flush();

  // The plan: one device, or a mesh of shards (docs/sharding.md), chosen
  // by the flags or, with auto, by the cost model.
  for (auto [name, value] : {std::pair{"core-gflops", double(coreGflops)},
                              {"half-rate-rows", halfRateRows},
                              {"tgmm-half-rate-rows", tgmmHalfRateRows},
                              {"link-gbps", linkGBps}, {"link-latency-us", linkLatencyUs}})
    if (value < 0)
      return fail(std::string("--") + name + " must be >= 0 (got " + std::to_string(value) + ")");
  Machine machine;
  machine.coreGflops = coreGflops > 0 ? double(coreGflops) : 0.75 * peak / threads;
  machine.halfRateRows = halfRateRows;
  machine.tgmmHalfRateRows = tgmmHalfRateRows;
  machine.linkGBps = linkGBps > 0 ? double(linkGBps) : moec::measureCopyGBps();
  machine.linkLatencyUs = linkLatencyUs;
  MeshRequest mesh;
  if (std::string why = moec::parseMesh(meshText, mesh); !why.empty())
    return fail(why);
  if (devices < 1)
    return fail("--devices must be >= 1 (got " + std::to_string(devices) + ")");
  // The devices the plans share: the cores per shard follow from them.
  int64_t meshDevices = mesh.given ? mesh.devices() : devices;
  if (parallelMode == moec::ParallelMode::none && !predictOnly)
    meshDevices = 1;
  machine.coresPerShard = moec::threadsPerShard(threads, meshDevices, launcher);
  // The block at top-k `k` and null fraction `nullFraction` (< 0: none).
  auto workloadFor = [&](int64_t k, double nullFraction) {
    Workload w;
    w.tokens = tokens, w.hidden = hidden, w.mlp = mlpDim, w.experts = experts, w.topk = k;
    w.shared = sharedDim, w.elementBytes = dtype == moec::FloatType::bf16 ? 2 : 4;
    w.training = isTraining();
    w.nullFraction = std::max(0.0, nullFraction);
    w.nullDraws = nullFraction >= 0;
    return w;
  };
  Plan plan;
  if (std::string why = moec::choosePlan(predictOnly ? moec::ParallelMode::automatic : parallelMode.getValue(), epDispatch, mesh,
                                   devices, workloadFor(ks.front(), fractions.front()), machine, plan);
      !why.empty())
    return fail(why);
  bool sharded = plan.mode != "none";
  if (parallelMode == moec::ParallelMode::automatic || predictOnly) {
    moec::describePredictions(outs(), workloadFor(ks.front(), fractions.front()), machine,
                              meshDevices, plan);
    if (predictOnly)
      return 0;
  }
  if (sharded && (stageTiming || queueMode != QueueMode::full))
    return fail("--stage-timing and --queue-mode prequeue time a single device's stages; "
                "give them without --parallel-mode");
  if (sharded && tune)
    return fail("--tune tunes the single-device block: run it without --parallel-mode first");
  if (sharded && quant.enabled())
    return fail("--quant-mode runs the single-device block: int8 on a mesh is not supported "
                "yet (give it without --parallel-mode)");
  if (!sharded && launcher == moec::Launcher::mpi)
    return fail("--launcher mpi runs a sharded block: give --parallel-mode dp, ep or auto");
  std::unique_ptr<moec::ShardComm> mpi;
  if (launcher == moec::Launcher::mpi) {
    std::string error;
    mpi = moec::startMpiRank(moec::meshShape(plan), moec::planMesh(plan),
                             std::chrono::milliseconds(collectiveTimeout), error);
    if (!mpi)
      return fail(error);
    // Every rank benchmarks the same block the same way: its inputs come
    // from the options (--seed), so the command lines must agree.
    if (std::string why = moec::agreeOnRun(*mpi, rawArgs); !why.empty())
      return fail(why);
  }
  moec::ShardComm *mpiComm = mpi.get();
  if (sharded) {
    // Each in-process shard runs its share of the threads (libomp reads
    // this when a shard thread's first parallel loop starts).
    moec::setCodeThreads(unsigned(machine.coresPerShard));
    outs() << "parallel: " << plan.str() << ", " << plan.data * plan.expert
           << (mpiComm ? " MPI processes" : " shards in-process") << ", "
           << machine.coresPerShard << " thread(s) each\n";
  }

  // "both" is each of the others in turn.
  std::vector<std::string> dists;
  for (Distribution d : {Distribution::random, Distribution::runs})
    if (distribution == d || distribution == Distribution::both)
      dists.push_back(kDistributionChoices.name(d).str());
  std::vector<std::string> modes;
  for (QueueMode m : {QueueMode::full, QueueMode::prequeue})
    if (queueMode == m || queueMode == QueueMode::both)
      modes.push_back(kQueueModeChoices.name(m).str());

  std::vector<Result> results;
  for (int64_t k : ks)
  for (double nullFraction : fractions) {
    BlockConfig c;
    c.tokens = tokens, c.hidden = hidden, c.mlp = mlpDim, c.experts = experts, c.topk = k;
    c.shared = sharedDim, c.sharedFused = sharedFused, c.impl = impl;
    c.packStrategy = packStrategy, c.dtype = dtype;
    c.nullFraction = nullFraction, c.nullMode = nullRoutingMode;
    c.renormalize = renormalizeRealAfterNull;
    std::string error;
    if (!familyName.empty())
      if (std::string why = applyFamily(c, familyName, familyGroups, familyTopkGroups,
                                        familyScaling);
          !why.empty())
        return fail(why);
    if (hfLayer)
      if (std::string why = useLayer(c, *hfLayer,
                                     "--hf-config's " + hfLayer->family + " layer " +
                                         std::to_string(hfLayer->layer));
          !why.empty())
        return fail(why);

    // The table's key is the gmm shape, the same for every top-k: tuned once,
    // on the first top-k's group sizes.
    if (tune && k == ks.front() && nullFraction == fractions.front()) {
      TuneRequest request{c, gmm.tuningTable, threads, seed};
      if (!tuneGmmTiles(request, error))
        return fail(error);
    }

    // Weights and tokens, shared by the distributions.
    moec::DType dt = moec::dtypeOf(dtype);
    std::map<std::string, moec::Buffer> pool;
    pool["x"] = moec::Buffer(dt, {c.tokens, c.hidden});
    fillUniform(pool["x"], seed * 7 + 1, 1.0f);
    std::vector<std::string> weightNames;
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
    std::vector<std::string> expertWeights = weightNames;
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

    double stageCompileS = 0, routeCompileS = 0;
    auto route = Compiled::build(routeProgram(c), gmm, routeCompileS, error);
    if (!route)
      return fail(error);
    // The block, or its forward_backward under each remat policy.
    struct Variant {
      std::string policy;
      std::unique_ptr<Compiled> program;
      double compileS = 0;
      RematChoice remat;
    };
    std::vector<Variant> variants;
    for (const std::string &policy : policies) {
      Variant v;
      v.policy = policy;
      std::string prepare;
      if (quant.enabled())
        prepare = quant.pipeline(!policy.empty()) + (policy.empty() ? "" : ",");
      if (sharded)
        prepare = "moe-partition{mesh=" + moec::planMesh(plan) + " ep-dispatch=" +
                  mlir::moe::kEpDispatchChoices.name(moec::planDispatch(plan)).str() +
                  " capacity-factor=" + std::to_string(capacityFactor) + " functions=moe_block}" +
                  (policy.empty() ? "" : ",");
      if (!policy.empty()) {
        // The budget is auto's to meet; the fixed policies are measured as they are.
        prepare += "moe-generate-backward,func.func(moe-remat{policy=" + policy +
                  (policy == "auto" ? " activation-budget=" + std::to_string(activationBudget)
                                    : std::string()) +
                  "})";
      }
      v.program = Compiled::build(blockProgram(c), gmm, v.compileS, error, prepare);
      if (!v.program)
        return fail(error);
      if (!policy.empty()) {
        std::optional<RematChoice> remat = v.program->remat("moe_block_forward_backward");
        if (!remat)
          return fail("moe-remat left no decision on @moe_block_forward_backward");
        v.remat = *remat;
      }
      variants.push_back(std::move(v));
    }
    double compileS = variants.front().compileS;
    // --quant-mode: the f32 block (or its forward_backward), the reference
    // the outputs are compared with.
    std::unique_ptr<Compiled> reference;
    if (quant.enabled()) {
      BlockConfig f32 = c;
      f32.dtype = moec::FloatType::f32;
      double referenceCompileS = 0;
      reference = Compiled::build(blockProgram(f32), gmm, referenceCompileS, error,
                                  isTraining() ? "moe-generate-backward" : "");
      if (!reference)
        return fail(error);
    }
    std::unique_ptr<Compiled> stages;
    bool needStages = stageTiming || queueMode != QueueMode::full;
    if (needStages && !(stages = Compiled::build(stageProgram(c), gmm, stageCompileS, error,
                                                 quant.enabled() ? quant.pipeline(false) : "")))
      return fail(error);

    // Measured again before each configuration: the best of the run so far
    // (a shared machine's slow moment must not flatter the generated code).
    if (peakOption <= 0) {
      double again = measurePeak();
      if (again > peak) {
        peak = again;
        outs() << format("peak: %.1f %s %s, %u threads (measured again, higher)\n", peak,
                         peakUnit, peakKind, unsigned(threads));
      }
    }
    for (const std::string &dist : dists) {
      std::mt19937_64 rng(seed * 1000003ull + std::hash<std::string>()(dist) + k);
      pool["logits"] = makeLogits(dist, c.tokens, c.experts, rng);
      std::vector<std::string> routeArgs = {"logits"};
      if (c.layer.selectionBias)
        routeArgs.push_back("sb");
      if (c.nullRouting()) {
        // The same draws for every fraction: independent nulls nest as the
        // fraction grows.
        std::mt19937_64 drawRng(seed * 1000003ull + 17 * k + 5);
        std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
        moec::Buffer draws(moec::DType::F32, {c.tokens, k});
        for (int64_t i = 0; i < c.tokens * k; ++i)
          draws.as<float>()[i] = uniform(drawRng);
        pool["draws"] = std::move(draws);
        routeArgs.push_back("draws");
      }
      if (route->call("route", pool, routeArgs, {"ids", "w"}, error) < 0)
        return fail(error);
      // Load statistics from the routing the block computes.
      std::vector<int64_t> load(c.experts, 0);
      int64_t real = 0, nulls = 0;
      const int32_t *ids = pool["ids"].as<int32_t>();
      for (int64_t i = 0; i < c.tokens * k; ++i) {
        if (ids[i] >= 0 && ids[i] < c.experts)
          ++load[ids[i]], ++real;
        else
          ++nulls;
      }
      int64_t minLoad = *std::min_element(load.begin(), load.end());
      int64_t maxLoad = *std::max_element(load.begin(), load.end());
      double meanLoad = double(real) / c.experts;
      int64_t empty = std::count(load.begin(), load.end(), 0);
      double nullRealized = double(nulls) / double(c.tokens * k);
      if (!dumpRouting.empty()) {
        std::string dir = dumpRouting + "/" + dist + "-top" + std::to_string(k);
        if (!moec::writeNpyFiles(dir, {{"ids.npy", &pool["ids"]}, {"weights.npy", &pool["w"]}},
                                 error))
          return fail(error);
        outs() << "routing: written to " << dir << "\n";
      }

      outs() << format("run: distribution=%s pass=%s impl=%s backend=%s dtype=%s tokens=%lld "
                       "hidden=%lld mlp_dim=%lld experts=%lld topk=%lld shared_expert_dim=%lld%s "
                       "pack=%s threads=%u iters=%d warmup=%d compile_s=%.2f\n",
                       dist.c_str(), passName().c_str(), implName().c_str(), backendName().c_str(),
                       dtypeName().c_str(), (long long)c.tokens, (long long)c.hidden,
                       (long long)c.mlp, (long long)c.experts, (long long)k,
                       (long long)c.shared, c.shared && c.sharedFused ? " shared_fused" : "",
                       packName().c_str(), unsigned(threads), int(iters), int(warmup),
                       compileS);
      outs() << format("load: assignments=%lld real=%lld null=%lld rows_per_expert min=%lld "
                       "mean=%.1f max=%lld max/mean=%.2f empty_experts=%lld\n",
                       (long long)(c.tokens * k), (long long)real, (long long)nulls,
                       (long long)minLoad, meanLoad, (long long)maxLoad,
                       meanLoad > 0 ? maxLoad / meanLoad : 0.0, (long long)empty);

      if (c.nullRouting())
        outs() << format("null: target %.3f realized %.4f (%s%s); null slots cost no compute, "
                         "FLOPs count the %lld real assignments\n",
                         nullFraction, nullRealized,
                         nullModeName().c_str(),
                         renormalizeRealAfterNull ? ", real weights renormalised" : "",
                         (long long)real);
      double flops = 6.0 * c.hidden * c.mlp * real + 6.0 * c.tokens * c.hidden * c.shared;
      bool training = isTraining();
      if (training)
        flops *= 3;
      std::vector<std::string> fbResults = {"loss", "dx"};
      for (size_t i = 0; i < weightNames.size(); ++i)
        fbResults.push_back("d" + weightNames[i]);
      double noneSeconds = 0;
      for (const Variant &variant : variants)
      for (const std::string &mode : modes) {
        Compiled *block = variant.program.get();
        if (training)
          outs() << format("remat: policy=%s kept_bytes=%lld (%.1f MiB) recomputed_flops=%lld "
                           "(%.1f%% of the step's FLOPs)%s\n",
                           variant.policy.c_str(), (long long)variant.remat.keptBytes,
                           variant.remat.keptBytes / 1048576.0,
                           (long long)variant.remat.recomputedFlops,
                           100.0 * variant.remat.recomputedFlops / flops,
                           variant.policy == "auto"
                               ? (", auto under " + std::to_string(activationBudget) + " bytes").c_str()
                               : "");
        std::vector<double> times;
        std::vector<std::string> blockArgs = {"x", "logits"};
        if (c.layer.selectionBias)
          blockArgs.push_back("sb");
        if (c.nullRouting())
          blockArgs.push_back("draws");
        blockArgs.insert(blockArgs.end(), weightNames.begin(), weightNames.end());
        std::vector<std::string> preArgs = {"rows", "perm", "sizes", "w", "sw"};
        preArgs.insert(preArgs.end(), expertWeights.begin(), expertWeights.end());
        if (mode == "prequeue") {
          if (stages->call("pack", pool, {"x", "ids", "w"}, {"sw", "perm", "sizes"}, error) < 0 ||
              stages->call("gather", pool, {"x", "perm"}, {"rows"}, error) < 0)
            return fail(error);
        }
        std::string entry = training ? "moe_block_forward_backward" : "moe_block";
        std::vector<std::string> entryResults = training ? fbResults : std::vector<std::string>{"y"};
        std::vector<std::string> referenceArgs = blockArgs;
        std::vector<std::string> quantized; // the prepared weights' names
        if (quant.enabled() && !training) {
          // Once, as a host loading the weights would: the timed calls run
          // @moe_block_prepared on the int8 weights and scales.
          std::vector<std::string> floatWeights =
              quant.routedOnly() ? expertWeights : weightNames;
          double s = prepareWeights(*block, "moe_block", pool, floatWeights, "q", quantized, error);
          if (s < 0)
            return fail(error);
          double floatBytes = 0, quantBytes = 0;
          for (const std::string &w : floatWeights)
            floatBytes += pool[w].numBytes();
          for (const std::string &q : quantized)
            quantBytes += pool[q].numBytes();
          outs() << format("quant: mode=%s weight_scales=%s; weights quantized once in %.1f ms "
                           "(%.1f MiB -> %.1f MiB with scales)\n",
                           quant.modeName().c_str(), quant.scalesName().c_str(), s * 1e3,
                           floatBytes / 1048576.0, quantBytes / 1048576.0);
          entry = "moe_block_prepared";
          blockArgs.erase(std::remove_if(blockArgs.begin(), blockArgs.end(),
                                         [&](const std::string &a) {
                                           return llvm::is_contained(floatWeights, a);
                                         }),
                          blockArgs.end());
          blockArgs.insert(blockArgs.end(), quantized.begin(), quantized.end());
        }
        // Sharded: each rank's times and the last call's counters.
        std::vector<std::vector<double>> rankTimes;
        std::vector<moec::RankStats> rankStats;
        for (int i = 0; i < warmup + iters; ++i) {
          double s = sharded ? block->callSharded(entry, pool, blockArgs, entryResults, mpiComm,
                                                  std::chrono::milliseconds(collectiveTimeout),
                                                  rankStats, error)
                     : mode == "full" || training
                         ? block->call(entry, pool, blockArgs, entryResults, error)
                         : stages->call("prequeued", pool, preArgs, {"y"}, error);
          if (s < 0)
            return fail(error);
          if (i >= warmup) {
            times.push_back(s);
            rankTimes.resize(rankStats.size());
            for (size_t rk = 0; rk < rankStats.size(); ++rk)
              rankTimes[rk].push_back(rankStats[rk].seconds);
          }
        }
        Result r;
        if (quant.enabled()) {
          // The f32 block on the same inputs (bf16 ones widened exactly).
          std::map<std::string, moec::Buffer> widened;
          std::map<std::string, moec::Buffer> &referencePool = dtype == moec::FloatType::f32 ? pool : widened;
          if (dtype != moec::FloatType::f32)
            for (const std::string &name : referenceArgs)
              widened[name] = widenToF32(pool[name]);
          std::vector<std::string> referenceResults;
          for (const std::string &name : entryResults)
            referenceResults.push_back("f32_" + name);
          if (reference->call(entry == "moe_block_prepared" ? "moe_block" : entry, referencePool,
                              referenceArgs, referenceResults, error) < 0)
            return fail(error);
          std::string line = "quant: relative error against f32:";
          for (size_t i = 0; i < entryResults.size(); ++i) {
            double err = relativeError(pool[entryResults[i]], referencePool[referenceResults[i]]);
            if (err < 0)
              return fail("--quant-mode: '" + entryResults[i] + "' has another shape than the f32 "
                          "block's");
            r.relErrors.push_back({entryResults[i], err});
            line += formatv(" {0} {1:E3}", entryResults[i], err).str();
            referencePool.erase(referenceResults[i]);
          }
          outs() << line << "\n";
        }
        for (const std::string &q : quantized)
          pool.erase(q);
        pool.erase("rows");
        for (const std::string &name : fbResults)
          pool.erase(name);
        double med = median(times);
        r.distribution = dist, r.mode = mode, r.impl = implName(), r.k = k;
        r.family = c.layer.family, r.shared = c.shared;
        r.remat = variant.policy, r.keptBytes = variant.remat.keptBytes;
        r.recomputedFlops = variant.remat.recomputedFlops;
        r.realAssignments = real, r.nullAssignments = nulls, r.seconds = med;
        r.nullTarget = std::max(0.0, nullFraction);
        r.tflops = flops / med / 1e12, r.tokensPerS = c.tokens / med;
        r.peakPct = 100 * flops / med / 1e9 / peak, r.compileS = variant.compileS;
        outs() << format("time: median %.2f ms min %.2f ms max %.2f ms over %d runs; "
                         "%.1f GFLOP/s, %.1f%% of peak\n",
                         med * 1e3, *std::min_element(times.begin(), times.end()) * 1e3,
                         *std::max_element(times.begin(), times.end()) * 1e3, int(iters),
                         flops / med / 1e9, r.peakPct);

        if (!sharded && mode == "full") {
          Prediction predicted = moec::predict(workloadFor(k, nullFraction), plan, machine);
          outs() << format("model: predicted %.4f s (compute %.4f s, comm %.4f s), measured "
                           "%.4f s: measured/predicted %.2f\n",
                           predicted.totalS(), predicted.computeS, predicted.commS, med,
                           med / predicted.totalS());
        }
        if (sharded) {
          // Per shard: its useful FLOPs (its experts' real rows, its shared
          // expert tokens) over its median time; the traffic of the busiest
          // shard, counted by the runtime and modelled.
          Workload w = workloadFor(k, nullFraction);
          Prediction predicted = moec::predict(w, plan, machine);
          const moec::MeshLayout *layout = block->layout(entry);
          std::vector<ShardWork> work = moec::shardWork(plan, *layout, pool["ids"].as<int32_t>(), w);
          double passes = training ? 3 : 1;
          r.shardTflopsMin = 1e30;
          for (size_t rk = 0; rk < rankStats.size(); ++rk) {
            // Rows a capacity dropped are not computed.
            if (rankStats[rk].comm.localRows > 0)
              work[rk].rows = rankStats[rk].comm.localRows - rankStats[rk].comm.droppedRows;
            double shardFlops = passes * (6.0 * c.hidden * c.mlp * work[rk].rows +
                                          6.0 * c.hidden * c.shared * work[rk].sharedTokens);
            double t = median(rankTimes[rk]);
            double tf = shardFlops / t / 1e12;
            r.shardTflopsMin = std::min(r.shardTflopsMin, tf);
            r.shardTflopsMax = std::max(r.shardTflopsMax, tf);
            const moec::CommCounters &cc = rankStats[rk].comm;
            outs() << format("shard %zu: median %.2f ms, %lld rows, %.2f GFLOP, %.4f TF/s; "
                             "%lld collectives, %.3f MiB sent\n",
                             rk, t * 1e3, (long long)work[rk].rows, shardFlops * 1e-9, tf,
                             (long long)cc.calls, cc.bytesSent / 1048576.0);
          }
          r.parallel = plan.mode, r.mesh = moec::planMesh(plan), r.shards = rankStats.size();
          r.predictedS = predicted.totalS();
          moec::CommTotals comm = moec::commTotals(rankStats);
          double counted = double(comm.busiestBytes);
          r.commCountedBytes = counted, r.commModelledBytes = predicted.commBytes;
          outs() << format("comm: busiest shard %.3f MiB counted, %.3f MiB modelled per call\n",
                           counted / 1048576.0, predicted.commBytes / 1048576.0);
          outs() << format("model: predicted %.4f s (compute %.4f s, comm %.4f s), measured "
                           "%.4f s: measured/predicted %.2f\n",
                           predicted.totalS(), predicted.computeS, predicted.commS, med,
                           med / predicted.totalS());
          if (std::string dropped = moec::droppedRowsLine(comm, " per call"); !dropped.empty())
            outs() << dropped << "\n";
        }

        if (stageTiming && mode == "full") {
          // Each stage on the previous stage's results, medians of iters.
          std::vector<double> tPack, tUp, tDown, tCombine;
          std::vector<std::string> upArgs = {"x", "perm", "sizes"}, upWeights;
          for (const std::string &w : expertWeights)
            if (w != "w2")
              upWeights.push_back(w);
          std::vector<std::string> downArgs = {"act", "sizes"};
          std::string upStage = "up", downStage = "down";
          if (quant.enabled()) {
            // The stages' own prepared weights (after the floats' other
            // arguments, as moe-quantize orders them), made once.
            if (c.preweight())
              upArgs.push_back("sw");
            if (prepareWeights(*stages, "up", pool, upWeights, "up_q", upArgs, error) < 0 ||
                prepareWeights(*stages, "down", pool, {"w2"}, "down_q", downArgs, error) < 0)
              return fail(error);
            upStage = "up_prepared", downStage = "down_prepared";
          } else {
            upArgs.insert(upArgs.end(), upWeights.begin(), upWeights.end());
            if (c.preweight())
              upArgs.push_back("sw");
            downArgs.push_back("w2");
          }
          for (int i = 0; i < warmup + iters; ++i) {
            double a = stages->call("pack", pool, {"x", "ids", "w"}, {"sw", "perm", "sizes"}, error);
            double b = a < 0 ? a : stages->call(upStage, pool, upArgs, {"act"}, error);
            double d = b < 0 ? b : stages->call(downStage, pool, downArgs, {"d"}, error);
            double e = d < 0 ? d : stages->call("combine", pool, {"d", "perm", "w"}, {"ys"}, error);
            if (e < 0)
              return fail(error);
            if (i >= warmup)
              tPack.push_back(a), tUp.push_back(b), tDown.push_back(d), tCombine.push_back(e);
          }
          pool.erase("act"), pool.erase("d"), pool.erase("ys");
          for (const std::vector<std::string> *args : {&upArgs, &downArgs})
            for (const std::string &name : *args)
              if (StringRef(name).contains("_q"))
                pool.erase(name);
          // Route runs inside the block; time it on its own too.
          std::vector<double> tRoute;
          for (int i = 0; i < iters; ++i) {
            double s = route->call("route", pool, routeArgs, {"routeIds", "routeW"}, error);
            if (s < 0)
              return fail(error);
            tRoute.push_back(s);
          }
          pool.erase("routeIds"), pool.erase("routeW");
          double parts[] = {median(tRoute), median(tPack), median(tUp), median(tDown),
                            median(tCombine)};
          const char *names[] = {"route", "pack", "up", "down", "combine"};
          double sum = 0;
          for (double p : parts)
            sum += p;
          std::string line = "stages:";
          raw_string_ostream ls(line);
          for (int s = 0; s < 5; ++s) {
            ls << format(" %s %.2f ms (%.1f%%)", names[s], parts[s] * 1e3, 100 * parts[s] / sum);
            r.stages.push_back({names[s], parts[s]});
          }
          if (c.shared)
            ls << format(" shared+rest %.2f ms", (med - sum) * 1e3);
          outs() << ls.str() << format("; pack+combine %.1f%% of the stages\n",
                                   100 * (parts[1] + parts[4]) / sum);
          // The routed gmms alone: up (gate and up, 4HM per row) and down
          // (2MH per row), over the real rows.
          double upOps = 4.0 * c.hidden * c.mlp * real, downOps = 2.0 * c.mlp * c.hidden * real;
          outs() << format("gmm: up %.1f %s, down %.1f %s, %.1f%% and %.1f%% of peak\n",
                           upOps / parts[2] / 1e9, peakUnit, downOps / parts[3] / 1e9, peakUnit,
                           100 * upOps / parts[2] / 1e9 / peak, 100 * downOps / parts[3] / 1e9 / peak);
          r.upGops = upOps / parts[2] / 1e9, r.downGops = downOps / parts[3] / 1e9;
        }
        if (training && variant.policy == "none")
          noneSeconds = med;
        if (training && variant.policy != "none" && noneSeconds > 0)
          outs() << format("remat: %s takes %.3fx the time of none; its recomputed FLOPs "
                           "predict %.3fx\n",
                           variant.policy.c_str(), med / noneSeconds,
                           1.0 + variant.remat.recomputedFlops / flops);
        std::string rematFields =
            training ? formatv(" remat={0} kept_bytes={1} recomputed_flops={2}", variant.policy,
                               variant.remat.keptBytes, variant.remat.recomputedFlops)
                           .str()
                     : "";
        if (sharded)
          rematFields += formatv(" parallel={0} mesh={1} shards={2} launcher={3} "
                                 "predicted_s={4:F4} comm_mib_counted={5:F3} "
                                 "comm_mib_modelled={6:F3} shard_tflops_min={7:F4} "
                                 "shard_tflops_max={8:F4}",
                                 r.parallel, r.mesh, r.shards, launcherName(), r.predictedS,
                                 r.commCountedBytes / 1048576.0,
                                 r.commModelledBytes / 1048576.0, r.shardTflopsMin,
                                 r.shardTflopsMax)
                             .str();
        if (c.nullRouting())
          rematFields += formatv(" null_mode={0} renormalize_real_after_null={1}",
                                 nullModeName(), renormalizeRealAfterNull ? "true" : "false")
                             .str();
        rematFields += " quant=" + quant.modeName();
        if (!c.layer.family.empty())
          rematFields += " family=" + c.layer.family;
        if (!r.relErrors.empty())
          rematFields += formatv(" quant_weight_scales={0} rel_error={1:E3}", quant.scalesName(),
                                 r.relErrors.front().second)
                             .str();
        outs() << format("RESULT distribution=%s mode=%s pass=%s impl=%s backend=%s topk=%lld "
                         "null_target=%.4g null_realized=%.4f null_assignments=%lld "
                         "real_assignments=%lld tflops=%.4f tokens_per_s=%.1f dtype=%s "
                         "peak_pct=%.1f%s\n",
                         dist.c_str(), mode.c_str(), passName().c_str(), implName().c_str(),
                         backendName().c_str(), (long long)k, r.nullTarget,
                         nullRealized, (long long)nulls,
                         (long long)real, r.tflops, r.tokensPerS, dtypeName().c_str(), r.peakPct,
                         rematFields.c_str());
        outs().flush();
        results.push_back(r);
      }
    }
  }
  if (std::string error;
      !jsonFile.empty() && !moec::writeFileAtomically(jsonFile, jsonOf(results, peak), error))
    return fail(error);
  return 0;
}
