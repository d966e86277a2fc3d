//===- FuzzBlocks.cpp - libFuzzer: random valid blocks, differentially -----===//
//
// The structured fuzz target: libFuzzer's bytes choose a valid MoE block
// (test/differential/BlockCase.h: randomCase reads its choices from them),
// which is compiled through the whole pipeline and run; what it computes
// must match the C++ reference. A mismatch, a refused valid program, a
// crash or a sanitizer report stops the fuzzer with the bytes saved; the
// report names the case (moe-fuzz-blocks repeats cases by seed; a byte
// input repeats with `moe-fuzz-blocks-libfuzzer <file>`).
//
//===----------------------------------------------------------------------===//

#include "differential/BlockCase.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace moec::differential;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > 256)
    return -1;
  ByteChoices choices(data + 1, size - 1);
  bool backward = data[0] & 1;
  BlockCase c = randomCase(choices, backward);
  // Every case is small; the biggest cost is compiling it.
  std::string failure = checkForward(c, /*seed=*/data[0]);
  std::string policy;
  if (failure.empty() && backward) {
    policy = randomRematPolicy(choices, c);
    failure = checkBackward(c, policy, /*seed=*/data[0]);
  }
  if (!failure.empty()) {
    llvm::errs() << "moe-fuzz-blocks: mismatch: " << describe(c)
                 << (backward ? " backward remat=" + policy : std::string()) << "\n"
                 << failure << "\n";
    llvm::errs().flush();
    std::abort();
  }
  return 0;
}
