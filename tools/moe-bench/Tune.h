//===- Tune.h - moe-bench --tune: search the gmm tiles for a shape --------===//

#ifndef MOEC_TOOLS_MOEBENCH_TUNE_H
#define MOEC_TOOLS_MOEBENCH_TUNE_H

#include "Program.h"

#include <string>

namespace moebench {

struct TuneRequest {
  BlockConfig config;
  std::string table;
  unsigned threads;
  unsigned seed;
};

/// Times candidate tilings of the block's two gmm shapes (up with SwiGLU,
/// down) on groups of the block's mean size (its first top-k), and stores the fastest of each
/// in the table. Progress (done/total, best so far, time left) goes to the
/// terminal when stderr is one.
bool tuneGmmTiles(const TuneRequest &request, std::string &error);

} // namespace moebench

#endif
