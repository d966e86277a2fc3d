//===- Tune.cpp - moe-bench --tune: search the gmm tiles for a shape ------===//
//
// Coordinate search, not the full product: first the register tile and the
// depth block (with the cost model's column and row blocks), then the column
// and row blocks around the winner. 18 candidates a shape, each compiled and
// timed on a few experts' worth of rows of the block's mean group size (the
// same per-group work as the block, a fraction of its weights).
//
//===----------------------------------------------------------------------===//

#include "Tune.h"
#include "Session.h"

#include "strategy/GmmTiling.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <unistd.h>

using namespace moebench;
using mlir::moe::strategy::GmmShape;
using mlir::moe::strategy::GmmTiling;

namespace {
std::string gmmProgram(const GmmShape &shape, int64_t experts, int64_t groupRows,
                       const std::string &element) {
  int64_t R = experts * groupRows, D = shape.depth, N = shape.width;
  int64_t Nw = shape.swiglu ? 2 * N : N;
  auto t = [&](std::string dims) { return "tensor<" + dims + "x" + element + ">"; };
  std::string sizes = "dense<" + std::to_string(groupRows) + "> : tensor<" +
                      std::to_string(experts) + "xi32>";
  std::string lhs = t(std::to_string(R) + "x" + std::to_string(D));
  std::string rhs = t(std::to_string(experts) + "x" + std::to_string(D) + "x" + std::to_string(Nw));
  std::string out = t(std::to_string(R) + "x" + std::to_string(N));
  std::string s = "func.func @gmm(%a: " + lhs + ", %w: " + rhs + ") -> " + out + " {\n" +
                  "  %s = arith.constant " + sizes + "\n" + "  %h = moe.gmm %a, %w, %s : " + lhs +
                  ", " + rhs + ", tensor<" + std::to_string(experts) + "xi32>\n";
  if (!shape.swiglu)
    return s + "  return %h : " + out + "\n}\n";
  s += "  %o = moe.swiglu %h : " + t(std::to_string(R) + "x" + std::to_string(Nw)) + "\n";
  return s + "  return %o : " + out + "\n}\n";
}

std::vector<GmmTiling> firstRound(const GmmShape &shape, const GmmTiling &model, int64_t registers) {
  // The register tiles measured best with AVX-512's 32 vectors; where none
  // fits the target's register file (AVX2's 16 ymm hold 8 16-lane vectors),
  // the tallest tile of each width it holds instead.
  std::vector<std::pair<int64_t, int64_t>> tiles =
      shape.swiglu ? std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {14, 2}, {10, 2}}
                   : std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {14, 2}, {8, 3}};
  bool anyFits = llvm::any_of(
      tiles, [&](auto tile) { return GmmTiling::registersFor(tile.first, tile.second) <= registers; });
  for (int64_t nv : {1, 2, 4}) {
    int64_t mr = GmmTiling::maxRows(nv, registers);
    if (!anyFits && mr >= 1)
      tiles.push_back({mr, nv});
  }
  std::vector<GmmTiling> out;
  for (auto [mr, nv] : tiles)
    for (int64_t kc : {128, 256, 512}) {
      GmmTiling t = model;
      t.rows = mr, t.vectors = nv, t.depthBlock = std::min(kc, shape.depth);
      int64_t nr = 16 * nv;
      t.columnBlock = std::max(nr, model.columnBlock / nr * nr);
      t.rowBlock = std::max(mr, model.rowBlock / mr * mr);
      // A tile the target cannot hold (or the SwiGLU cannot split) would
      // only be refused by the lowering.
      if (t.invalidReason(shape.swiglu, registers).empty())
        out.push_back(t);
    }
  return out;
}

std::vector<GmmTiling> secondRound(const GmmTiling &best) {
  std::vector<GmmTiling> out;
  int64_t nr = 16 * best.vectors;
  for (int64_t panels : {2, 4, 8})
    for (int64_t tiles : {16, 32, 64}) {
      GmmTiling t = best;
      t.columnBlock = panels * nr;
      t.rowBlock = tiles * best.rows;
      out.push_back(t);
    }
  return out;
}
} // namespace

bool moebench::tuneGmmTiles(const TuneRequest &request, std::string &error) {
  const BlockConfig &c = request.config;
  int64_t bytes = c.dtype == moec::FloatType::bf16 ? 2 : 4;
  int64_t groupRows = std::max<int64_t>(1, c.tokens * c.topk / c.experts);
  int64_t experts = std::min<int64_t>(c.experts, 4);
  bool terminal = isatty(2);
  for (bool up : {true, false}) {
    GmmShape shape;
    shape.depth = up ? c.hidden : c.mlp;
    shape.width = up ? c.mlp : c.hidden;
    shape.swiglu = up;
    shape.elementBytes = bytes;
    mlir::moe::strategy::MachineModel machine = mlir::moe::strategy::MachineModel::target();
    GmmTiling model = mlir::moe::strategy::costModelTiling(shape, machine);
    std::string source = gmmProgram(shape, experts, groupRows, c.element());
    double flops = 2.0 * experts * groupRows * shape.depth * (up ? 2 * shape.width : shape.width);

    moec::DType dt = moec::dtypeOf(c.dtype);
    std::map<std::string, moec::Buffer> pool;
    pool["a"] = moec::Buffer(dt, {experts * groupRows, shape.depth});
    pool["w"] = moec::Buffer(dt, {experts, shape.depth, up ? 2 * shape.width : shape.width});
    fillUniform(pool["a"], request.seed + 11, 1.0f);
    fillUniform(pool["w"], request.seed + 12, 0.02f);

    std::vector<GmmTiling> candidates = firstRound(shape, model, machine.vectorRegisters);
    GmmTiling best = model;
    double bestRate = 0;
    auto start = std::chrono::steady_clock::now();
    // Until the first round ends, the second's size is its upper bound.
    int total = static_cast<int>(candidates.size() + secondRound(model).size()), done = 0;
    auto measure = [&](const GmmTiling &t) -> bool {
      moec::GmmChoices gmm;
      gmm.tiling = t.str();
      double compileS = 0;
      auto compiled = Compiled::build(source, gmm, compileS, error);
      if (!compiled)
        return false;
      std::vector<double> times;
      for (int i = 0; i < 4; ++i) {
        double s = compiled->call("gmm", pool, {"a", "w"}, {"o"}, error);
        if (s < 0)
          return false;
        if (i)
          times.push_back(s);
      }
      std::sort(times.begin(), times.end());
      double rate = flops / times[times.size() / 2] / 1e9;
      if (rate > bestRate)
        bestRate = rate, best = t;
      ++done;
      if (terminal) {
        double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        llvm::errs() << llvm::format("\rtune %s %s: %d/%d, best %s %.1f GFLOP/s, ~%.0f s left   ",
                                     up ? "up" : "down", shape.key().c_str(), done, total,
                                     best.str().c_str(), bestRate,
                                     elapsed / done * (total - done));
      }
      return true;
    };
    for (const GmmTiling &t : candidates)
      if (!measure(t))
        return false;
    GmmTiling firstBest = best;
    std::vector<GmmTiling> second = secondRound(firstBest);
    total = static_cast<int>(candidates.size() + second.size() -
                             std::count(second.begin(), second.end(), firstBest));
    for (const GmmTiling &t : second)
      if (!(t == firstBest) && !measure(t))
        return false;
    if (terminal)
      llvm::errs() << "\n";
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
    std::string comment = llvm::formatv("{0:F1} GFLOP/s, {1} threads, {2}", bestRate,
                                        request.threads, date)
                              .str();
    if (auto err = mlir::moe::strategy::storeTuningTable(request.table, shape, best, comment)) {
      error = llvm::toString(std::move(err));
      return false;
    }
    llvm::outs() << llvm::format("tune: %s %s -> %s, %.1f GFLOP/s (cost model %s), stored in %s\n",
                                 up ? "up" : "down", shape.key().c_str(), best.str().c_str(),
                                 bestRate, model.str().c_str(), request.table.c_str());
    llvm::outs().flush();
  }
  return true;
}
