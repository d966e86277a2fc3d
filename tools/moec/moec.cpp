//===- moec.cpp - the moe compiler driver ---------------------------------===//
//
//   moec FILE.mlir -o OUT [--emit=mlir|llvm|asm|obj|so] [--pass-pipeline=P]
//   moec run FILE.mlir [--entry F] [--input A.npy]... [--random-inputs]
//            [--seed N] [--dim N] [--iters N] [--output-dir DIR]
//
// Compile: the kind of output follows --emit, or else OUT's extension (.mlir,
// .ll, .s, .o, .so). Outputs are written to a temporary file next to OUT and
// renamed into place, so a failure leaves nothing behind.
// Run: JIT-compiles, binds the inputs in argument order, runs, and writes
// result i to DIR/out<i>.npy; prints each result's shape and checksum, and the
// median time of the runs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "strategy/GmmTiling.h"
#include "strategy/GmmStrategy.h"
#include "strategy/TargetCpu.h"
#include "dialect/ParserGuard.h"
#include "frontend/HfBlock.h"
#include "compiler/ShardedCall.h"
#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"
#include "passes/Remat.h"
#include "tooling/AutoParallel.h"
#include "tooling/LoadProgram.h"
#include "tooling/ProgramOptions.h"
#include "tooling/RunLauncher.h"
#include "tooling/RunReport.h"
#include "tooling/ToolChoices.h"

#include "llvm/Support/MemoryBuffer.h"

#include <malloc.h>
#include "runtime/Invoke.h"
#include "runtime/AtomicFile.h"
#include "runtime/CpuFeatures.h"
#include "runtime/MemoryGuard.h"
#include "runtime/Npy.h"
#include "runtime/HfLayer.h"
#include "runtime/Safetensors.h"
#include "runtime/ShardComm.h"
#include "runtime/ShardedRun.h"
#include "runtime/ThreadLimit.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/Timing.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <unistd.h>

using namespace llvm;
using namespace moec;

namespace {
/// The layer --hf-config describes (its weights bind at run time).
std::optional<HfLayer> hfBlock;

// moec's own options: --help lists these and a few of MLIR's pass-manager
// options (--mlir-print-ir-*, --mlir-timing, --mlir-pass-statistics), not
// the hundreds LLVM's libraries register.
cl::OptionCategory moecCategory("moec options");

cl::SubCommand runCommand("run", "JIT-compile a function, run it on .npy or random inputs");

// Shared by both forms.
cl::opt<std::string> inputFile(cl::cat(moecCategory), cl::Positional, cl::desc("<input .mlir>"),
                               cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
// The front end from a Hugging Face model instead of a .mlir file.
cl::opt<std::string> hfConfig(cl::cat(moecCategory), 
    "hf-config",
    cl::desc("Compile the MoE block of a Hugging Face model's layer (its config.json; "
             "with --layer) instead of a .mlir file: @moe_block(x, weights...)"),
    cl::value_desc("config.json"), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<int64_t> hfLayer(cl::cat(moecCategory), "layer",
                         cl::desc("With --hf-config: the layer (default: the first MoE layer)"),
                         cl::init(kFirstMoeLayer), cl::sub(cl::SubCommand::getTopLevel()),
                         cl::sub(runCommand));
cl::opt<FloatType> hfDtype(cl::cat(moecCategory), "dtype",
                          cl::desc("With --hf-config: the activations' and weights' type "
                                   "(checkpoint tensors are converted):"),
                          kFloatTypeChoices.values(), cl::init(FloatType::bf16),
                          cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<std::string> hfWeights(cl::cat(moecCategory), 
    "weights",
    cl::desc("moec run --hf-config: the checkpoint (model.safetensors, its "
             "model.safetensors.index.json, or their directory) whose layer weights bind to "
             "the block's arguments when loaded"),
    cl::value_desc("path"), cl::sub(runCommand));
cl::opt<std::string> passPipeline(cl::cat(moecCategory), 
    "pass-pipeline",
    cl::desc("Pipeline to run instead of moe-to-llvm, e.g. "
             "'moe-expand-block,moe-to-llvm' (nested under builtin.module)"),
    cl::init(""), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));

// Given or not (getNumOccurrences): without it, no backward.
cl::opt<mlir::moe::BackwardLoss> backward(cl::cat(moecCategory), 
    "backward",
    cl::desc("Add <f>_forward_backward for each block function first (moe-generate-backward):"),
    mlir::moe::kBackwardLossChoices.values(), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(runCommand));

cl::opt<bool> routingGrad(cl::cat(moecCategory), 
    "routing-grad",
    cl::desc("With --backward: differentiate through the routing weights and the router, so "
             "the logits (or the router weight) get a gradient (default: routing fixed)"),
    cl::init(false), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));

cl::opt<mlir::moe::RematPolicy> remat(cl::cat(moecCategory), 
    "remat",
    cl::desc("With --backward: what the backward recomputes instead of keeping (moe-remat):"),
    mlir::moe::kRematPolicyChoices.values(), cl::init(mlir::moe::RematPolicy::none),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
// Given or not (getNumOccurrences): no value stands for "none".
cl::opt<int64_t> activationBudget(cl::cat(moecCategory), "activation-budget",
    cl::desc("With --backward: bytes the backward may keep from the forward (auto picks "
             "under it; a fixed --remat policy is checked against it)"),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));

cl::opt<mlir::moe::strategy::GmmStrategy> gmmStrategy(cl::cat(moecCategory), 
    "gmm-strategy", cl::desc("Which kernel kinds moe.gmm may use (moe-select-lowering):"),
    mlir::moe::strategy::kGmmStrategyChoices.values(), cl::init(mlir::moe::strategy::GmmStrategy::microkernel),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<std::string> gmmTiling(cl::cat(moecCategory), 
    "gmm-tiling", cl::desc("gmm tiles for every gmm, e.g. mr=6,nv=4,kc=256,nc=256,mc=192 "
                           "(default: the tuning table's line for the shape, else the "
                           "cost model)"),
    cl::init(""), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<std::string> tuningTable(cl::cat(moecCategory), 
    "tuning-table", cl::desc("Tuning table written by moe-bench --tune (default: "
                             "$MOEC_TUNING_TABLE if set)"),
    cl::init(""), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));

cl::opt<std::string> targetCpu(cl::cat(moecCategory), 
    "target-cpu",
    cl::desc("Compile for this CPU (an LLVM x86 CPU name: skylake-avx512, sapphirerapids, "
             "znver3, x86-64-v3, ...) instead of this host: a library to run on another "
             "machine, which refuses to load on a CPU without the extensions it was compiled "
             "for. `moec run` refuses a CPU this host cannot stand in for"),
    cl::init(""), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));

cl::opt<std::string> meshOption(cl::cat(moecCategory), 
    "mesh",
    cl::desc("Partition each block function for this mesh first (moe-partition), e.g. "
             "data=2, expert=2 or data=2,expert=2; `moec run` then runs every shard"),
    cl::init(""), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<mlir::moe::EpDispatch> epDispatch(cl::cat(moecCategory), 
    "ep-dispatch",
    cl::desc("With --mesh and an expert axis, how the expert shards exchange rows:"),
    mlir::moe::kEpDispatchChoices.values(), cl::init(mlir::moe::EpDispatch::compact),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<double> capacityFactor(cl::cat(moecCategory), 
    "capacity-factor",
    cl::desc("With --mesh: compact/a2a buffer rows = cf x the fair share (default 0: room "
             "for every row)"),
    cl::init(0), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<int64_t> capacityRound(cl::cat(moecCategory), 
    "capacity-round", cl::desc("With --capacity-factor: round capacities up to a multiple"),
    cl::init(1), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));

cl::opt<ParallelMode> parallelMode(cl::cat(moecCategory),
    "parallel-mode",
    cl::desc("Partition the block for a plan over --mesh's devices (else #moe.target's "
             "threads, --threads or the cores):"),
    kParallelModeChoices.values(), cl::init(ParallelMode::none),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
ProgramOptions programOptions() {
  ProgramOptions o;
  o.mesh = meshOption;
  o.epDispatch = epDispatch;
  o.capacityFactor = capacityFactor;
  o.capacityRound = capacityRound;
  if (backward.getNumOccurrences())
    o.backward = backward.getValue();
  o.routingGrad = routingGrad;
  o.remat = remat;
  if (activationBudget.getNumOccurrences())
    o.activationBudget = activationBudget;
  return o;
}

GmmChoices gmmChoices() {
  GmmChoices choices;
  choices.strategy = gmmStrategy;
  choices.tiling = gmmTiling;
  choices.tuningTable = tuningTable;
  if (choices.tuningTable.empty())
    if (const char *env = std::getenv("MOEC_TUNING_TABLE"))
      choices.tuningTable = env;
  return choices;
}

// Compile.
cl::opt<std::string> outputFile(cl::cat(moecCategory), "o", cl::desc("Output file"), cl::value_desc("path"));
cl::opt<std::string> emit(cl::cat(moecCategory), "emit", cl::desc("What to write: mlir, llvm, asm, obj or so "
                                           "(default: from the -o extension: .mlir, .ll, "
                                           ".s, .so; an object for any other)"),
                          cl::init(""));

// Run.
cl::opt<std::string> entry(cl::cat(moecCategory), "entry", cl::desc("Function to run (default: the only public one, not counting the prepared halves <f>_prepare_weights and <f>_prepared)"),
                           cl::init(""), cl::sub(runCommand));
cl::list<std::string> inputs(cl::cat(moecCategory), "input", cl::desc("An .npy file per argument, in order"),
                             cl::sub(runCommand));
cl::opt<bool> randomInputs(cl::cat(moecCategory), "random-inputs", cl::desc("Run on random inputs"),
                           cl::sub(runCommand));
cl::opt<unsigned> seed(cl::cat(moecCategory), "seed", cl::desc("Seed of the random inputs"), cl::init(0),
                       cl::sub(runCommand));
cl::opt<int64_t> dynamicSize(cl::cat(moecCategory), "dim", cl::desc("Size of every dynamic dimension of random inputs"),
                             cl::init(256), cl::sub(runCommand));
cl::opt<unsigned> threads(cl::cat(moecCategory), "threads",
                          cl::desc("Threads for the parallel loops (default: OMP_NUM_THREADS, "
                                   "else every core)"),
                          cl::init(0), cl::sub(runCommand));
cl::opt<unsigned> iters(cl::cat(moecCategory), "iters", cl::desc("Times to run (the median time is printed)"),
                        cl::init(1), cl::sub(runCommand));
cl::opt<bool> prepareWeightsBeforeRuns(
    cl::cat(moecCategory), "prepare-weights",
    cl::desc("Pack the gmm weights into the kernels' layout once, before the runs "
             "(<f>_prepare_weights, moe-prepare-weights), and time <f>_prepared, as a host that "
             "loads the weights once does; =false runs <f>, which packs them per call. "
             "With -o lib.so, the library gets both halves beside <f> (Library::prepare)"),
    cl::init(true), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
cl::opt<std::string> outputDir(cl::cat(moecCategory), "output-dir", cl::desc("Directory for out<i>.npy"),
                               cl::init(""), cl::sub(runCommand));
cl::opt<Launcher> launcher(cl::cat(moecCategory), "launcher",
                           cl::desc("How a per-shard program's shards run:"),
                           kLauncherChoices.values(), cl::init(Launcher::inprocess),
                           cl::sub(runCommand));
cl::opt<unsigned> collectiveTimeout(cl::cat(moecCategory), 
    "collective-timeout-ms",
    cl::desc("How long a shard waits in a collective for its peers before the run fails"),
    cl::init(60000), cl::sub(runCommand));

cl::opt<bool> memoryReport(cl::cat(moecCategory), "memory-report",
                           cl::desc("Print each entry's memory plan (moe-plan-buffers); "
                                    "moec run always does"),
                           cl::sub(cl::SubCommand::getTopLevel()));

/// A /proc/self/status field in bytes ("VmRSS", "VmHWM"); -1 if unreadable.
int64_t statusBytes(StringRef field) {
  // Read as a stream: /proc files report a size of 0.
  auto file = MemoryBuffer::getFileAsStream("/proc/self/status");
  if (!file)
    return -1;
  SmallVector<StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (StringRef line : lines) {
    if (!line.consume_front(field) || !line.consume_front(":"))
      continue;
    StringRef value = line.trim();
    int64_t kib;
    if (value.consume_back("kB") && !value.trim().getAsInteger(10, kib))
      return kib * 1024;
  }
  return -1;
}

/// Resets the process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0).
bool resetPeakRss() {
  std::error_code ec;
  raw_fd_ostream os("/proc/self/clear_refs", ec);
  if (ec)
    return false;
  os << "5";
  os.close();
  return !os.has_error();
}

/// What every rank of an MPI run must agree on: the command line and the
/// program's text.
std::vector<std::string> commandLine;
uint64_t programHash = 0;

/// moec's failure (tooling/RunLauncher.h: under MPI it ends every rank).
int fail(const std::string &message) { return failRun(message); }

/// The linker turns an object into a shared library; the system compiler
/// driver knows the platform's crt files and libm.
bool linkSharedLibrary(StringRef object, StringRef output, std::string &error) {
  auto cc = sys::findProgramByName("cc");
  if (!cc) {
    error = "no 'cc' on PATH to link a shared library (install gcc)";
    return false;
  }
  // The generated parallel loops call libomp; the rpath lets the library
  // find it without LD_LIBRARY_PATH.
  std::string libDir = "-L" + openMPLibraryDir();
  std::string rpath = "-Wl,-rpath," + openMPLibraryDir();
  SmallVector<StringRef> args = {*cc, "-shared", "-o", output, object, libDir, rpath, "-lomp", "-lm"};
  std::string builtins = compilerRtBuiltins();
  if (!builtins.empty())
    args.push_back(builtins);
  // The linker's complaints become part of moec's one error line.
  auto complaints = moec::AnonymousFile::createTemporary(error);
  if (!complaints)
    return false;
  std::string complaintsPath = complaints->procPath();
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt, StringRef(complaintsPath)};
  std::string message;
  int rc = sys::ExecuteAndWait(*cc, args, std::nullopt, redirects, 0, 0, &message);
  if (rc != 0) {
    SmallVector<StringRef> lines;
    std::string said = complaints->contents();
    StringRef(said).split(lines, '\n', -1, /*KeepEmpty=*/false);
    // collect2's "ld returned 1 exit status" says nothing the ld line does not.
    std::string why;
    for (StringRef line : lines)
      if (!line.contains("ld returned"))
        why += (why.empty() ? "" : "; ") + line.trim().str();
    if (why.empty())
      why = message.empty() ? "exit status " + std::to_string(rc) : message;
    error = "linking " + outputFile + " failed: " + why;
    return false;
  }
  // A linker that succeeds with warnings still says them.
  errs() << complaints->contents();
  return true;
}

std::string emitKind() {
  if (!emit.empty())
    return emit;
  StringRef ext = sys::path::extension(outputFile);
  if (ext == ".mlir")
    return "mlir";
  if (ext == ".ll")
    return "llvm";
  if (ext == ".s")
    return "asm";
  if (ext == ".so")
    return "so";
  return "obj";
}

int compile(mlir::ModuleOp module) {
  std::string kind = emitKind(); // checked by checkOptions
  // A library gets each function's prepared form too (one device,
  // moe-to-llvm): a host packs the weights once with Library::prepare.
  std::vector<PreparedForm> preparedForms;
  if (kind == "so" && prepareWeightsBeforeRuns && passPipeline.empty()) {
    std::vector<std::string> ignored;
    std::vector<FunctionSignature> functions = entrySignatures(module, ignored);
    if (mlir::failed(prepareWeights(module, gmmChoices())))
      return 1;
    for (const FunctionSignature &f : functions) {
      std::string error;
      if (std::optional<PreparedHalves> halves = preparedHalves(module, f, error))
        preparedForms.push_back(halves->form);
      else if (!error.empty())
        return fail(error);
    }
  }
  std::vector<std::string> skipped;
  std::vector<FunctionSignature> entries = entrySignatures(module, skipped);
  if (kind == "so")
    for (const std::string &why : skipped)
      errs() << "moec: note: not an entry point of the library: " << why << "\n";
  if (mlir::failed(lowerModule(module, passPipeline, gmmChoices())))
    return 1;
  if (memoryReport)
    for (const FunctionSignature &sig : entries)
      if (std::optional<MemoryPlan> plan = memoryPlan(module, sig.name))
        outs() << "memory: @" << sig.name << ": " << describeMemoryPlan(*plan) << "\n";
  std::string error, bytes;
  raw_string_ostream os(bytes);
  if (kind == "mlir") {
    module.print(os);
    return moec::writeFileAtomically(outputFile, bytes, error) ? 0 : fail(error);
  }
  auto tm = hostTargetMachine(error);
  if (!tm)
    return fail(error);
  LLVMContext llvmContext;
  auto llvmModule = translateAndOptimize(module, llvmContext, *tm, entries, error, preparedForms);
  if (!llvmModule)
    return fail(error);
  if (kind == "llvm") {
    llvmModule->print(os, nullptr);
    return moec::writeFileAtomically(outputFile, bytes, error) ? 0 : fail(error);
  }
  SmallVector<char> code;
  if (!emitMachineCode(*llvmModule, *tm, kind == "asm", code, error))
    return fail(error);
  StringRef text(code.data(), code.size());
  if (kind != "so")
    return moec::writeFileAtomically(outputFile, text.str(), error) ? 0 : fail(error);
  // The object and the library the linker writes are unnamed files
  // (runtime/AtomicFile.h), reached by the linker through /proc: a moec or
  // linker killed meanwhile leaves neither, and the library gets its name
  // only when whole.
  auto object = moec::AnonymousFile::createTemporary(error);
  if (!object)
    return fail("cannot make a temporary object file: " + error);
  if (!object->append(text.str(), error))
    return fail("cannot write the temporary object file: " + error);
  auto library = moec::PendingOutput::create(outputFile, error);
  if (!library)
    return fail(error);
  if (!linkSharedLibrary(object->procPath(), library->procPath(), error))
    return fail(error);
  return moec::publishOutputs({library.get()}, error) ? 0 : fail(error);
}

/// Why the run would not fit in the memory available now (the inputs are
/// already in it), or "": each call's planned peak, on every shard this
/// process runs, and the shards' copies of the inputs (a block that shares
/// its input's memory costs none: runtime/ShardedRun.h). Buffers of dynamic
/// size are not in the plan; the JIT's allocation guard
/// (runtime/MemoryGuard.h) refuses those when they are asked for.
std::string memoryRefusal(const std::optional<MemoryPlan> &plan, const std::vector<Buffer> &args,
                          const std::optional<MeshLayout> &layout, bool mpi) {
  int64_t localShards = layout && !mpi ? layout->ranks() : 1;
  uint64_t perCall = plan ? uint64_t(plan->plannedPeak()) : 0;
  uint64_t copies = 0;
  if (layout)
    for (size_t i = 0; i < args.size() && i < layout->inputs.size(); ++i) {
      if (blockSharesMemory(args[i].shape(), layout->inputs[i], *layout))
        continue;
      uint64_t block = args[i].numBytes();
      for (size_t d = 0; d < args[i].shape().size(); ++d)
        block /= uint64_t(layout->parts(layout->inputs[i], d));
      copies += block * uint64_t(localShards);
    }
  uint64_t need = perCall * uint64_t(localShards) + copies;
  std::string detail = " (planned peak " + memorySizeText(perCall) + " per call";
  if (localShards > 1)
    detail += " on each of " + std::to_string(localShards) + " shards";
  if (copies)
    detail += ", and " + memorySizeText(copies) + " for the shards' blocks of the inputs";
  std::string shortfall = memoryShortfall(need, detail + ")");
  if (shortfall.empty())
    return "";
  return "the run needs about " + shortfall +
         ": refused before running (give smaller shapes, or shard the block over MPI processes)";
}

/// The file `moec run` writes result `i` to, in --output-dir.
std::string resultName(size_t i) { return "out" + std::to_string(i) + ".npy"; }
std::string resultPath(size_t i) {
  SmallString<256> path(outputDir);
  sys::path::append(path, resultName(i));
  return std::string(path);
}

int run(mlir::ModuleOp module) {
  std::string error;
  auto shardSig = entrySignature(module, entry, error);
  if (!shardSig)
    return fail(error);
  // A per-shard function (moe-partition) takes and returns the full
  // tensors here: the host cuts and assembles them by the mesh layout.
  std::optional<MeshLayout> layout = meshLayout(module, shardSig->name);
  if (launcher == Launcher::mpi && !layout)
    return fail("--launcher mpi runs a per-shard program: give --mesh (or compile one "
                "partitioned with moe-partition)");
  std::optional<FunctionSignature> sig =
      layout ? layout->fullSignature(*shardSig) : *shardSig;
  std::string mode = "per-shard program";
  if (auto *fn = module.lookupSymbol(shardSig->name))
    if (auto p = fn->getAttrOfType<mlir::StringAttr>(mlir::moe::kParallelAttrName))
      mode = p.str();
  MpiRank mpi;
  if (launcher == Launcher::mpi) {
    mpi = startMpiRank(layout->shape, layout->str(), std::chrono::milliseconds(collectiveTimeout),
                       error);
    if (!mpi)
      return fail(error);
  }
  if (randomInputs && !inputs.empty())
    return fail("give either --input files or --random-inputs, not both");
  // With --weights, arguments 1..W are the checkpoint's; the others (x,
  // and a cotangent's dy after the weights) come from --input or are random.
  bool checkpointWeights = !hfWeights.empty();
  size_t weightCount = 0;
  FunctionSignature given = *sig; // the arguments the user gives
  if (checkpointWeights) {
    weightCount = hfBlockArguments(*hfBlock, DType::F32).size() - 1;
    given.inputs.erase(given.inputs.begin() + 1, given.inputs.begin() + 1 + weightCount);
  }
  if (checkpointWeights && !randomInputs && inputs.size() != given.inputs.size())
    return fail("with --weights, give " + std::to_string(given.inputs.size()) +
                " --input file(s), x" + (given.inputs.size() > 1 ? " and dy" : "") +
                " (or --random-inputs): the other " + std::to_string(weightCount) +
                " arguments are the checkpoint's");
  if (!randomInputs && !checkpointWeights && inputs.size() != sig->inputs.size())
    return fail("'" + sig->name + "' takes " + std::to_string(sig->inputs.size()) +
                " inputs; " + std::to_string(inputs.size()) +
                " --input files given (or use --random-inputs)");
  if (dynamicSize < 0)
    return fail("--dim must not be negative");
  if (iters < 1)
    return fail("--iters must be at least 1");
  // Each out<i>.npy can be made (not a directory, say): known before the
  // run, so checked before it (and again when the set is published).
  if (!outputDir.empty() && sys::fs::is_directory(outputDir))
    for (size_t i = 0; i < sig->results.size(); ++i)
      if (!checkOutputFile(resultPath(i), error))
        return fail("--output-dir: " + error);

  std::vector<Buffer> args;
  if (randomInputs) {
    // Refuse inputs that cannot fit before allocating them.
    if (std::string why = randomInputsRefusal(given, dynamicSize, "--dim"); !why.empty())
      return fail(why);
    args = moec::randomInputs(given, seed, dynamicSize);
    outs() << "inputs: random, seed " << seed << ", dynamic dimensions " << dynamicSize << "\n";
  } else {
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto array = readNpy(inputs[i], error);
      if (!array)
        return fail(error);
      auto buffer = toBuffer(*array, given.inputs[i].dtype, error);
      if (!buffer)
        return fail("argument " + std::to_string(i) + " (" + inputs[i] + "): " + error);
      args.push_back(std::move(*buffer));
    }
  }
  if (checkpointWeights) {
    // The layer's weights from the checkpoint, in the block's layouts,
    // after x (random or the --input).
    auto checkpoint = Checkpoint::open(hfWeights, error);
    if (!checkpoint)
      return fail(error);
    std::vector<Buffer> weights;
    if (!loadHfWeights(*hfBlock, *checkpoint, dtypeOf(hfDtype),
                       weights, error))
      return fail(error);
    args.insert(args.begin() + 1, std::make_move_iterator(weights.begin()),
                std::make_move_iterator(weights.end()));
    outs() << "weights: layer " << hfBlock->layer << " of " << hfWeights << " ("
           << hfBlock->modelType << ")\n";
  }
  if (!sig->checkInputs(args, error))
    return fail(error);
  // Every rank runs the same program with the same options on the same
  // inputs, or none runs: different --dim or --seed per rank (an appfile)
  // made collectives of different sizes; different files, mixed inputs.
  if (mpi) {
    std::vector<std::string> lines = {"program text hash " + std::to_string(programHash)};
    for (size_t i = 0; i < args.size(); ++i)
      lines.push_back("input " + std::to_string(i) + " " + shapeString(args[i].shape()) + "x" +
                      dtypeName(args[i].dtype()) + " content hash " +
                      std::to_string(args[i].contentHash()));
    if (std::string why = agreeOnRun(
            *mpi, std::vector<std::string>(commandLine.begin() + 1, commandLine.end()), lines);
        !why.empty())
      return fail(why);
  }

  if (auto tm = hostTargetMachine(error))
    outs() << "target: " << describeHostTarget(*tm) << "\n";
  // Generated code reports a failed run-time check (cf.assert: two
  // arguments' dynamic sizes disagree) with puts, then aborts: unbuffered,
  // the message is out before the abort.
  outs().flush();
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  // The same for moec's own lines: a run-time error ends the process with
  // _Exit (runtime/RunTimeChecks.h), which flushes no buffer.
  outs().SetUnbuffered();
  // libomp reads it when a thread's first parallel loop starts: in-process
  // shards share the threads (each shard thread is one of libomp's roots).
  // Without --threads one device (or MPI rank) keeps libomp's default.
  if (layout && launcher == Launcher::inprocess)
    setCodeThreads(threadsPerShard(threads, layout->ranks(), launcher));
  else if (threads > 0)
    setCodeThreads(threads);
  if (mlir::Operation *fn = module.lookupSymbol(sig->name))
    if (auto remat = fn->getAttrOfType<mlir::DictionaryAttr>(mlir::moe::kRematAttrName))
      outs() << "remat: policy " << remat.getAs<mlir::StringAttr>("policy").getValue()
             << format(": keeps %.1f MiB for the backward, recomputes %.3f GFLOP in it",
                       remat.getAs<mlir::IntegerAttr>("kept_bytes").getInt() / 1048576.0,
                       remat.getAs<mlir::IntegerAttr>("recomputed_flops").getInt() * 1e-9)
             << (remat.getAs<mlir::BoolAttr>("kept_dynamic").getValue()
                     ? " (and values of dynamic size)\n"
                     : "\n");
  // The weights packed once, before the runs (one device, moe-to-llvm):
  // the entry's prepared form, when moe-prepare-weights makes one.
  std::optional<PreparedHalves> halves;
  // An entry that is itself a half (`--entry f_prepared`) runs as it is:
  // moe-prepare-weights would replace moe-quantize's halves of @f with its
  // own, and the entry's name would then be a function of other arguments
  // (packed weights) than the inputs bound to it.
  mlir::Operation *entryFn = module.lookupSymbol(sig->name);
  bool entryIsHalf = entryFn && mlir::moe::isPreparedHalf(entryFn);
  if (prepareWeightsBeforeRuns && !layout && passPipeline.empty() && !entryIsHalf) {
    if (mlir::failed(prepareWeights(module, gmmChoices())))
      return 1;
    halves = preparedHalves(module, *sig, error);
    if (!halves && !error.empty())
      return fail(error);
  }
  const PreparedForm *prepared = halves ? &halves->form : nullptr;
  // A run calls one function (and with prepared weights, the two halves):
  // the others (the forward next to its forward_backward, say) become
  // private and upstream's symbol-dce drops what is not called, so they are
  // not compiled.
  for (auto fn : module.getOps<mlir::func::FuncOp>()) {
    bool called = prepared ? (fn.getSymName() == prepared->prepare || fn.getSymName() == prepared->prepared)
                           : fn.getSymName() == shardSig->name;
    if (!called && !fn.isDeclaration())
      fn.setPrivate();
  }
  mlir::PassManager dce(module.getContext());
  dce.addPass(mlir::createSymbolDCEPass());
  if (mlir::failed(dce.run(module)))
    return 1;
  if (mlir::failed(lowerModule(module, passPipeline, gmmChoices())))
    return 1;
  auto program = JitProgram::create(module, error);
  if (!program)
    return fail(error);

  std::optional<MemoryPlan> plan = memoryPlan(module, prepared ? prepared->prepared : sig->name);
  // The plan places the buffers of static size; those whose size follows a
  // dynamic dimension of the inputs are allocated as the run needs them, so
  // the plan of a dynamic-shape function is not the run's peak.
  bool dynamicShapes = false;
  for (const auto &list : {sig->inputs, sig->results})
    for (const TensorSignature &t : list)
      dynamicShapes |= llvm::is_contained(t.shape, int64_t(-1));
  if (plan)
    outs() << "memory: " << describeMemoryPlan(*plan)
           << (dynamicShapes ? " (static buffers only: those sized by the inputs' dynamic "
                               "dimensions are allocated during the run)"
                             : "")
           << "\n";
  if (std::string refusal = memoryRefusal(plan, args, layout, launcher == Launcher::mpi); !refusal.empty())
    return fail(refusal);

  // Compiled before the first run, so that the runs' peak RSS over the RSS
  // before them is what the calls allocate and touch (later runs reuse
  // what malloc kept from the first).
  if (!program->materialize(prepared ? prepared->prepared : sig->name, error))
    return fail(error);
  // Prepared weights: the prepare function once, on the weights (views of
  // the arguments), then every run calls the prepared function on the
  // other arguments and what it returned.
  std::optional<PreparedWeights> weights;
  CallByName callHalf = [&](const std::string &name, std::vector<Buffer> &halfArgs, std::string &err) {
    return callOnDevice(*program, name == prepared->prepare ? halves->prepare : halves->prepared, halfArgs, err);
  };
  if (prepared) {
    auto start = std::chrono::steady_clock::now();
    weights = PreparedWeights::prepare(*prepared, *sig, args, callHalf, error);
    if (!weights)
      return fail(error);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outs() << "prepare: weights "
           << (halves->quantizes && halves->packs ? "quantized and packed once for the kernels"
               : halves->packs                     ? "packed once for the kernels"
                                                   : "quantized once")
           << " in " << format("%.1f", s * 1e3) << " ms ("
           << format("%.1f", weights->bytes() / 1048576.0) << " MiB), @" << prepared->prepare
           << "; the runs call @" << prepared->prepared << "\n";
    // The runs read the packed copy: the raw weights they do not read go.
    for (int64_t i : prepared->weightArgs)
      if (!llvm::is_contained(prepared->keptArgs, i))
        args[i] = Buffer();
  }

  // One call of the program: on this device, or on every shard of the mesh.
  // A single-device call has no mesh bound: a collective in it (a per-shard
  // program without placement) fails instead of running on nothing.
  std::function<std::optional<std::vector<Buffer>>(std::string &)> call =
      [&](std::string &err) {
        return weights ? weights->run(*prepared, *sig, args, callHalf, err) : callOnDevice(*program, *sig, args, err);
      };
  std::vector<std::vector<Buffer>> shardArgs;
  std::vector<RankStats> rankStats;
  if (layout) {
    int64_t ranks = layout->ranks();
    ShardComm *mpiComm = mpi.get();
    auto local = localShardInputs(args, *layout, mpiComm, error);
    if (!local)
      return fail(error);
    shardArgs = std::move(*local);
    outs() << "mesh: " << layout->str() << " (" << mode << "), " << ranks
           << (mpiComm ? " MPI processes\n" : " shards in-process\n");
    call = [&, mpiComm](std::string &err) {
      return callSharded(*program, *shardSig, *layout, shardArgs, mpiComm,
                         std::chrono::milliseconds(collectiveTimeout), rankStats, err);
    };
  }
  // A fixed mmap threshold: glibc otherwise raises it to the size of each
  // large block freed, so the next run's buffers come from a heap that
  // never shrinks and the runs' RSS drifts above what one call needs.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  int64_t baseline = resetPeakRss() ? statusBytes("VmRSS") : -1, rssGrowth = -1;
  std::vector<double> seconds;
  std::optional<std::vector<Buffer>> results;
  for (unsigned i = 0; i < iters; ++i) {
    results.reset(); // the last run's outputs are not this run's memory
    auto start = std::chrono::steady_clock::now();
    results = call(error);
    auto stop = std::chrono::steady_clock::now();
    if (i + 1 == iters && baseline >= 0)
      if (int64_t peak = statusBytes("VmHWM"); peak >= 0)
        rssGrowth = peak - baseline;
    if (!results)
      return fail(error);
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  double median = medianOf(seconds);

  for (size_t i = 0; i < results->size(); ++i)
    outs() << "out" << i << ": " << bufferSummary((*results)[i]) << "\n";
  if (layout) {
    CommTotals comm = commTotals(rankStats);
    outs() << "comm: " << comm.collectives << " collectives, "
           << format("%.3f", comm.busiestBytes / 1048576.0)
           << " MiB moved by the busiest shard per run\n";
    if (std::string dropped = droppedRowsLine(comm, ", all shards per run"); !dropped.empty())
      outs() << dropped << "\n";
  }
  outs() << "time: " << format("%.3f", median * 1e3) << " ms median of " << iters
         << " run" << (iters == 1 ? "" : "s") << "\n";
  if (rssGrowth >= 0) {
    outs() << format("memory: peak RSS grew %.1f MiB over the runs", rssGrowth / 1048576.0);
    // One shard's plan says nothing about the RSS of all of them (and the
    // host's copies of the full tensors).
    if (plan && plan->plannedPeak() > 0 && !layout && !dynamicShapes)
      outs() << format(", %.2fx the planned peak", double(rssGrowth) / plan->plannedPeak());
    outs() << "\n";
  }

  if (outputDir.empty())
    return 0;
  if (mpi && mpi->rank() != 0)
    return 0;
  // All files or none, published as one set.
  std::vector<std::pair<std::string, const Buffer *>> files;
  for (size_t i = 0; i < results->size(); ++i)
    files.push_back({resultName(i), &(*results)[i]});
  return writeNpyFiles(outputDir, files, error) ? 0 : fail(error);
}

/// Whether --pass-pipeline runs moe-quantize (any mode: each refuses a
/// shard's program and a block being differentiated).
bool pipelineQuantizes() { return StringRef(passPipeline).contains("moe-quantize"); }

std::string quantizedPlanRefusal() {
  return "--pass-pipeline quantizes the block, and --parallel-mode and --mesh partition it "
         "before the pipeline runs: moe-quantize takes a single-device block (int8 on a mesh is "
         "not supported yet); run it without --parallel-mode and --mesh (one device on all "
         "--threads)";
}

/// --parallel-mode: the plan for the program's block (tooling/ParallelPlan.h;
/// auto asks the cost model, measuring this host), written into `options`
/// as the mesh and dispatch moe-partition takes; "" or why not. The plan
/// (and with auto the model's predictions) go to the run's report, or to
/// stderr when compiling (stdout may be the output).
std::string planParallel(mlir::ModuleOp module, ProgramOptions &options) {
  std::string error;
  // A dynamic token count is the run's: --dim's, or the x input's rows.
  int64_t tokens = 0;
  if (runCommand && randomInputs) {
    tokens = dynamicSize;
  } else if (runCommand && !inputs.empty()) {
    std::optional<NpyArray> x = readNpyHeader(inputs.front(), error);
    if (!x)
      return error;
    tokens = x->shape.empty() ? 0 : x->shape.front();
  }
  std::optional<Workload> workload = blockWorkload(module, options.backward.has_value(), tokens,
                                                   capacityFactor > 0, error);
  if (!workload) {
    if (parallelMode == ParallelMode::automatic)
      return error;
    // dp and ep need no sizes: moe-partition checks the axes against
    // every block.
    workload = Workload();
  }
  MeshRequest mesh;
  if (std::string why = parseMesh(meshOption, mesh); !why.empty())
    return why;
  int64_t shards = mesh.given ? mesh.devices() : defaultDevices(module, threads);
  // Before the host is measured: every plan over more shards than one
  // partitions the block.
  if (parallelMode == ParallelMode::automatic && shards > 1 && pipelineQuantizes())
    return quantizedPlanRefusal();
  Machine machine;
  if (parallelMode == ParallelMode::automatic) {
    // Rated as moe-bench rates it: a bf16 block (the one 2-byte type a
    // block takes) at its bf16 gmms' unit, for the module's #moe.target
    // where it has one. A block a moe-quantize in --pass-pipeline makes int8
    // gets here only over one device (refused over more, above), where the
    // single device is the one plan: rated as its float form, which changes
    // the printed prediction, not the plan. A block quantized before has no
    // moe.block to plan (blockWorkload).
    auto target = module->getAttrOfType<mlir::moe::TargetAttr>(mlir::moe::kTargetAttrName);
    std::optional<PeakUnit> unit =
        gmmPeakUnit(gmmStrategy, target, workload->elementBytes == 2, /*int8=*/false, error);
    if (!unit)
      return error;
    machine = measureHostMachine(threads, shards, launcher, *unit);
  }
  Plan plan;
  if (std::string why =
          choosePlan(parallelMode, epDispatch, mesh, shards, *workload, machine, plan);
      !why.empty())
    return why;
  // Under MPI every rank would print it: its mesh line says the plan.
  raw_ostream &os = runCommand ? outs() : errs();
  if (parallelMode == ParallelMode::automatic)
    describePredictions(os, *workload, machine, shards, plan);
  if (launcher != Launcher::mpi)
    os << "parallel: " << plan.str() << " (--parallel-mode "
       << kParallelModeChoices.name(parallelMode) << ")\n";
  options.mesh = plan.mode == "none" ? std::string() : planMesh(plan);
  if (plan.mode != "none")
    options.epDispatch = planDispatch(plan);
  return "";
}
} // namespace

/// The options that do not depend on the program, checked before it is
/// read: a wrong one is one message, given before any work (not one per
/// gmm from inside the pipeline, or after a run when its outputs are
/// written).
int checkOptions() {
  std::string error;
  if (inputFile.empty() == hfConfig.empty())
    return fail(hfConfig.empty() ? "no input: give a .mlir file, or --hf-config config.json"
                                 : "give a .mlir file or --hf-config, not both");
  if (hfConfig.empty() && (hfLayer.getNumOccurrences() || hfDtype.getNumOccurrences() ||
                           hfWeights.getNumOccurrences()))
    return fail("--layer, --dtype and --weights apply to --hf-config");
  // --backward differentiates the block before --pass-pipeline runs: an
  // moe-quantize there would give the float block's gradient, not the int8
  // training form, and moe-generate-backward there would run on a block
  // already differentiated (or on lowered code). Both are refused with the
  // command that gives the documented form (docs/training.md).
  if (StringRef(passPipeline).contains("moe-generate-backward") ||
      (backward.getNumOccurrences() && pipelineQuantizes()))
    return fail("--pass-pipeline runs after --backward's moe-generate-backward, so it may not "
                "differentiate the block, nor quantize one being trained; for the int8 training "
                "form, "
                "quantize before differentiating: moe-opt FILE "
                "-moe-quantize='mode=int8 hoist-weights=false' "
                "-moe-generate-backward=loss=mean-square -o q.mlir, then moec run q.mlir "
                "--entry <block>_forward_backward");
  // moe-partition runs before --pass-pipeline, and moe-quantize refuses a
  // shard's program (int8 runs on one device): said here, before any work,
  // rather than from inside the pipeline. (auto is checked in planParallel,
  // once it knows the devices: on one it plans the single device, which
  // runs.)
  if ((parallelMode == ParallelMode::dp || parallelMode == ParallelMode::ep ||
       !meshOption.empty()) &&
      pipelineQuantizes())
    return fail(quantizedPlanRefusal());
  // They would be silently ignored: only moe-partition reads them.
  if (meshOption.empty() && parallelMode == ParallelMode::none &&
      (epDispatch.getNumOccurrences() || capacityFactor.getNumOccurrences() ||
       capacityRound.getNumOccurrences()))
    return fail("--ep-dispatch, --capacity-factor and --capacity-round apply to a partitioned "
                "block: give --mesh (e.g. --mesh expert=2) or --parallel-mode too");
  // What --parallel-mode chooses is not given beside it; under MPI every
  // rank runs one plan, so it comes from the command line they agree on.
  if (parallelMode == ParallelMode::dp &&
      (epDispatch.getNumOccurrences() || capacityFactor.getNumOccurrences()))
    return fail("--parallel-mode dp splits the tokens only: --ep-dispatch and --capacity-factor "
                "apply to ep");
  if (parallelMode == ParallelMode::automatic && epDispatch.getNumOccurrences())
    return fail("--parallel-mode auto chooses the dispatch: give --parallel-mode ep for "
                "--ep-dispatch");
  if (parallelMode != ParallelMode::none && launcher == Launcher::mpi &&
      (parallelMode == ParallelMode::automatic || meshOption.empty()))
    return fail("--launcher mpi runs the plan its --mesh gives (with --parallel-mode dp or ep): "
                "auto would measure each rank's host apart, and the ranks could choose "
                "different plans");
  if (std::string why = programOptionsRefusal(programOptions()); !why.empty())
    return fail(why);
  if (std::string why = selectTarget(targetCpu, gmmChoices(), /*runHere=*/bool(runCommand),
                                     tuningTable.empty());
      !why.empty())
    return fail(why);
  if (runCommand) {
    if (!outputDir.empty() && !checkOutputDirectory(outputDir, error))
      return fail("--output-dir " + error);
    // libomp reads OMP_NUM_THREADS when --threads does not set it.
    for (const std::string &why :
         {threadCountRefusal(threads, "--threads " + std::to_string(threads)),
          threads ? std::string() : ompNumThreadsRefusal()})
      if (!why.empty())
        return fail(why);
    return 0;
  }
  if (outputFile.empty())
    return fail("no output: give -o FILE (.o, .so, .s, .ll or .mlir)");
  std::string kind = emitKind();
  if (kind != "mlir" && kind != "llvm" && kind != "asm" && kind != "obj" && kind != "so")
    return fail("--emit must be one of mlir, llvm, asm, obj, so (got '" + kind + "')");
  if (!checkOutputFile(outputFile, error))
    return fail(error);
  return 0;
}

/// Hides every option but moec's own and MLIR's pass-manager debugging
/// ones from --help (they all still parse: cl::HideUnrelatedOptions would
/// hide MLIR's too, which share LLVM's general category). The per-pass
/// forms (--mlir-print-ir-after=PASS) parse but stay out of --help, whose
/// pass-name list LLVM 22 pads to no end without the registry's passes.
void hideUnrelatedOptions() {
  static constexpr StringLiteral shown[] = {
      "help", "version", "mlir-print-ir-after-all", "mlir-print-ir-before-all",
      "mlir-print-ir-after-failure", "mlir-timing", "mlir-pass-statistics"};
  for (cl::SubCommand *sub : {&cl::SubCommand::getTopLevel(), &runCommand})
    for (auto &entry : cl::getRegisteredOptions(*sub)) {
      cl::Option *option = entry.second;
      bool own = llvm::is_contained(option->Categories, &moecCategory);
      if (own)
        continue;
      // MLIR's shown options join moec's list: one section, not three.
      if (entry.first.starts_with("mlir-") && llvm::is_contained(shown, entry.first))
        option->addCategory(moecCategory);
      else if (!llvm::is_contained(shown, entry.first))
        option->setHiddenFlag(cl::Hidden);
    }
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  setFailingTool("moec", 1);
  commandLine.assign(argv, argv + argc);
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::registerAsmPrinterCLOptions();
  hideUnrelatedOptions();
  cl::ParseCommandLineOptions(argc, argv, "moec: compile and run MoE blocks\n");
  usePassManagerCLOptions();
  if (int failed = checkOptions())
    return failed;

  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the source location; the failing op in generic form
  // is noise to a user (moe-opt keeps mlir-opt's default).
  context.printOpOnDiagnostic(false);
  SourceMgr sourceMgr;
  mlir::moe::ShortSourceLineDiagnosticHandler handler(sourceMgr, &context);
  ProgramSource source;
  if (hfConfig.empty())
    source.path = inputFile;
  source.hfConfig = hfConfig, source.hfLayer = hfLayer;
  source.hfDtype = dtypeOf(hfDtype);
  LoadedProgram loaded = loadProgram(&context, sourceMgr, source);
  if (!loaded.module)
    return loaded.error.empty() ? 1 : fail(loaded.error);
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(loaded.module);
  hfBlock = loaded.hfLayer;
  programHash = loaded.textHash;
  ProgramOptions options = programOptions();
  if (parallelMode != ParallelMode::none)
    if (std::string why = planParallel(*module, options); !why.empty())
      return fail(why);
  if (mlir::failed(prepareProgram(*module, options)))
    return 1;
  return runCommand ? run(*module) : compile(*module);
}
