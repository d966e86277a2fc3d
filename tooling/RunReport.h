//===- RunReport.h - what a tool reports of its runs -------------*- C++ -*-===//
//
// The numbers and files moec run and moe-bench report of their runs,
// computed and written one way: the median of the timed runs, the shards'
// traffic totals and the rows a capacity dropped, a result's fingerprint,
// and a set of .npy files written all or none.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_RUNREPORT_H
#define MOEC_TOOLING_RUNREPORT_H

#include "runtime/Buffer.h"
#include "runtime/ShardedRun.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace moec {

/// The median of `seconds` (the mean of the middle two of an even count);
/// 0 for none.
double medianOf(std::vector<double> seconds);

/// The shards' communication in one call: the most collectives and bytes
/// one shard sent (the busiest shard bounds the call), and the routed rows
/// of all shards with those a capacity dropped.
struct CommTotals {
  int64_t collectives = 0, busiestBytes = 0, routedRows = 0, droppedRows = 0;
};
CommTotals commTotals(const std::vector<RankStats> &ranks);

/// "dropped: D of R routed rows (P%) past the expert capacity<scope>", or ""
/// when no shard counted routed rows.
std::string droppedRowsLine(const CommTotals &totals, const std::string &scope);

/// A result's fingerprint: "4x8xf32 sum S sum|x| A" (a rank-0 result is its
/// element type alone), the sums in double.
std::string bufferSummary(const Buffer &buffer);

/// Writes each (file name, buffer) as `dir`/name in .npy form, creating
/// `dir`: every file, or none (published as one set, runtime/AtomicFile.h).
bool writeNpyFiles(const std::string &dir,
                   const std::vector<std::pair<std::string, const Buffer *>> &files,
                   std::string &error);

} // namespace moec

#endif // MOEC_TOOLING_RUNREPORT_H
