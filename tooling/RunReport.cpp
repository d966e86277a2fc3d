//===- RunReport.cpp - what a tool reports of its runs --------------------===//

#include "tooling/RunReport.h"

#include "runtime/AtomicFile.h"
#include "runtime/Invoke.h"
#include "runtime/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <memory>

using namespace moec;

double moec::medianOf(std::vector<double> seconds) {
  if (seconds.empty())
    return 0;
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  return n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
}

CommTotals moec::commTotals(const std::vector<RankStats> &ranks) {
  CommTotals totals;
  for (const RankStats &r : ranks) {
    totals.collectives = std::max(totals.collectives, r.comm.calls);
    totals.busiestBytes = std::max(totals.busiestBytes, r.comm.bytesSent);
    totals.routedRows += r.comm.localRows;
    totals.droppedRows += r.comm.droppedRows;
  }
  return totals;
}

std::string moec::droppedRowsLine(const CommTotals &totals, const std::string &scope) {
  if (totals.routedRows <= 0)
    return "";
  std::string line;
  llvm::raw_string_ostream os(line);
  os << "dropped: " << totals.droppedRows << " of " << totals.routedRows << " routed rows ("
     << llvm::format("%.2f", 100.0 * double(totals.droppedRows) / double(totals.routedRows))
     << "%) past the expert capacity" << scope;
  return line;
}

std::string moec::bufferSummary(const Buffer &buffer) {
  double sum = 0, sumAbs = 0;
  for (int64_t e = 0; e < buffer.numElements(); ++e) {
    sum += buffer.at(e);
    sumAbs += std::fabs(buffer.at(e));
  }
  std::string type = buffer.shape().empty()
                         ? std::string(dtypeName(buffer.dtype()))
                         : shapeString(buffer.shape()) + "x" + dtypeName(buffer.dtype());
  std::string line;
  llvm::raw_string_ostream os(line);
  os << type << " sum " << llvm::format("%.6e", sum) << " sum|x| "
     << llvm::format("%.6e", sumAbs);
  return line;
}

bool moec::writeNpyFiles(const std::string &dir,
                         const std::vector<std::pair<std::string, const Buffer *>> &files,
                         std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = dir + ": " + ec.message();
    return false;
  }
  std::vector<std::unique_ptr<PendingOutput>> pending;
  for (const auto &[name, buffer] : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    auto file = PendingOutput::create(std::string(path), error);
    if (!file)
      return false;
    if (!file->append(npyFileBytes(*buffer), error)) {
      error = std::string(path) + ": " + error;
      return false;
    }
    pending.push_back(std::move(file));
  }
  std::vector<PendingOutput *> set;
  for (auto &file : pending)
    set.push_back(file.get());
  return publishOutputs(set, error);
}
