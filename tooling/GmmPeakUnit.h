//===- GmmPeakUnit.h - the unit a block's gmms are measured against -*- C++ -*-===//
//
// Which unit does most of a block's gmm work, and its peak: what moe-bench
// quotes a block's % of peak against and what the cost model rates a core
// at (moe-bench's model: line and moec's --parallel-mode auto alike, so
// that the two tools predict a block the same way).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_GMMPEAKUNIT_H
#define MOEC_TOOLING_GMMPEAKUNIT_H

#include "dialect/MoeDialect.h"
#include "strategy/GmmStrategy.h"
#include "tooling/Peak.h"

#include <optional>
#include <string>

namespace moec {

/// A unit's name, the unit of its rate and the measurement of its peak on
/// this host (tooling/Peak.h: `threads` threads for about `seconds`; 0
/// where this host lacks the unit), and the loop that measurement times
/// (what moe-bench's probe of the cores runs: CoreSpeed.h; none given, no
/// probe).
struct PeakUnit {
  const char *kind, *unit;
  double (*measure)(unsigned threads, double seconds);
  PeakLoop (*loop)() = nullptr;
};

/// The unit `strategy`'s gmms run on for `target` (a module's #moe.target;
/// null: the target moec compiles for, --target-cpu's or this host's):
/// bf16 gmms (`bf16`) on AMX tiles where the strategy compiles them in and
/// Linux grants this process the tile state, else on AVX512_BF16 dot
/// products; int8 gmms (`int8`, a block moe-quantize made int8) on AMX
/// INT8 tiles, else AVX512-VNNI, else AVX2's vpmaddwd; all else, and bf16
/// on the FMA tiles (widened to f32), FP32 FMA. nullopt and `error` for a
/// strategy the target cannot run.
std::optional<PeakUnit> gmmPeakUnit(mlir::moe::strategy::GmmStrategy strategy, mlir::moe::TargetAttr target,
                                    bool bf16, bool int8, std::string &error);

/// The FP32 FMA unit: what a unit this host lacks (a target's, compiled for
/// another CPU) is measured by instead.
PeakUnit fp32PeakUnit();

} // namespace moec

#endif // MOEC_TOOLING_GMMPEAKUNIT_H
