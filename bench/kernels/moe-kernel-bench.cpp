//===- moe-kernel-bench.cpp - one gmm kernel kind, measured alone ----------===//
//
// A microbenchmark per kind of the gmm kernel family: one moe.gmm of one
// group (by default one task: the rows and columns of a task of every kind
// with the default tiles; the time is the whole call's, with its task table,
// worker start and, for int8, the rows' quantization) compiled with #moe.gmm_lowering naming the kind
// and the tiles given, timed on one thread, against the reference loops and
// against the peak of the unit the kind runs on (measured now, as moe-bench
// measures it). A kernel can be changed and measured without a whole block.
// Its results are checked against the reference loops first: a wrong kernel
// is reported and the tool exits 1.
//
//===----------------------------------------------------------------------===//

#include "kernels/GmmKernelHarness.h"
#include "strategy/GmmTiling.h"

#include "compiler/Compiler.h"
#include "codegen/kernels/GmmKernel.h"
#include "tooling/Peak.h"
#include "tooling/ThreadsOption.h"
#include "runtime/HostMemory.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace llvm;
using namespace moec;
using namespace moec::kernels;

namespace {
cl::OptionCategory category("moe-kernel-bench options");
cl::list<std::string> kindsOption("kernel", cl::desc("Kernel kinds to measure (default: every kind this CPU runs)"),
                                  cl::CommaSeparated, cl::cat(category));
cl::opt<int64_t> rowsOption("rows", cl::desc("Rows of the group"), cl::init(48), cl::cat(category));
cl::opt<int64_t> depthOption("depth", cl::desc("Depth (the weight's rows)"), cl::init(2048), cl::cat(category));
cl::opt<int64_t> columnsOption("columns", cl::desc("Output columns"), cl::init(256), cl::cat(category));
cl::opt<bool> swigluOption("swiglu", cl::desc("Weights twice as wide, silu(gate) * up fused"), cl::cat(category));
cl::opt<bool> gatherOption("gather", cl::desc("Rows gathered through a permutation (top 2)"), cl::cat(category));
cl::opt<bool> bf16Option("bf16", cl::desc("The fma kind on bf16 operands (widened once)"), cl::cat(category));
cl::opt<std::string> tilesOption("tiles", cl::desc("mr,nv,kc,nc,mc of the fma kind"), cl::init("6,4,256,256,48"),
                                 cl::cat(category));
cl::opt<int64_t> packedColumnsOption("packed-columns", cl::desc("Weight columns of a packed kind's task"),
                                     cl::init(256), cl::cat(category));
cl::opt<int64_t> dotRowsOption("dot-rows", cl::desc("Rows of an avx512bf16_dot task"), cl::init(48),
                               cl::cat(category));
// --threads N (one task runs on one): read before cl::ParseCommandLineOptions
// (tooling/ThreadsOption.h).
unsigned threadsOption = 1;
cl::opt<unsigned> repeatOption("repeat", cl::desc("Timed calls (the median is reported)"), cl::init(20),
                               cl::cat(category));

double medianMs(CompiledGmm &gmm, std::vector<Buffer> &inputs, unsigned repeat, std::string &error) {
  std::vector<double> ms;
  for (unsigned i = 0; i <= repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto out = gmm.run(inputs, error);
    auto end = std::chrono::steady_clock::now();
    if (!out)
      return -1;
    if (i > 0) // the first call warms the caches
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // As moe-bench: freed buffers stay with the process, so that a call's
  // outputs do not page-fault afresh every time (runtime/HostMemory.h).
  keepFreedMemory();
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  if (std::string error; !takeThreadsOption(argc, argv, threadsOption, error)) {
    std::fprintf(stderr, "moe-kernel-bench: %s\n", error.c_str());
    return 2;
  }
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "moe-kernel-bench: one gmm kernel kind on one group, against the reference "
                              "loops and its unit's peak\n\n"
                              "  --threads N    threads of the generated code (default 1)\n");
  if (repeatOption < 1) {
    std::fprintf(stderr, "moe-kernel-bench: --repeat must be at least 1\n");
    return 2;
  }
  // Before the JIT's first OpenMP call.
  setenv("OMP_NUM_THREADS", std::to_string(threadsOption).c_str(), 1);

  GmmShape shape;
  shape.rows = rowsOption;
  shape.depth = depthOption;
  shape.width = columnsOption;
  shape.swiglu = swigluOption;
  shape.gather = gatherOption;
  shape.bf16ForFma = bf16Option;
  GmmTiles tiles;
  char rest = 0;
  if (std::sscanf(tilesOption.c_str(), "%ld,%ld,%ld,%ld,%ld%c", &tiles.mr, &tiles.nv, &tiles.kc, &tiles.nc,
                  &tiles.mc, &rest) != 5) {
    std::fprintf(stderr, "moe-kernel-bench: --tiles wants mr,nv,kc,nc,mc (five integers), got '%s'\n",
                 tilesOption.c_str());
    return 2;
  }
  // The default tiles are AVX-512's; on a smaller register file, the
  // tallest of their width it holds (tiles given are taken as given).
  if (!tilesOption.getNumOccurrences())
    tiles = tiles.fittedTo(mlir::moe::strategy::MachineModel::target().vectorRegisters);
  tiles.packedColumns = packedColumnsOption;
  tiles.dotRows = dotRowsOption;
  if (shape.rows < 1 || shape.depth < 1 || shape.width < 1 || tiles.packedColumns < 1 || tiles.dotRows < 1) {
    std::fprintf(stderr, "moe-kernel-bench: --rows, --depth, --columns, --packed-columns and --dot-rows must "
                         "be at least 1\n");
    return 2;
  }

  std::vector<std::string> kinds(kindsOption.begin(), kindsOption.end());
  bool named = !kinds.empty();
  if (!named)
    for (const mlir::moe::codegen::GmmKernelKind *k : mlir::moe::codegen::registeredGmmKernels())
      kinds.push_back(k->name.str());
  for (const std::string &kind : kinds)
    if (!kindSetup(kind)) {
      std::fprintf(stderr, "moe-kernel-bench: no kernel kind '%s' (the registry has:", kind.c_str());
      for (const mlir::moe::codegen::GmmKernelKind *k : mlir::moe::codegen::registeredGmmKernels())
        std::fprintf(stderr, " %s", k->name.str().c_str());
      std::fprintf(stderr, ")\n");
      return 2;
    }

  std::string error;
  auto tm = hostTargetMachine(error);
  std::printf("host: %s\n", tm ? describeHostTarget(*tm).c_str() : error.c_str());
  std::printf("gmm: one group of %ld rows x depth %ld x %ld %s, %u thread%s, tiles mr,nv,kc,nc,mc=%ld,%ld,%ld,%ld,%ld "
              "packed_columns=%ld dot_rows=%ld\n",
              shape.rows, shape.depth, shape.swiglu ? 2 * shape.width : shape.width,
              shape.swiglu ? "weight columns (SwiGLU fused)" : "columns", unsigned(threadsOption),
              threadsOption == 1 ? "" : "s", tiles.mr, tiles.nv, tiles.kc, tiles.nc, tiles.mc, tiles.packedColumns,
              tiles.dotRows);
  double ops = 2 * gmmMultiplyAdds(shape);
  bool failed = false;
  for (const std::string &kind : kinds) {
    std::optional<GmmKindSetup> setup = kindSetup(kind);
    std::vector<std::string> missing = missingFeatures(*setup);
    if (!missing.empty()) {
      std::string list;
      for (const std::string &f : missing)
        list += " " + f;
      std::printf("kernel %s: skipped, this CPU lacks%s\n", kind.c_str(), list.c_str());
      // Asked for by name: not measured is a failure.
      failed |= named;
      continue;
    }
    std::string program = gmmProgram(*setup, shape, tiles);
    auto kernel = CompiledGmm::compile(program, /*reference=*/false, error);
    auto reference = kernel ? CompiledGmm::compile(program, /*reference=*/true, error) : nullptr;
    if (!reference) {
      std::fprintf(stderr, "moe-kernel-bench: %s: %s\n", kind.c_str(), error.c_str());
      return 1;
    }
    std::mt19937_64 rng(42);
    std::vector<Buffer> inputs = gmmInputs(*setup, shape, rng);
    auto got = kernel->run(inputs, error);
    auto expected = got ? reference->run(inputs, error) : std::nullopt;
    if (!expected) {
      std::fprintf(stderr, "moe-kernel-bench: %s: %s\n", kind.c_str(), error.c_str());
      return 1;
    }
    int64_t nans = 0;
    double err = relativeError(got->front(), expected->front(), nans);
    bool wrong = nans > 0 || !(err <= tolerance(*setup, shape));

    double ms = medianMs(*kernel, inputs, repeatOption, error);
    double referenceMs = medianMs(*reference, inputs, std::min(3u, unsigned(repeatOption)), error);
    if (ms < 0 || referenceMs < 0) {
      std::fprintf(stderr, "moe-kernel-bench: %s: %s\n", kind.c_str(), error.c_str());
      return 1;
    }
    double rate = ops / (ms * 1e6); // GFLOP/s (GOP/s for int8)
    const char *unitOfRate = setup->operands == GmmOperands::Int8 ? "GOP/s" : "GFLOP/s";
    std::printf("kernel %s: median %.3f ms (%u calls), %.1f %s", kind.c_str(), ms, unsigned(repeatOption), rate,
                unitOfRate);
    if (setup->unit.peak) {
      double peak = setup->unit.peak(threadsOption, 0.3);
      std::printf(", %.0f%% of the %s peak (%.1f %s measured now)", peak > 0 ? 100 * rate / peak : 0.0,
                  setup->unit.name, peak, unitOfRate);
    } else {
      std::printf(", no peak loop for this unit");
    }
    std::printf("; %.1fx the reference loops (%.3f ms); max error %.2g of max |expected|%s\n",
                referenceMs / ms, referenceMs, err, wrong ? ": WRONG" : "");
    if (wrong) {
      std::fprintf(stderr, "moe-kernel-bench: kernel %s differs from the reference loops (error %.3g, %ld NaN "
                           "mismatches)\n",
                   kind.c_str(), err, long(nans));
      failed = true;
    }
  }
  return failed ? 1 : 0;
}
