//===- AutoParallel.cpp - a module's block through the parallel plans -----===//

#include "tooling/AutoParallel.h"

#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"
#include "runtime/ThreadLimit.h"
#include "tooling/Peak.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace moec;

std::optional<Workload> moec::blockWorkload(mlir::ModuleOp module, bool training,
                                            int64_t tokens, bool capacityFactor,
                                            std::string &error) {
  llvm::SmallVector<mlir::moe::BlockOp> blocks;
  module.walk([&](mlir::moe::BlockOp block) { blocks.push_back(block); });
  if (blocks.empty()) {
    // moe-partition says the same for dp and ep.
    error = "--parallel-mode auto plans one moe.block, and the program has none (moe-expand-block "
            "or moe-quantize expands them, and a plan partitions the block before they run): "
            "plan the block before expanding or quantizing it, or run this program on one device "
            "(without --parallel-mode)";
    return std::nullopt;
  }
  if (blocks.size() != 1) {
    error = "--parallel-mode auto plans one moe.block; the program has " +
            std::to_string(blocks.size()) + " (choose the plan: --parallel-mode dp or ep)";
    return std::nullopt;
  }
  mlir::moe::BlockOp block = blocks.front();
  auto x = mlir::cast<mlir::RankedTensorType>(block.getX().getType());
  Workload w;
  w.tokens = x.getDimSize(0), w.hidden = x.getDimSize(1);
  w.staticTokens = !mlir::ShapedType::isDynamic(w.tokens);
  w.capacityFactor = capacityFactor;
  if (!w.staticTokens && tokens > 0)
    w.tokens = tokens;
  w.mlp = block.getExpertDim(), w.experts = block.getNumExperts();
  w.topk = int64_t(block.getK()), w.shared = block.getSharedDim();
  for (int64_t size : {w.tokens, w.hidden, w.mlp, w.experts, w.shared})
    if (mlir::ShapedType::isDynamic(size)) {
      error = mlir::ShapedType::isDynamic(w.tokens)
                  ? "--parallel-mode auto plans for a token count, and the block's is "
                    "dynamic: run it (moec run takes the count from --dim or the x input), "
                    "or choose the plan (--parallel-mode dp or ep)"
                  : "--parallel-mode auto plans a block of static sizes (this one's are "
                    "dynamic): choose the plan (--parallel-mode dp or ep)";
      return std::nullopt;
    }
  w.elementBytes = x.getElementType().isBF16() ? 2 : 4;
  w.training = training;
  w.nullDraws = bool(block.getNullDraws());
  if (std::optional<llvm::APFloat> f = block.getNullFraction())
    w.nullFraction = f->convertToDouble();
  return w;
}

int64_t moec::defaultDevices(mlir::ModuleOp module, unsigned threads) {
  if (auto target = module->getAttrOfType<mlir::moe::TargetAttr>(mlir::moe::kTargetAttrName))
    if (target.getThreads() > 0)
      return target.getThreads();
  return threadsOrCores(threads);
}

std::string moec::shareOfPeak(const char *unitKind) {
  return llvm::formatv("{0:f2} of the {1} peak", kGmmShareOfPeak, unitKind).str();
}

Machine moec::measureHostMachine(unsigned threads, int64_t devices, Launcher launcher,
                                const PeakUnit &unit) {
  unsigned total = threadsOrCores(threads);
  Machine m;
  m.coresPerShard = threadsPerShard(total, devices, launcher);
  m.coreRateFrom = shareOfPeak(unit.kind);
  m.rateUnit = unit.unit;
  double peak = unit.measure(total, 0.1);
  if (!(peak > 0)) {
    // The target's unit is not on this host (compiled for another CPU):
    // rated at the FP32 FMA peak, which every x86-64 host has, and said
    // so, rather than every plan at no rate.
    PeakUnit fp32 = fp32PeakUnit();
    peak = fp32.measure(total, 0.1);
    m.coreRateFrom = shareOfPeak(fp32.kind) + "; this host has no " + unit.kind;
    m.rateUnit = fp32.unit;
  }
  m.coreGflops = kGmmShareOfPeak * peak / total;
  m.linkGBps = measureCopyGBps();
  return m;
}

void moec::describePredictions(llvm::raw_ostream &os, const Workload &w, const Machine &m,
                               int64_t devices, const Plan &chosen) {
  std::string from = m.coreRateFrom.empty() ? "" : " (" + m.coreRateFrom + ")";
  os << llvm::format("model: core %.1f %s%s x %lld per shard (half rate at %.0f rows per "
                     "expert, tgmm at %.0f, training at %.2f of the rate), link %.1f GB/s, "
                     "%.1f us per step\n",
                     m.coreGflops, m.rateUnit.c_str(), from.c_str(), (long long)m.coresPerShard, m.halfRateRows,
                     m.tgmmHalfRateRows, m.trainingShare, m.linkGBps, m.linkLatencyUs);
  for (const Plan &candidate : candidatePlans(w, devices)) {
    Prediction p = predict(w, candidate, m);
    os << llvm::format("model: %-32s %9.4f s (compute %.4f s, comm %.4f s, %.2f MiB per shard, "
                       "%lld collectives)%s\n",
                       candidate.str().c_str(), p.totalS(), p.computeS, p.commS,
                       p.commBytes / 1048576.0, (long long)p.collectives,
                       candidate.str() == chosen.str() ? "  <- fastest" : "");
  }
}
