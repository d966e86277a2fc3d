//===- Compiler.h - from a moe program to native code ------------*- C++ -*-===//
//
// What moec does, as a library the tools and tests share: find an entry
// function's tensor signature, lower a module to the LLVM dialect, translate
// and optimize it for the host CPU, emit assembly or an object, or JIT it and
// call the entry with host Buffers.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_COMPILER_COMPILER_H
#define MOEC_COMPILER_COMPILER_H

#include "runtime/PreparedWeights.h"
#include "runtime/ShardedRun.h"
#include "runtime/Signature.h"
#include "strategy/GmmStrategy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm
namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace moec {

/// The directory of libomp, the OpenMP runtime the generated parallel loops
/// call (LLVM's; libomp-22-dev).
std::string openMPLibraryDir();

/// compiler-rt's builtins archive, which a library moec links needs for the
/// bf16 libcalls libgcc 12 lacks (runtime/CompilerBuiltins.h); empty when
/// it is not installed (libclang-rt-22-dev).
std::string compilerRtBuiltins();

/// Every dialect, interface and translation compiling a moe program needs.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// The signature of public function `name` (or, when `name` is empty, of
/// the only public function, not counting the halves of a prepared form:
/// functions with moe.weight_arguments or moe.kept_arguments). Fails with a
/// message when the function is missing or takes anything but ranked
/// f32/bf16/i32 tensors.
std::optional<FunctionSignature> entrySignature(mlir::ModuleOp module,
                                                const std::string &name,
                                                std::string &error);

/// Where function `name`'s tensors lie on its mesh, when it is a per-shard
/// function (moe-partition: `moe.mesh`, `moe.split`, both verified);
/// nullopt for a single-device one.
std::optional<MeshLayout> meshLayout(mlir::ModuleOp module, const std::string &name);

/// How moe-to-llvm lowers moe.gmm (moec and moe-bench --gmm-strategy,
/// --gmm-tiling, --tuning-table; moe-bench --tune).
struct GmmChoices {
  mlir::moe::strategy::GmmStrategy strategy = mlir::moe::strategy::GmmStrategy::microkernel;
  std::string tiling;
  std::string tuningTable;
  /// moe-prepare-weights: <f>_prepare_weights / <f>_prepared beside <f>.
  bool prepareWeights = false;
  /// moe-mark-stages: each function's stages timed by the runtime
  /// (runtime/StageTimer.h); their names are stageNames'.
  bool stageTimers = false;
};

/// From now on, lowerModule applies MLIR's pass-manager command-line options
/// (--mlir-print-ir-after-all, --mlir-timing, --mlir-pass-statistics, ...),
/// which the tool has registered (mlir::registerPassManagerCLOptions and
/// registerDefaultTimingManagerCLOptions).
void usePassManagerCLOptions();

/// Runs `pipeline` (textual, nested under builtin.module), or moe-to-llvm
/// with `gmm` when empty, over `module`. Diagnostics go to the context's
/// handler.
mlir::LogicalResult lowerModule(mlir::ModuleOp module, const std::string &pipeline = "",
                                const GmmChoices &gmm = {});

/// Adds each public function's prepared form (moe-prepare-weights: the
/// strategy half of moe-to-llvm with `gmm`, then the split), so that its
/// signatures can be read before lowerModule, which keeps what is decided.
mlir::LogicalResult prepareWeights(mlir::ModuleOp module, const GmmChoices &gmm = {});

/// The strategy half of moe-to-llvm with `gmm` as it is (prepared forms
/// and stage marks only when asked), so that what it adds can be read
/// before lowerModule.
mlir::LogicalResult decideStrategy(mlir::ModuleOp module, const GmmChoices &gmm);

/// The names of function `name`'s stages (moe.stages, moe-mark-stages),
/// in the order the runtime's stage timer numbers them; empty when it is
/// not marked.
std::vector<std::string> stageNames(mlir::ModuleOp module, const std::string &name);

/// Sets the worker count of the OpenMP runtime the generated code's
/// parallel loops run on (libomp's omp_set_num_threads, for this thread's
/// next calls). False when libomp is not loaded (no JIT program yet).
bool setGeneratedCodeThreads(int threads);

/// Runs an empty parallel region on that runtime at this thread's worker
/// count: workers asleep (libomp puts them to sleep after its block time,
/// 200 ms idle) wake and spin for the next region, as they do between calls
/// made back to back. A stage-timed call after a long one-thread call would
/// otherwise time their wake-up in its first parallel stage (T 512 f32
/// forward on the 2-core AMD EPYC VM: the route 1.8 ms at two threads, 0.61x
/// its one-thread time; under 1.2 ms with KMP_BLOCKTIME=infinite). The
/// woken workers spin for the block time after the next region too, into
/// what runs after it (on its own cores here: a host whose threads share
/// cores would see the spin). False when libomp is not loaded.
bool wakeGeneratedCodeThreads();

/// Runs `fn(arg, thread)` on each thread of a parallel region of that
/// runtime at this thread's worker count (`thread` 0 .. count - 1): on the
/// threads the generated code runs on, spinning still from its last
/// region. Threads of another pool would compete with those for the cores
/// for libomp's block time (a probe of the cores on two std::threads after
/// calls of microseconds read a median 47% of the FP32 FMA peak on the
/// 2-core Zen 4 VM; on these threads, 95-100%: docs/performance.md). The
/// region's thread count; 0 when libomp is not loaded.
int runOnGeneratedCodeThreads(void (*fn)(void *arg, int thread), void *arg);

/// Function f's prepared form (moe-quantize's or moe-prepare-weights';
/// runtime/PreparedWeights.h) and its halves' signatures, checked against
/// f's (PreparedForm::mismatch). nullopt with `error` empty when `module`
/// has none; with `error` set when its halves do not fit f.
struct PreparedHalves {
  PreparedForm form;
  FunctionSignature prepare, prepared;
  /// What the prepare function does to the weights: packs them into the
  /// kernels' layout (moe.pack_weights), quantizes them (moe.quantize).
  bool packs = false, quantizes = false;
};
std::optional<PreparedHalves> preparedHalves(mlir::ModuleOp module, const FunctionSignature &f,
                                             std::string &error);

/// Runs a pipeline built in C++ over `module`, with the pass-manager
/// command-line options when usePassManagerCLOptions() was called.
mlir::LogicalResult runPassManager(mlir::ModuleOp module, mlir::PassManager &pm);

/// What moe-plan-buffers decided for a function (bytes).
struct MemoryPlan {
  int64_t arena = 0, lowerBound = 0, unplanned = 0, buffers = 0, bufferBytes = 0;
  /// Every static buffer the function allocates at its top level: the
  /// arena and what stays with malloc (results among them).
  int64_t plannedPeak() const { return arena + unplanned; }
};

/// The plan of function `name` in a lowered module (nullopt: none made,
/// e.g. a function without static buffers).
std::optional<MemoryPlan> memoryPlan(mlir::ModuleOp lowered, const std::string &name);

/// "planned peak 37.3 KiB = arena 26.3 KiB (34 buffers of 80.1 KiB; live-set lower
/// bound 21.5 KiB) + results and unplanned 11.0 KiB".
std::string describeMemoryPlan(const MemoryPlan &plan);

/// A target machine for this CPU with all its features (AVX-512, AMX, ...),
/// or for the CPU moec --target-cpu named (strategy/TargetCpu.h).
std::unique_ptr<llvm::TargetMachine> hostTargetMachine(std::string &error);

/// The signatures of every public function taking and returning only
/// tensors, in order; `skipped` gets a line for each public function that
/// does not qualify (and so is not an entry point of a library).
std::vector<FunctionSignature> entrySignatures(mlir::ModuleOp module,
                                               std::vector<std::string> &skipped);

/// "sapphirerapids: avx2 avx512f avx512bf16 avx512vnni amx-tile amx-bf16
/// amx-int8": the host CPU and which of the features an MoE kernel cares
/// about it has.
std::string describeHostTarget(llvm::TargetMachine &tm);

/// Translates an LLVM-dialect module to LLVM IR optimized at -O3 for `tm`.
/// For each of `entries`, adds what runtime/Library.h loads: a
/// `moec_call_<name>(void **args)` and a line of the `moec_manifest` string;
/// and a line of `moec_prepared_forms` for each of `preparedForms`.
std::unique_ptr<llvm::Module>
translateAndOptimize(mlir::ModuleOp module, llvm::LLVMContext &context,
                     llvm::TargetMachine &tm,
                     const std::vector<FunctionSignature> &entries,
                     std::string &error,
                     const std::vector<PreparedForm> &preparedForms = {});

/// Assembly text or an ELF object for `module`.
bool emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm,
                     bool assembly, llvm::SmallVectorImpl<char> &out,
                     std::string &error);

/// A JIT-compiled, LLVM-dialect module.
class JitProgram {
public:
  static std::unique_ptr<JitProgram> create(mlir::ModuleOp lowered,
                                            std::string &error);
  ~JitProgram();

  /// Compiles entry `name` now rather than at its first call (the JIT is
  /// lazy), so that the first run times and measures the call alone.
  bool materialize(const std::string &name, std::string &error);

  /// Calls the entry's C interface; returns its results as new buffers.
  std::optional<std::vector<Buffer>> run(const FunctionSignature &sig,
                                         std::vector<Buffer> &inputs,
                                         std::string &error);

private:
  JitProgram() = default;
  using PackedEntry = void (*)(void **);
  /// Entry `name`'s packed wrapper, compiled on first use.
  PackedEntry packedEntry(const std::string &name, std::string &error);
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::mutex entriesMutex; // shards of a mesh call from their threads
  std::map<std::string, PackedEntry> entries;
};

} // namespace moec

#endif // MOEC_COMPILER_COMPILER_H
