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
#include "tooling/CoreSpeed.h"
#include "tooling/CpuSteal.h"
#include "tooling/GmmPeakUnit.h"
#include "tooling/Peak.h"
#include "tooling/RunLauncher.h"
#include "tooling/RunReport.h"
#include "tooling/ThreadsOption.h"
#include "tooling/ToolChoices.h"
#include "Inputs.h"
#include "Program.h"
#include "Quant.h"
#include "Report.h"
#include "Session.h"
#include "StageTable.h"
#include "Sweep.h"
#include "dialect/MoeOps.h"
#include "Tune.h"

#include "strategy/GmmStrategy.h"
#include "strategy/GmmTiling.h"
#include "passes/Remat.h"
#include "runtime/AtomicFile.h"
#include "runtime/ThreadLimit.h"
#include "runtime/HostMemory.h"
#include "runtime/MemoryGuard.h"
#include "runtime/RunTimeChecks.h"
#include "runtime/ShardComm.h"

#include "llvm/Support/FormatVariadic.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace llvm;
using namespace moebench;
// The parallel plans and their cost model (tooling/ParallelPlan.h).
using moec::Machine, moec::MeshRequest, moec::Plan, moec::Prediction, moec::ShardWork,
    moec::Workload;

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
    mlir::moe::kPackStrategyChoices.values(), cl::init(mlir::moe::PackStrategy::argsort), cl::cat(category));
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
cl::opt<bool> stageTiming("stage-timing",
                          cl::desc("Time each stage inside the timed function (forward or "
                                   "forward_backward: share, speed-up from 1 thread), and the "
                                   "forward's pack, up, down, combine cut apart"),
                          cl::cat(category));
cl::opt<bool> prepareWeightsOption(
    "prepare-weights",
    cl::desc("Pack the float gmm weights into the kernels' layout once, before the timed calls "
             "(<f>_prepare_weights, as a serving host loads them); =false times the per-task "
             "packing"),
    cl::init(true), cl::cat(category));
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
                           cl::desc("Peak to report against, in the unit's rate: GFLOP/s of FP32 FMA, or for bf16 of AMX BF16 "
                                     "(on AMX tiles) or AVX512_BF16 (on the dot products); GOP/s for --quant-mode int8 and "
                                     "int8_routed on an int8 kind (AMX INT8, AVX512_VNNI or AVX2's vpmaddwd), GFLOP/s "
                                     "of FP32 FMA where none runs (no AVX2, or --gmm-strategy microkernel-fma or "
                                     "reference) (default: measured now)"),
                           cl::init(0), cl::cat(category));
// Hidden: a test's way to a measured peak below the cores' speed, so that
// the probes raise it (test/moe-bench/core-speed.mlir).
cl::opt<double> measuredPeakScale("measured-peak-scale",
                                  cl::desc("Scale each measured peak by this factor (default 1)"),
                                  cl::init(1.0), cl::Hidden, cl::cat(category));
cl::opt<bool> coreProbe("core-probe",
                        cl::desc("Run the peak's loop for about 20 ms after each call and report the "
                                 "cores' own speed over the timed calls against the peak (default on; "
                                 "not for sharded runs or a given --peak-gflops)"),
                        cl::init(true), cl::cat(category));
cl::opt<double> readGBpsOption("read-gbps",
                               cl::desc("DRAM read GB/s to report the weights' rate against "
                                        "(default: measured before and after each forward reported, the best so far)"),
                               cl::init(0), cl::cat(category));
cl::opt<double> llcMibOption("llc-mib",
                             cl::desc("Last-level cache MiB: weights larger than this are reported "
                                      "against the DRAM read bandwidth (default: cpu0's, as Linux "
                                      "describes it, else glibc's largest level; a VM may describe more "
                                      "than it has)"),
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
// The default's share from the model itself (cl::desc keeps a reference).
const std::string coreGflopsHelp =
    formatv("Cost model: one core's gmm rate on large groups, in the peak's unit (see --peak-gflops) "
            "(default: {0:F2} x the measured peak per thread)",
            moec::kGmmShareOfPeak)
        .str();
cl::opt<double> coreGflops("core-gflops", cl::desc(coreGflopsHelp), cl::init(0),
                           cl::cat(category));
cl::opt<double> halfRateRows("half-rate-rows",
                             cl::desc("Cost model: rows per expert at which a gmm runs at half "
                                      "the core rate"),
                             cl::init(moec::Machine().halfRateRows), cl::cat(category));
cl::opt<double> tgmmHalfRateRows("tgmm-half-rate-rows",
                                 cl::desc("Cost model: the same for the weight gradients' tgmm "
                                          "(training)"),
                                 cl::init(moec::Machine().tgmmHalfRateRows), cl::cat(category));
cl::opt<double> trainingShare("training-share",
                              cl::desc("Cost model: a training step's gmms' rate as a share of "
                                       "the forward's (0 < share <= 1)"),
                              cl::init(moec::Machine().trainingShare), cl::cat(category));
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
    "null-routing-mode", cl::desc("How null slots are drawn:"), mlir::moe::kNullPolicyChoices.values(),
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
std::string packName() { return mlir::moe::kPackStrategyChoices.name(packStrategy).str(); }
std::string passName() { return kBenchPassChoices.name(benchPass).str(); }
std::string nullModeName() { return mlir::moe::kNullPolicyChoices.name(nullRoutingMode).str(); }
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

/// The gmm choices --gmm-strategy, --gmm-tiling, --tuning-table and --tune
/// make, checked before anything runs; "" or why not.
std::string gmmChoices(moec::GmmChoices &gmm) {
  gmm.strategy = gmmStrategy;
  gmm.tiling = gmmTiling;
  gmm.tuningTable = tuningTable;
  gmm.prepareWeights = prepareWeightsOption;
  if (tune) {
    if (gmm.tuningTable.empty())
      gmm.tuningTable = "moec-tuning.txt";
    if (!gmmTiling.empty())
      return "--tune searches the tiles; do not give --gmm-tiling with it";
    if (gmmStrategy == mlir::moe::strategy::GmmStrategy::reference)
      return "--tune tunes the microkernel strategies' tiles, not the reference loops";
  }
  // The runs after --tune read the table back: a device or FIFO cannot be.
  if (tune && sys::fs::exists(gmm.tuningTable) && !sys::fs::is_regular_file(gmm.tuningTable))
    return "--tune --tuning-table " + gmm.tuningTable +
           ": not a regular file (the runs after the search read the table back)";
  if (!gmm.tuningTable.empty() && !tune && !sys::fs::exists(gmm.tuningTable))
    return "tuning table '" + gmm.tuningTable + "' does not exist (make it with --tune)";
  // A table that is not one (a wrong path) is refused here, once, and
  // before --tune would replace it.
  if (!gmm.tuningTable.empty() && gmmTiling.empty() && sys::fs::exists(gmm.tuningTable))
    if (Error bad = mlir::moe::strategy::checkTuningTable(gmm.tuningTable))
      return toString(std::move(bad));
  if (tune) {
    std::string error;
    if (!moec::checkOutputFile(gmm.tuningTable, error))
      return error;
  }
  return "";
}

/// --stage-timing: each stage of the block on the previous stage's
/// results (route on its own: it runs inside the block), medians of
/// --iters, with the routed gmms' rates against the peak; into `r`.
/// `real` is the routed rows; `blockSeconds` the whole block's median.
bool timeStages(const BlockConfig &c, const QuantChoice &quant, Compiled &stages,
                Compiled &route, std::map<std::string, moec::Buffer> &pool,
                const std::vector<std::string> &expertWeights,
                const std::vector<std::string> &routeArgs, int64_t real, double blockSeconds,
                double peak, const char *unitName, Result &r, std::string &error) {
  // Each stage on the previous stage's results, medians of iters.
  std::vector<double> tPack, tUp, tDown, tCombine;
  std::vector<std::string> upArgs = {"x", "perm", "sizes"}, upWeights;
  for (const std::string &w : expertWeights)
    if (w != "w2")
      upWeights.push_back(w);
  std::vector<std::string> downArgs = {"act", "sizes"};
  std::string upStage = "up", downStage = "down";
  upArgs.insert(upArgs.end(), upWeights.begin(), upWeights.end());
  if (c.preweight())
    upArgs.push_back("sw");
  downArgs.push_back("w2");
  // The stages' own prepared weights (int8, or packed), made once, as the
  // block's are.
  std::vector<std::string> upPrepared, downPrepared;
  if (stages.preparedForm("up") && stages.preparedForm("down")) {
    if (stages.prepareWeights("up", pool, upArgs, "up_p", upArgs, upPrepared, error) < 0 ||
        stages.prepareWeights("down", pool, downArgs, "down_p", downArgs, downPrepared, error) < 0)
      return false;
    upStage = "up_prepared", downStage = "down_prepared";
  }
  for (int i = 0; i < warmup + iters; ++i) {
    double a = stages.call("pack", pool, {"x", "ids", "w"}, {"sw", "perm", "sizes"}, error);
    double b = a < 0 ? a : stages.call(upStage, pool, upArgs, {"act"}, error);
    double d = b < 0 ? b : stages.call(downStage, pool, downArgs, {"d"}, error);
    double e = d < 0 ? d : stages.call("combine", pool, {"d", "perm", "w"}, {"ys"}, error);
    if (e < 0)
      return false;
    if (i >= warmup)
      tPack.push_back(a), tUp.push_back(b), tDown.push_back(d), tCombine.push_back(e);
  }
  pool.erase("act"), pool.erase("d"), pool.erase("ys");
  for (const std::vector<std::string> *names : {&upPrepared, &downPrepared})
    for (const std::string &name : *names)
      pool.erase(name);
  // Route runs inside the block; time it on its own too.
  std::vector<double> tRoute;
  for (int i = 0; i < iters; ++i) {
    double s = route.call("route", pool, routeArgs, {"routeIds", "routeW"}, error);
    if (s < 0)
      return false;
    tRoute.push_back(s);
  }
  pool.erase("routeIds"), pool.erase("routeW");
  double parts[] = {moec::medianOf(tRoute), moec::medianOf(tPack), moec::medianOf(tUp),
                    moec::medianOf(tDown), moec::medianOf(tCombine)};
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
    ls << format(" shared+rest %.2f ms", (blockSeconds - sum) * 1e3);
  outs() << ls.str() << format("; pack+combine %.1f%% of the stages\n",
                           100 * (parts[1] + parts[4]) / sum);
  // The routed gmms alone: up (gate and up, 4HM per row) and down
  // (2MH per row), over the real rows.
  double upOps = 4.0 * c.hidden * c.mlp * real, downOps = 2.0 * c.mlp * c.hidden * real;
  outs() << format("gmm: up %.1f %s, down %.1f %s, %.1f%% and %.1f%% of peak\n",
                   upOps / parts[2] / 1e9, unitName, downOps / parts[3] / 1e9, unitName,
                   100 * upOps / parts[2] / 1e9 / peak, 100 * downOps / parts[3] / 1e9 / peak);
  r.upGops = upOps / parts[2] / 1e9, r.downGops = downOps / parts[3] / 1e9;
  return true;
}

/// --stage-timing inside the timed function: `staged`'s copy of `function`
/// (its prepared form, weights prepared once, when it has one) on the
/// pool's `args`; the table printed, the stages into `r`.
bool timeInside(Compiled &staged, const std::string &function,
                std::map<std::string, moec::Buffer> &pool, const std::vector<std::string> &args,
                const std::vector<std::string> &results, Result &r, std::string &error) {
  std::string entry = function;
  std::vector<std::string> entryArgs = args, prepared;
  if (const moec::PreparedForm *form = staged.preparedForm(function)) {
    if (staged.prepareWeights(function, pool, args, "staged_p", entryArgs, prepared, error) < 0)
      return false;
    entry = form->prepared;
  }
  std::vector<std::string> stagedResults;
  for (const std::string &name : results)
    stagedResults.push_back("staged_" + name);
  StageTime call;
  bool ok = timeStagesInside(staged, entry, pool, entryArgs, stagedResults, warmup, iters,
                             threads, r.blockStages, call, error);
  for (const std::vector<std::string> *names : {&prepared, &stagedResults})
    for (const std::string &name : *names)
      pool.erase(name);
  if (ok)
    printStageTable(outs(), entry, r.blockStages, call, threads, iters);
  return ok;
}

/// One core's gmm rate the cost model takes: --core-gflops, else
/// kGmmShareOfPeak of `peak` per thread.
double coreRateAt(double peak) {
  return coreGflops > 0 ? double(coreGflops) : moec::kGmmShareOfPeak * peak / threads;
}

/// `machine` at the run's peak as it stands when the model's prediction is
/// printed: the plan was chosen at the first peak measured, which a probe
/// between the calls or a second measurement may since have raised. Its
/// coreRateFrom names that peak, so the prediction's line says which it
/// took; a given --core-gflops stays.
Machine machineAtPeak(Machine machine, double peak, const char *peakKind) {
  if (coreGflops > 0)
    return machine;
  machine.coreGflops = coreRateAt(peak);
  machine.coreRateFrom = formatv("{0} of {1:f1} {2} over {3} threads", moec::shareOfPeak(peakKind), peak,
                                 machine.rateUnit, threads)
                             .str();
  return machine;
}

/// The model's prediction against the measured median `med`, with the
/// core rate `machine` (the one that made it) took, in the peak's unit, and
/// where that came from: one line, single-device or sharded.
void sayPrediction(const Prediction &predicted, double med, const Machine &machine) {
  outs() << format("model: predicted %.4f s (compute %.4f s, comm %.4f s), measured %.4f s: "
                   "measured/predicted %.2f (a core at %.1f %s, %s)\n",
                   predicted.totalS(), predicted.computeS, predicted.commS, med, med / predicted.totalS(),
                   machine.coreGflops, machine.rateUnit.c_str(), machine.coreRateFrom.c_str());
}

/// A sharded run's report: per shard its useful FLOPs (its experts' real
/// rows, its shared expert's tokens) over its median time, the busiest
/// shard's traffic counted by the runtime and modelled, the model's
/// prediction against the measured `med`, and the rows a capacity dropped;
/// into `r`.
void reportShards(const BlockConfig &c, const Plan &plan, const Workload &w,
                  const Machine &machine, const moec::MeshLayout &layout, const int32_t *ids,
                  const std::vector<moec::RankStats> &rankStats,
                  const std::vector<std::vector<double>> &rankTimes, bool training, double med,
                  Result &r) {
  Prediction predicted = moec::predict(w, plan, machine);
  std::vector<ShardWork> work = moec::shardWork(plan, layout, ids, w);
  double passes = training ? 3 : 1;
  r.shardTflopsMin = 1e30;
  for (size_t rk = 0; rk < rankStats.size(); ++rk) {
    // Rows a capacity dropped are not computed.
    if (rankStats[rk].comm.localRows > 0)
      work[rk].rows = rankStats[rk].comm.localRows - rankStats[rk].comm.droppedRows;
    double shardFlops = passes * (6.0 * c.hidden * c.mlp * work[rk].rows +
                                  6.0 * c.hidden * c.shared * work[rk].sharedTokens);
    double t = moec::medianOf(rankTimes[rk]);
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
  sayPrediction(predicted, med, machine);
  if (std::string dropped = moec::droppedRowsLine(comm, " per call"); !dropped.empty())
    outs() << dropped << "\n";
}

/// The machine the cost model sees: --core-gflops (else kGmmShareOfPeak of
/// the measured `peak` of the unit `peakKind` per thread, in `peakUnit`), the half-rate
/// rows, the training share, --link-gbps (else the measured memcpy
/// bandwidth) and its latency; "" or why not.
std::string machineFor(double peak, const char *peakKind, const char *peakUnit, Machine &machine) {
  for (auto [name, value] : {std::pair{"core-gflops", double(coreGflops)},
                              {"half-rate-rows", halfRateRows},
                              {"tgmm-half-rate-rows", tgmmHalfRateRows},
                              {"link-gbps", linkGBps}, {"link-latency-us", linkLatencyUs}})
    if (!(value >= 0)) // NaN too
      return std::string("--") + name + " must be >= 0 (got " + std::to_string(value) + ")";
  if (!(trainingShare > 0 && trainingShare <= 1))
    return "--training-share must be in (0, 1] (got " + std::to_string(trainingShare) + ")";
  machine.coreGflops = coreRateAt(peak);
  machine.coreRateFrom = coreGflops > 0 ? "given" : moec::shareOfPeak(peakKind);
  machine.rateUnit = peakUnit;
  machine.halfRateRows = halfRateRows;
  machine.tgmmHalfRateRows = tgmmHalfRateRows;
  machine.trainingShare = trainingShare;
  machine.linkGBps = linkGBps > 0 ? double(linkGBps) : moec::measureCopyGBps();
  machine.linkLatencyUs = linkLatencyUs;
  return "";
}

/// The cost model's block at top-k `k` and null fraction `nullFraction`
/// (< 0: no null routing).
Workload workloadFor(int64_t k, double nullFraction) {
  Workload w;
  w.tokens = tokens, w.hidden = hidden, w.mlp = mlpDim, w.experts = experts, w.topk = k;
  w.shared = sharedDim, w.elementBytes = dtype == moec::FloatType::bf16 ? 2 : 4;
  w.training = isTraining();
  w.nullFraction = std::max(0.0, nullFraction);
  w.nullDraws = nullFraction >= 0;
  w.capacityFactor = capacityFactor > 0;
  return w;
}

/// The block moe-bench builds at top-k `k` and null fraction
/// `nullFraction` (< 0: none): the sizes and choices of the options, with
/// --family's or --hf-config's layer; "" or why not.
std::string configFor(int64_t k, double nullFraction, BlockConfig &c) {
  c.tokens = tokens, c.hidden = hidden, c.mlp = mlpDim, c.experts = experts, c.topk = k;
  c.shared = sharedDim, c.sharedFused = sharedFused, c.impl = impl;
  c.packStrategy = packStrategy, c.dtype = dtype;
  c.nullFraction = nullFraction, c.nullMode = nullRoutingMode;
  c.renormalize = renormalizeRealAfterNull;
  if (!familyName.empty())
    if (std::string why = applyFamily(c, familyName, familyGroups, familyTopkGroups,
                                      familyScaling);
        !why.empty())
      return why;
  if (hfLayer)
    if (std::string why = useLayer(c, *hfLayer,
                                   "--hf-config's " + hfLayer->family + " layer " +
                                       std::to_string(hfLayer->layer));
        !why.empty())
      return why;
  return "";
}

/// The block compiled once per remat policy ("" : the forward), each as
/// moe-bench times it: through moe-quantize with --quant-mode, partitioned
/// for `plan` when sharded (null: one device), and with a policy the
/// forward_backward moe-remat planned.
struct Variant {
  std::string policy;
  std::unique_ptr<Compiled> program;
  double compileS = 0;
  RematChoice remat;
};
bool compileVariants(const BlockConfig &c, const moec::GmmChoices &gmm,
                     const std::vector<std::string> &policies, const QuantChoice &quant,
                     const Plan *plan, std::vector<Variant> &variants, std::string &error) {
  for (const std::string &policy : policies) {
    Variant v;
    v.policy = policy;
    std::string prepare;
    if (quant.enabled())
      prepare = quant.pipeline(!policy.empty()) + (policy.empty() ? "" : ",");
    if (plan)
      prepare = "moe-partition{mesh=" + moec::planMesh(*plan) + " ep-dispatch=" +
                mlir::moe::kEpDispatchChoices.name(moec::planDispatch(*plan)).str() +
                " capacity-factor=" + std::to_string(capacityFactor) + " functions=moe_block}" +
                (policy.empty() ? "" : ",");
    if (!policy.empty()) {
      // The budget is auto's to meet; the fixed policies are measured as they are.
      prepare += "moe-generate-backward,func.func(moe-remat{policy=" + policy +
                (policy == "auto" ? " activation-budget=" + std::to_string(activationBudget)
                                  : std::string()) +
                "})";
    }
    // Packed weights for the forward, float or int8 (quantized, then packed,
    // in one prepare function); a shard's program and training keep their
    // form.
    moec::GmmChoices variantGmm = gmm;
    variantGmm.prepareWeights = gmm.prepareWeights && !plan && policy.empty();
    v.program = Compiled::build(blockProgram(c), variantGmm, v.compileS, error, prepare);
    if (!v.program)
      return false;
    if (!policy.empty()) {
      std::optional<RematChoice> remat = v.program->remat("moe_block_forward_backward");
      if (!remat) {
        error = "moe-remat left no decision on @moe_block_forward_backward";
        return false;
      }
      v.remat = *remat;
    }
    variants.push_back(std::move(v));
  }
  return true;
}

/// How the routing `ids` [T, K] loads the experts: rows per expert (least,
/// mean, most), experts with none, real and null assignments.
struct RoutingLoad {
  int64_t min = 0, max = 0, empty = 0, real = 0, nulls = 0;
  double mean = 0;
};
RoutingLoad routingLoad(const moec::Buffer &idsBuffer, int64_t experts) {
  std::vector<int64_t> load(experts, 0);
  RoutingLoad r;
  const int32_t *ids = idsBuffer.as<int32_t>();
  for (int64_t i = 0; i < idsBuffer.numElements(); ++i) {
    if (ids[i] >= 0 && ids[i] < experts)
      ++load[ids[i]], ++r.real;
    else
      ++r.nulls;
  }
  r.min = *std::min_element(load.begin(), load.end());
  r.max = *std::max_element(load.begin(), load.end());
  r.mean = double(r.real) / double(experts);
  r.empty = std::count(load.begin(), load.end(), 0);
  return r;
}

/// --quant-mode: the f32 block (`reference`) on the same inputs (bf16 ones
/// widened exactly), each result's relative error against it printed and
/// kept in `r`.
bool compareWithF32(Compiled &reference, std::map<std::string, moec::Buffer> &pool,
                    const std::string &entry, const std::vector<std::string> &referenceArgs,
                    const std::vector<std::string> &entryResults, Result &r,
                    std::string &error) {
  std::map<std::string, moec::Buffer> widened;
  std::map<std::string, moec::Buffer> &referencePool =
      dtype == moec::FloatType::f32 ? pool : widened;
  if (dtype != moec::FloatType::f32)
    for (const std::string &name : referenceArgs)
      widened[name] = widenToF32(pool[name]);
  std::vector<std::string> referenceResults;
  for (const std::string &name : entryResults)
    referenceResults.push_back("f32_" + name);
  if (reference.call(entry == "moe_block_prepared" ? "moe_block" : entry, referencePool,
                      referenceArgs, referenceResults, error) < 0)
    return false;
  std::string line = "quant: relative error against f32:";
  for (size_t i = 0; i < entryResults.size(); ++i) {
    double err = relativeError(pool[entryResults[i]], referencePool[referenceResults[i]]);
    if (err < 0) {
      error = "--quant-mode: '" + entryResults[i] + "' has another shape than the f32 block's";
      return false;
    }
    r.relErrors.push_back({entryResults[i], err});
    line += formatv(" {0} {1:E3}", entryResults[i], err).str();
    referencePool.erase(referenceResults[i]);
  }
  outs() << line << "\n";
  return true;
}

/// The bytes of the weights a forward call reads: each of `usedExperts`
/// experts' gate/up and down weights (and biases), int8 when --quant-mode
/// makes them so, and the shared expert's (float under int8_routed).
double weightBytesRead(const BlockConfig &c, int64_t usedExperts, const QuantChoice &quant) {
  double floatBytes = c.dtype == moec::FloatType::bf16 ? 2 : 4;
  double expertBytes = quant.realInt8() ? 1 : floatBytes;
  double sharedBytes = quant.realInt8() && !quant.routedOnly() ? 1 : floatBytes;
  double perExpert = 3.0 * c.hidden * c.mlp * expertBytes;
  if (c.layer.expertBias)
    perExpert += (2.0 * c.mlp + c.hidden) * floatBytes;
  double shared = 3.0 * c.hidden * c.shared * sharedBytes;
  if (c.layer.sharedGate && c.shared)
    shared += c.hidden * floatBytes;
  return perExpert * double(usedExperts) + shared;
}

/// The run's settings every result shares, for the JSON.
RunInfo runInfo(double peak, const char *peakKind) {
  RunInfo run;
  run.pass = passName(), run.backend = backendName(), run.dtype = dtypeName();
  run.nullMode = nullModeName(), run.launcher = launcherName();
  run.quant = kQuantRunChoices.name(quantMode).str();
  run.quantWeightScales = mlir::moe::kQuantWeightScalesChoices.name(quantWeightScales).str();
  run.peakKind = peakKind, run.peak = peak;
  run.tokens = tokens, run.hidden = hidden, run.mlp = mlpDim, run.experts = experts;
  run.threads = threads, run.renormalize = renormalizeRealAfterNull;
  return run;
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
  // Every plan over more than one device shards the block, and int8 runs on
  // one: said before the peaks are measured. (dp or ep on a mesh of one
  // device is still a shard's program: the run's own check, after the plan,
  // says it; auto there plans the single device, which runs.)
  if (quantMode != QuantRun::none && parallelMode != moec::ParallelMode::none && !predictOnly) {
    moec::MeshRequest mesh;
    if (std::string why = moec::parseMesh(meshText, mesh); !why.empty())
      return why;
    if ((mesh.given ? mesh.devices() : int64_t(devices)) > 1)
      return "--quant-mode runs the single-device block: int8 on a mesh is not supported yet "
             "(give it without --parallel-mode)";
  }
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
    if (queueMode != QueueMode::full)
      return "--queue-mode prequeue times the forward's stages; use it with --bench-pass forward";
    if (llvm::is_contained(policies, "auto") && activationBudget < 0)
      return "--remat auto needs --activation-budget BYTES";
  }
  for (auto [name, v] : {std::pair{"tokens", int64_t(tokens)}, {"hidden", hidden},
                         {"mlp-dim", mlpDim}, {"experts", experts}})
    if (v <= 0)
      return std::string("--") + name + " must be positive (got " + std::to_string(v) + ")";
  if (sharedDim < 0)
    return "--shared-expert-dim must be >= 0";
  // Given rates replace the measured ones: 0 (the default) measures.
  for (auto [name, value] : {std::pair{"peak-gflops", double(peakOption)},
                             {"read-gbps", double(readGBpsOption)}})
    if (!(value >= 0))
      return std::string("--") + name + " must be a rate >= 0 (0: measure it; got " +
             std::to_string(value) + ")";
  if (!(measuredPeakScale > 0))
    return "--measured-peak-scale must be > 0 (got " + std::to_string(double(measuredPeakScale)) + ")";
  if (!(llcMibOption >= 0))
    return "--llc-mib must be >= 0 (0: the cache Linux describes; got " +
           std::to_string(double(llcMibOption)) + ")";
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
  } else if (prepareWeightsOption && !isTraining()) {
    // The float weights packed once beside them (--prepare-weights): the
    // routed ones in their type, the shared expert's widened to f32 and
    // packed as f32 panels.
    need += double(bytes) * 3.0 * experts * hidden * mlpDim + 8.0 * 3.0 * hidden * sharedDim;
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
  if (std::string why = gmmChoices(gmm); !why.empty())
    return fail(why);
  QuantChoice quant{quantMode, quantWeightScales};
  std::string kindsError;
  std::optional<moec::PeakUnit> unit =
      moec::gmmPeakUnit(gmmStrategy, mlir::moe::TargetAttr(), dtype == moec::FloatType::bf16,
                        quant.realInt8(), kindsError);
  if (!unit)
    return fail(kindsError);
  const char *peakKind = unit->kind, *peakUnitName = unit->unit;
  auto measurePeak = [&] { return unit->measure(threads, 0.3) * measuredPeakScale; };
  double peak = peakOption > 0 ? double(peakOption) : measurePeak();
  // The peak line, each time the run's peak is set, with why.
  auto sayPeak = [&](const char *why) {
    outs() << format("peak: %.1f %s %s, %u threads (%s)\n", peak, peakUnitName, peakKind, unsigned(threads),
                     why);
  };
  // A faster rate of the peak's loop raises the run's peak: the best of the
  // run so far.
  auto raisePeak = [&](double rate, const char *why) {
    if (rate > peak) {
      peak = rate;
      sayPeak(why);
    }
  };
  sayPeak(peakOption > 0 ? "given" : "measured now");
  outs().flush();
  // What bounds a block at decode sizes, where each weight is read about
  // once a call: this machine's DRAM read bandwidth, measured as the peak
  // is, the best of the run so far: before the timed calls of each
  // configuration that reports against it and again after them. The
  // memory is the host's to share: on the 2-core EPYC VM five runs a
  // minute apart measured 52-76 GB/s, and one measured after the calls
  // 33 GB/s while the calls had read 44 (2026-12-06).
  std::optional<double> readGBps; // unset: not yet measured; 0: no buffer to measure with
  if (readGBpsOption > 0)
    readGBps = readGBpsOption;
  auto measureBandwidth = [&] {
    if (readGBpsOption > 0 || (readGBps && *readGBps <= 0))
      return;
    double now = moec::measureReadGBps(threads);
    if (!readGBps && now <= 0) {
      readGBps = 0;
      outs() << "bandwidth: not measured (its buffer could not be allocated)\n";
    } else if (!readGBps || now > *readGBps) {
      outs() << format("bandwidth: %.1f GB/s DRAM read, %u threads (measured %s)\n", now,
                       unsigned(threads), readGBps ? "again, higher" : "now");
      readGBps = now;
    }
  };
  // Whether this configuration's calls have been followed by a measurement.
  bool bandwidthAfterCalls = false;
  auto readBandwidth = [&] {
    if (!bandwidthAfterCalls) {
      measureBandwidth();
      bandwidthAfterCalls = true;
    }
    return *readGBps;
  };
  const moec::LastLevelCache cache = llcMibOption > 0
                                         ? moec::LastLevelCache{double(llcMibOption) * 1048576.0, false}
                                         : moec::lastLevelCache();
  const double cacheBytes = cache.bytes;
  // Weights counted as cached by glibc's size (which a VM may overstate)
  // are said to be, once, rather than left out silently.
  bool saidGlibcCache = false;

  // The plan: one device, or a mesh of shards (docs/sharding.md), chosen
  // by the flags or, with auto, by the cost model.
  Machine machine;
  if (std::string why = machineFor(peak, peakKind, peakUnitName, machine); !why.empty())
    return fail(why);
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
  Plan plan;
  moec::ParallelMode mode = predictOnly ? moec::ParallelMode::automatic : parallelMode.getValue();
  if (std::string why = moec::choosePlan(mode, epDispatch, mesh, devices,
                                         workloadFor(ks.front(), fractions.front()), machine, plan);
      !why.empty())
    return fail(why);
  bool sharded = plan.mode != "none";
  // Which runs report their weights' rate (and the cache line when the
  // weights fit): a forward on one device, timed in full.
  auto reportsWeightRate = [&](llvm::StringRef mode) { return !isTraining() && !sharded && mode == "full"; };
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
  moec::MpiRank mpi;
  if (launcher == moec::Launcher::mpi) {
    std::string error;
    mpi = moec::startMpiRank(moec::meshShape(plan), moec::planMesh(plan),
                             std::chrono::milliseconds(collectiveTimeout), error);
    if (!mpi)
      return fail(error);
    // Every rank benchmarks the same block the same way: its inputs come
    // from the options (--seed), so the command lines must agree, and the
    // plan (auto measures each rank's host apart).
    if (std::string why = moec::agreeOnRun(*mpi, rawArgs, {"plan " + plan.str()});
        !why.empty())
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
    if (std::string why = configFor(k, nullFraction, c); !why.empty())
      return fail(why);
    std::string error;

    // The table's key is the gmm shape, the same for every top-k: tuned once,
    // on the first top-k's group sizes.
    if (tune && k == ks.front() && nullFraction == fractions.front()) {
      TuneRequest request{c, gmm.tuningTable, threads, seed};
      if (!tuneGmmTiles(request, error))
        return fail(error);
    }

    // Weights and tokens, shared by the distributions (Inputs.h).
    BlockInputs inputs = makeBlockInputs(c, seed);
    std::map<std::string, moec::Buffer> &pool = inputs.pool;
    const std::vector<std::string> &weightNames = inputs.weights;
    const std::vector<std::string> &expertWeights = inputs.expertWeights;

    double stageCompileS = 0, routeCompileS = 0;
    moec::GmmChoices unprepared = gmm; // programs nobody times as a host would run them
    unprepared.prepareWeights = false;
    auto route = Compiled::build(routeProgram(c), unprepared, routeCompileS, error);
    if (!route)
      return fail(error);
    // The block, or its forward_backward under each remat policy.
    std::vector<Variant> variants;
    if (!compileVariants(c, gmm, policies, quant, sharded ? &plan : nullptr, variants, error))
      return fail(error);
    double compileS = variants.front().compileS;
    // --stage-timing: each variant again with stage timers, timed inside
    // (StageTable.h); the timed programs carry no marks.
    std::vector<Variant> stagedVariants;
    if (stageTiming) {
      moec::GmmChoices timers = gmm;
      timers.stageTimers = true;
      if (!compileVariants(c, timers, policies, quant, nullptr, stagedVariants, error))
        return fail(error);
    }
    // --quant-mode: the f32 block (or its forward_backward), the reference
    // the outputs are compared with.
    std::unique_ptr<Compiled> reference;
    if (quant.enabled()) {
      BlockConfig f32 = c;
      f32.dtype = moec::FloatType::f32;
      double referenceCompileS = 0;
      reference = Compiled::build(blockProgram(f32), unprepared, referenceCompileS, error,
                                  isTraining() ? "moe-generate-backward" : "");
      if (!reference)
        return fail(error);
    }
    std::unique_ptr<Compiled> stages;
    bool needStages = (stageTiming && !isTraining()) || queueMode != QueueMode::full;
    if (needStages && !(stages = Compiled::build(stageProgram(c), gmm, stageCompileS, error,
                                                 quant.enabled() ? quant.pipeline(false) : "")))
      return fail(error);

    // Measured again before each configuration: the best of the run so far
    // (a shared machine's slow moment must not flatter the generated code).
    if (peakOption <= 0)
      raisePeak(measurePeak(), "measured again, higher");
    // So is the read bandwidth, for a forward that may report against it
    // below: timed in full, its weights beyond the last-level cache (all
    // its experts counted: which ones its routing uses is known only after
    // the calls).
    bandwidthAfterCalls = false;
    if (llvm::any_of(modes, reportsWeightRate) && weightBytesRead(c, c.experts, quant) > cacheBytes)
      measureBandwidth();
    for (const std::string &dist : dists) {
      pool["logits"] = makeLogits(dist, c.tokens, c.experts, seed, k);
      std::vector<std::string> routeArgs = {"logits"};
      if (c.layer.selectionBias)
        routeArgs.push_back("sb");
      if (c.nullRouting()) {
        pool["draws"] = makeNullDraws(c.tokens, k, seed);
        routeArgs.push_back("draws");
      }
      if (route->call("route", pool, routeArgs, {"ids", "w"}, error) < 0)
        return fail(error);
      // Load statistics from the routing the block computes.
      RoutingLoad load = routingLoad(pool["ids"], c.experts);
      int64_t real = load.real, nulls = load.nulls;
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
                       (long long)load.min, load.mean, (long long)load.max,
                       load.mean > 0 ? load.max / load.mean : 0.0, (long long)load.empty);

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
      for (size_t v = 0; v < variants.size(); ++v)
      for (const std::string &mode : modes) {
        const Variant &variant = variants[v];
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
        std::vector<std::string> prepared; // the prepared weights' names
        std::string prequeueEntry = "prequeued";
        if (mode == "prequeue") {
          if (stages->call("pack", pool, {"x", "ids", "w"}, {"sw", "perm", "sizes"}, error) < 0 ||
              stages->call("gather", pool, {"x", "perm"}, {"rows"}, error) < 0)
            return fail(error);
          // Its weights prepared once too, as the full mode's are: the
          // timed calls pack (and quantize) none.
          if (const moec::PreparedForm *form = stages->preparedForm(prequeueEntry)) {
            std::vector<std::string> preparedArgs;
            double s = stages->prepareWeights(prequeueEntry, pool, preArgs, "prequeued_p", preparedArgs,
                                              prepared, error);
            if (s < 0)
              return fail(error);
            outs() << format("prepare: the prequeued block's weights prepared once in %.1f ms; the timed "
                             "calls pack none\n",
                             s * 1e3);
            prequeueEntry = form->prepared;
            preArgs = preparedArgs;
          }
        }
        const std::string blockEntry = training ? "moe_block_forward_backward" : "moe_block";
        std::string entry = blockEntry;
        std::vector<std::string> entryResults = training ? fbResults : std::vector<std::string>{"y"};
        std::vector<std::string> referenceArgs = blockArgs;
        if (!training && mode == "full" && block->preparedForm(entry)) {
          // Once, as a host loading the weights would: the timed calls run
          // @moe_block_prepared on the int8 weights and scales, or on the
          // weights packed in the kernels' layout.
          std::vector<std::string> preparedArgs;
          double s = block->prepareWeights(entry, pool, blockArgs, "prepared", preparedArgs, prepared, error);
          if (s < 0)
            return fail(error);
          double floatBytes = 0, preparedBytes = 0;
          for (int64_t i : block->preparedForm(entry)->weightArgs)
            floatBytes += pool[blockArgs[i]].numBytes();
          for (const std::string &q : prepared)
            preparedBytes += pool[q].numBytes();
          if (quant.enabled())
            outs() << format("quant: mode=%s weight_scales=%s; weights quantized once in %.1f ms "
                             "(%.1f MiB -> %.1f MiB with scales)%s\n",
                             quant.modeName().c_str(), quant.scalesName().c_str(), s * 1e3,
                             floatBytes / 1048576.0, preparedBytes / 1048576.0,
                             block->preparePacks(entry) ? ", packed for the kernels: the timed calls pack none"
                                                        : "");
          else
            outs() << format("prepare: weights packed once in %.1f ms for the kernels (%.1f MiB -> %.1f MiB); "
                             "the timed calls pack none\n",
                             s * 1e3, floatBytes / 1048576.0, preparedBytes / 1048576.0);
          entry = block->preparedForm(entry)->prepared;
          blockArgs = preparedArgs;
        } else if (quant.enabled() && !training && mode == "full") {
          return fail("moe-quantize left no @moe_block_prepare_weights");
        }
        // Sharded: each rank's times and the last call's counters.
        std::vector<std::vector<double>> rankTimes;
        std::vector<moec::RankStats> rankStats;
        // The hypervisor's steal over the timed calls (CpuSteal.h), each
        // call's window summed: not over the probes between them.
        moec::CpuTicks callTicks;
        bool ticksRead = true;
        std::vector<double> callSteals;
        // The cores' own speed after each timed call (CoreSpeed.h): the
        // peak's loop on the calls' threads, outside the calls' time. After
        // the warm-up calls too, so that every timed call follows a probe.
        // Not for sharded runs: in-process shards run teams of their own
        // (the probe's would be a shard's share of the threads, against
        // all of them), MPI ranks on one host would probe at once; nor
        // against a given peak, whose share says nothing of the host.
        bool probes = coreProbe && unit->loop && !sharded && peakOption <= 0;
        std::vector<double> coreRates;
        double bestProbe = 0;
        for (int i = 0; i < warmup + iters; ++i) {
          bool timed = i >= warmup;
          std::optional<moec::CpuTicks> ticksBefore;
          if (timed)
            ticksBefore = moec::readCpuTicks();
          double s = sharded ? block->callSharded(entry, pool, blockArgs, entryResults, mpiComm,
                                                  std::chrono::milliseconds(collectiveTimeout),
                                                  rankStats, error)
                     : mode == "full" || training
                         ? block->call(entry, pool, blockArgs, entryResults, error)
                         : stages->call(prequeueEntry, pool, preArgs, {"y"}, error);
          if (s < 0)
            return fail(error);
          if (timed) {
            std::optional<moec::CpuTicks> ticksAfter = moec::readCpuTicks();
            ticksRead = ticksRead && ticksBefore && ticksAfter &&
                        moec::addWindow(callTicks, *ticksBefore, *ticksAfter);
            // Each call's own, to tell which calls the host slowed (in
            // 0.01 s ticks: seconds-long calls only).
            if (ticksRead) {
              if (std::optional<moec::Steal> steal = moec::stealBetween(*ticksBefore, *ticksAfter))
                callSteals.push_back(steal->seconds);
              else
                ticksRead = false;
            }
          }
          if (probes) {
            double rate = moec::probeCores(unit->loop());
            bestProbe = std::max(bestProbe, rate);
            if (timed)
              coreRates.push_back(rate);
          }
          if (timed) {
            times.push_back(s);
            rankTimes.resize(rankStats.size());
            for (size_t rk = 0; rk < rankStats.size(); ++rk)
              rankTimes[rk].push_back(rankStats[rk].seconds);
          }
        }
        Result r;
        if (ticksRead) {
          r.steal = moec::stealBetween(moec::CpuTicks{}, callTicks);
          r.callSteals = callSteals;
        }
        r.callSeconds = times;
        if (quant.enabled() && !compareWithF32(*reference, pool, entry, referenceArgs, entryResults,
                                               r, error))
          return fail(error);
        for (const std::string &q : prepared)
          pool.erase(q);
        pool.erase("rows");
        for (const std::string &name : fbResults)
          pool.erase(name);
        // A probe is the peak's loop on the calls' threads: one faster than
        // the peak shows that the peak was measured in a slow moment of a
        // shared host (its attempts of 0.3 s read 220-234 GFLOP/s FP32 on
        // the AMD EPYC znver4 VM from one attempt to the next). So that the
        // quoted peak is at least every rate its loop was measured at, it
        // rises to the probe, the best of the run so far as a peak measured
        // again is, before this configuration's shares are taken of it.
        raisePeak(bestProbe, "the cores' probe between the calls, higher");
        double med = moec::medianOf(times);
        r.distribution = dist, r.mode = mode, r.impl = implName(), r.k = k;
        r.family = c.layer.family, r.shared = c.shared;
        r.remat = variant.policy, r.keptBytes = variant.remat.keptBytes;
        r.recomputedFlops = variant.remat.recomputedFlops;
        r.realAssignments = real, r.nullAssignments = nulls, r.seconds = med;
        r.nullTarget = std::max(0.0, nullFraction);
        r.tflops = flops / med / 1e12, r.tokensPerS = c.tokens / med;
        r.peak = peak, r.peakPct = 100 * flops / med / 1e9 / peak, r.compileS = variant.compileS;
        // In the peak's unit: GOP/s for an int8 block's integer products.
        outs() << format("time: median %.2f ms min %.2f ms max %.2f ms over %d runs; "
                         "%.1f %s, %.1f%% of peak\n",
                         med * 1e3, *std::min_element(times.begin(), times.end()) * 1e3,
                         *std::max_element(times.begin(), times.end()) * 1e3, int(iters),
                         flops / med / 1e9, peakUnitName, r.peakPct);
        if (r.steal) {
          outs() << format("steal: %.2f s of CPU time held back by the hypervisor over the timed calls",
                           r.steal->seconds);
          if (r.steal->sharePct)
            outs() << format(", %.1f%% of the machine's CPU time (/proc/stat)\n", *r.steal->sharePct);
          else
            outs() << " (/proc/stat; under 1 s of the machine's CPU time, too short for a share at "
                      "its 0.01 s ticks)\n";
        }
        r.coreSpeed = moec::coreSpeedOf(coreRates, peak);
        if (r.coreSpeed) {
          outs() << format("cores: the peak's %s loop after each timed call ran at %.1f%% of the peak "
                           "(median; %.1f-%.1f%%): the cores' own speed over the calls (well under "
                           "100%%: slower than the fastest measured in the run so far)\n",
                           peakKind, r.coreSpeed->medianPct, r.coreSpeed->minPct, r.coreSpeed->maxPct);
        }
        // The forward reads each used expert's weights (and the shared
        // expert's) once a call: their bytes over the time, against the
        // DRAM read bandwidth.
        // Weights that fit in the last-level cache are not read from DRAM
        // again each call: no bound to report.
        double bytes = weightBytesRead(c, c.experts - load.empty, quant);
        if (reportsWeightRate(mode) && bytes > cacheBytes && readBandwidth() > 0) {
          r.weightGBps = bytes / med / 1e9;
          r.readBandwidthPct = 100 * r.weightGBps / *readGBps;
          outs() << format("weights: %.2f MiB read per call (%lld of %lld experts), %.1f GB/s, "
                           "%.1f%% of the DRAM read bandwidth\n",
                           bytes / 1048576.0, (long long)(c.experts - load.empty),
                           (long long)c.experts, r.weightGBps, r.readBandwidthPct);
          // Quoted as an upper bound too: above it, the bandwidth was
          // measured on a busy moment (or the weights sat in a cache).
          if (r.readBandwidthPct > 100)
            outs() << format("warning: %.1f%% of the DRAM read bandwidth: that bandwidth (%.1f GB/s, "
                             "%s) is no upper bound; %s\n",
                             r.readBandwidthPct, *readGBps, readGBpsOption > 0 ? "given" : "measured",
                             readGBpsOption > 0 ? "give the machine's real one to --read-gbps"
                                                : "measure on a quiet host, or give --llc-mib if the "
                                                  "weights fit in a cache");
        } else if (reportsWeightRate(mode) && bytes <= cacheBytes && cache.fromGlibc &&
                   !saidGlibcCache) {
          saidGlibcCache = true;
          outs() << format("cache: weights of %.2f MiB a call fit in the %.0f MiB last-level "
                           "cache glibc describes, so no share of the DRAM read bandwidth is "
                           "quoted (Linux describes none, and a VM may describe more than it "
                           "has: --llc-mib gives the real size)\n",
                           bytes / 1048576.0, cacheBytes / 1048576.0);
        }
        // The peak is quoted as an upper bound: above it, the peak loop ran
        // on a busy moment (or the count of FLOPs is wrong).
        if (r.peakPct > 100)
          outs() << format("warning: %.1f%% of the %s peak: that peak (%.1f %s, %s) is no "
                           "upper bound; %s\n",
                           r.peakPct, peakKind, peak, peakUnitName,
                           peakOption > 0 ? "given" : "measured",
                           peakOption > 0 ? "give the unit's real peak to --peak-gflops"
                                          : "measure on a quiet host");

        if (!sharded && mode == "full") {
          Machine atPeak = machineAtPeak(machine, peak, peakKind);
          sayPrediction(moec::predict(workloadFor(k, nullFraction), plan, atPeak), med, atPeak);
        }
        if (sharded)
          reportShards(c, plan, workloadFor(k, nullFraction),
                       machineAtPeak(machine, peak, peakKind), *block->layout(entry),
                       pool["ids"].as<int32_t>(), rankStats, rankTimes, training, med, r);

        if (stageTiming && mode == "full" && !training &&
            !timeStages(c, quant, *stages, *route, pool, expertWeights, routeArgs, real, med,
                        peak, peakUnitName, r, error))
          return fail(error);
        if (stageTiming && mode == "full" &&
            !timeInside(*stagedVariants[v].program, blockEntry, pool, referenceArgs, entryResults, r,
                        error))
          return fail(error);
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
        // Last: the fields before keep their order for the parsers of RESULT lines.
        if (r.weightGBps > 0)
          rematFields += formatv(" weight_gbps={0:F2} read_bandwidth_pct={1:F1}", r.weightGBps,
                                 r.readBandwidthPct)
                             .str();
        if (r.steal && r.steal->sharePct)
          rematFields += formatv(" steal_pct={0:F1}", *r.steal->sharePct).str();
        if (r.coreSpeed)
          rematFields += formatv(" core_pct={0:F1} core_rate={1:F1}", r.coreSpeed->medianPct,
                                 r.coreSpeed->medianRate)
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
      !jsonFile.empty() &&
      !moec::writeFileAtomically(jsonFile, resultsJson(runInfo(peak, peakKind), results), error))
    return fail(error);
  return 0;
}
