//===- Inputs.h - the benchmark block's inputs ---------------------*- C++ -*-===//
//
// What moe-bench runs a block on, from its seed: the tokens and weights
// (uniform, scaled as an initialisation would be: their values do not
// change the speed), the routing distribution's logits and the null draws.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_INPUTS_H
#define MOEC_TOOLS_MOEBENCH_INPUTS_H

#include "Program.h"
#include "runtime/Buffer.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moebench {

/// The block's named buffers: x, its weights in argument order (their
/// names in `weights`, the routed experts' first, in `expertWeights`) and,
/// with a selection bias, "sb".
struct BlockInputs {
  std::map<std::string, moec::Buffer> pool;
  std::vector<std::string> weights, expertWeights;
};
BlockInputs makeBlockInputs(const BlockConfig &c, unsigned seed);

/// The seeds' routing distribution `dist` (random or runs; semantics doc,
/// section 5) as logits [T, E], drawn for `seed` and top-k `k`.
moec::Buffer makeLogits(const std::string &dist, int64_t T, int64_t E, unsigned seed, int64_t k);

/// The null routing's draws [T, k], uniform in [0, 1).
moec::Buffer makeNullDraws(int64_t T, int64_t k, unsigned seed);

} // namespace moebench

#endif // MOEC_TOOLS_MOEBENCH_INPUTS_H
