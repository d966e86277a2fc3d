//===- RematReport.cpp - the moe-remat-report pass ------------------------===//
//
// What each remat policy would keep and recompute for the program at hand,
// from the same analysis the moe-remat pass decides with (passes/Remat.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Remat.h"

#include "dialect/MoeDialect.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEREMATREPORT
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

/// "moe.gmm -> tensor<24x20xf32>".
std::string describe(Value v) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << v.getDefiningOp()->getName() << " -> " << v.getType();
  return text;
}

void printRow(llvm::raw_ostream &os, StringRef policy, const RematCost &cost) {
  os << llvm::format("  %-12s %16lld %18lld", policy.str().c_str(),
                     static_cast<long long>(cost.keptBytes),
                     static_cast<long long>(cost.recomputedFlops));
  os << llvm::format("   (%.3f MiB kept, %.4f GFLOP recomputed)",
                     cost.keptBytes / 1048576.0, cost.recomputedFlops * 1e-9);
  if (cost.dynamic)
    os << " + values of dynamic size";
  os << "\n";
}

struct RematReport : moe::impl::MoeRematReportBase<RematReport> {
  using Base::Base;

  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    bool any = false;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr(kGradientArgsAttrName))
        continue;
      any = true;
      RematAnalysis analysis(fn);
      os << "remat report for @" << fn.getSymName()
         << " (kept: bytes of forward values the backward reads; recomputed: forward FLOPs "
            "the backward repeats)\n";
      os << llvm::format("  %-12s %16s %18s\n", "policy", "kept_bytes", "recomputed_flops");
      SmallVector<std::pair<StringRef, RematCost>> rows;
      for (RematPolicy p : {RematPolicy::none, RematPolicy::expertMlp, RematPolicy::combine})
        rows.push_back({kRematPolicyChoices.name(p), analysis.cost(analysis.recomputedBy(p))});
      for (auto &[name, cost] : rows)
        printRow(os, name, cost);
      if (activationBudget >= 0) {
        RematCost best;
        if (analysis.choose(activationBudget, best)) {
          printRow(os, "auto", best);
          os << "  auto keeps at most " << static_cast<int64_t>(activationBudget) << " bytes\n";
        } else {
          os << "  auto: no choice keeps at most " << static_cast<int64_t>(activationBudget)
             << " bytes; the least is " << best.keptBytes << "\n";
        }
        rows.push_back({"auto", best});
      }
      for (auto &[name, cost] : rows) {
        os << "  kept by " << name << ":";
        if (cost.kept.empty())
          os << " nothing";
        os << "\n";
        for (Value v : cost.kept) {
          os << "    " << describe(v);
          if (std::optional<int64_t> bytes = tensorBytes(v))
            os << "  " << *bytes << " bytes";
          os << "\n";
        }
      }
    }
    if (!any)
      os << "remat report: no forward_backward function (run moe-generate-backward first)\n";
    os.flush();
  }
};

} // namespace
