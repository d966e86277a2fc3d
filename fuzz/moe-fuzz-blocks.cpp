//===- moe-fuzz-blocks.cpp - random MoE blocks against the reference ------===//
//
// The structured fuzzer's driver: draws random valid blocks (shapes, top-k,
// routing switches, null experts and draws, fusions, gmm strategies, int8,
// meshes; backward cases with a remat policy), compiles each through the
// real pipeline and checks what it computes against the C++ reference
// (test/differential/BlockCase.h). Prints one line per case and, for a
// failure, the program, the pipeline and the command that repeats it.
//
//   moe-fuzz-blocks --seed 7 --cases 50      # 50 cases from seed 7
//   moe-fuzz-blocks --seed 7 --case 31       # case 31 of seed 7 alone
//   moe-fuzz-blocks --minutes 60             # as many as fit in an hour
//
//===----------------------------------------------------------------------===//

#include "differential/BlockCase.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <random>

using namespace llvm;
using namespace moec::differential;

namespace {

cl::OptionCategory category("moe-fuzz-blocks options");

cl::opt<uint64_t> seedOption("seed", cl::desc("Base seed (default: random, printed)"),
                             cl::init(0), cl::cat(category));
cl::opt<int64_t> casesOption("cases", cl::desc("How many cases to run (default 20)"),
                             cl::init(20), cl::cat(category));
cl::opt<int64_t> onlyCase("case", cl::desc("Run only this case of the seed"), cl::init(-1),
                          cl::cat(category));
cl::opt<double> minutes("minutes",
                        cl::desc("Run cases until this many minutes have passed (overrides "
                                 "--cases)"),
                        cl::init(0), cl::cat(category));
cl::opt<int64_t> backwardEvery("backward-every",
                               cl::desc("Every n-th case runs forward and backward (default "
                                        "3; 0: forward only)"),
                               cl::init(3), cl::cat(category));

/// Case `index` of `seed`: its own generator, so that any case repeats alone.
bool runCase(uint64_t seed, int64_t index) {
  uint64_t caseSeed = seed * 1000003ull + uint64_t(index);
  RandomChoices choices(caseSeed);
  bool backward = backwardEvery > 0 && index % backwardEvery == backwardEvery - 1;
  BlockCase c = randomCase(choices, backward);
  std::string policy = backward ? randomRematPolicy(choices, c) : "";
  outs() << "case " << index << ": " << describe(c)
         << (backward ? " backward remat=" + policy : std::string()) << ": ";
  outs().flush();
  auto start = std::chrono::steady_clock::now();
  std::string failure = checkForward(c, caseSeed);
  if (failure.empty() && backward)
    failure = checkBackward(c, policy, caseSeed);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failure.empty()) {
    outs() << format("ok (%.2f s)\n", seconds);
    return true;
  }
  outs() << "FAILED\n" << failure << "\nrepeat: moe-fuzz-blocks --seed " << seed << " --case "
         << index << " --backward-every " << backwardEvery << "\n";
  return false;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "moe-fuzz-blocks: random MoE blocks, compiled, against the C++ "
                              "reference\n");
  if (casesOption < 0 || minutes < 0 || backwardEvery < 0) {
    errs() << "moe-fuzz-blocks: error: --cases, --minutes and --backward-every must not be "
              "negative\n";
    return 2;
  }
  uint64_t seed = seedOption.getNumOccurrences() ? uint64_t(seedOption)
                                                 : uint64_t(std::random_device{}());
  outs() << "moe-fuzz-blocks: seed " << seed << "\n";
  if (onlyCase >= 0)
    return runCase(seed, onlyCase) ? 0 : 1;
  auto start = std::chrono::steady_clock::now();
  auto elapsedMinutes = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
  };
  int64_t ran = 0, failed = 0;
  for (int64_t i = 0; minutes > 0 ? elapsedMinutes() < minutes : i < casesOption; ++i, ++ran)
    failed += !runCase(seed, i);
  outs() << "moe-fuzz-blocks: " << ran << " cases, " << failed << " failed, seed " << seed
         << "\n";
  return failed ? 1 : 0;
}
