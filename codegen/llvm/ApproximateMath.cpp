//===- ApproximateMath.cpp - the moe-approximate-vector-math pass ---------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEAPPROXIMATEVECTORMATH
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
struct MoeApproximateVectorMathPass
    : mlir::moe::impl::MoeApproximateVectorMathBase<MoeApproximateVectorMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> exps;
    getOperation()->walk([&](math::ExpOp op) {
      if (isa<VectorType>(op.getType()))
        exps.push_back(op);
    });
    if (exps.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == "exp" || name == "math.exp"; });
    if (failed(applyOpPatternsGreedily(exps, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
