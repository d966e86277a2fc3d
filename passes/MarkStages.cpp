//===- MarkStages.cpp - a runtime mark before each stage of a function ----===//
//
// Written by hand: upstream has no per-op timing of generated code (MLIR's
// --mlir-timing times passes, not the program), and a profiler's samples
// cannot tell which moe op a kernel loop came from once the ops are
// lowered. The marks are placed at the tensor level, where each stage is
// still one op.
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "runtime/RuntimeAbi.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEMARKSTAGES
#include "passes/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;
using namespace mlir::moe;

namespace {

/// "32768x2816" for a ranked tensor ("?" for a dynamic size), "" otherwise.
std::string shapeOf(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return "";
  std::string s;
  for (int64_t d : ranked.getShape())
    s += (s.empty() ? "" : "x") + (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s.empty() ? "scalar" : s;
}

bool hasTensorResult(Operation *op) {
  return llvm::any_of(op->getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); });
}

/// Ops that move no data or only metadata: they join the stage before.
bool costsNothing(Operation *op) {
  return isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp, tensor::CastOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractOp,
             tensor::FromElementsOp, tensor::ExtractSliceOp>(op) ||
         !hasTensorResult(op);
}

/// Ops whose code a #moe.gmm_lowering's fusion puts elsewhere (as
/// moe-lower-to-loops follows it): a gather every user reads through, and
/// a gmm that fuses its SwiGLU (its kernel goes where the SwiGLU is). They
/// start no stage.
bool fusedAway(Operation *op) {
  if (auto gather = dyn_cast<GatherRowsOp>(op))
    return gatherFusedIntoUsers(gather);
  GmmLoweringAttr lowering = isa<GmmOp>(op) ? fastLoweringOf(op) : GmmLoweringAttr();
  return lowering && lowering.fuses("swiglu");
}

/// "gather+gmm+swiglu" and its shape for the stage a fused gmm kernel runs
/// in (the gmm's, then the SwiGLU's op), or "".
std::string fusedGmmStage(Operation *op) {
  auto gmm = dyn_cast<GmmOp>(op);
  if (auto swiglu = dyn_cast<SwigluOp>(op)) {
    Operation *input = swiglu->getOperand(0).getDefiningOp();
    if (!isa_and_nonnull<GmmOp>(input) || !fusedAway(input))
      return "";
    gmm = cast<GmmOp>(input);
  } else if (!gmm || !readsThroughGather(gmm)) {
    return "";
  }
  return std::string(readsThroughGather(gmm) ? "gather+" : "") + "gmm" +
         (gmm.getTransposeRhs() ? "^T" : "") + (isa<SwigluOp>(op) ? "+swiglu " : " ") +
         shapeOf(gmm.getType());
}

/// What a stage starting at `op` is called, and whether an op of the same
/// name right after it joins it (elementwise runs) or starts its own; ""
/// when `op` joins the stage before.
std::pair<std::string, bool> stageOf(Operation *op) {
  if (costsNothing(op) || fusedAway(op))
    return {"", false};
  StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
  std::string name;
  bool merges = false;
  if (std::string fused = fusedGmmStage(op); !fused.empty()) {
    name = fused;
  } else if (dialect == MoeDialect::getDialectNamespace() || dialect == "linalg") {
    name = op->getName().stripDialect().str() + " " + shapeOf(op->getResult(0).getType());
    if (auto gmm = dyn_cast<GmmOp>(op); gmm && gmm.getTransposeRhs())
      name = "gmm^T " + shapeOf(gmm.getType());
  } else if (dialect == "arith" || dialect == "math") {
    name = "elementwise";
    merges = true;
  } else {
    name = op->getName().getStringRef().str() + " " + shapeOf(op->getResult(0).getType());
  }
  if (op->hasAttr(kAdjointAttrName))
    name = "bwd " + name;
  return {name, merges};
}

bool callsDefinedFunction(func::FuncOp fn, ModuleOp module) {
  WalkResult r = fn.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    return callee && !callee.isDeclaration() ? WalkResult::interrupt() : WalkResult::advance();
  });
  return r.wasInterrupted();
}

struct MoeMarkStagesPass : mlir::moe::impl::MoeMarkStagesBase<MoeMarkStagesPass> {
  using MoeMarkStagesBase::MoeMarkStagesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> only;
    for (const std::string &f : functions)
      only.insert(f);
    SmallVector<func::FuncOp> marked;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration() || fn->hasAttr(kStagesAttrName) ||
          fn.getSymName() == moec::abi::stageMarkEntryPoint())
        continue;
      if (!only.empty() && !only.contains(fn.getSymName()))
        continue;
      // One block of straight-line code: stages in program order are the
      // order they run in. A function calling another with a body (a
      // prepared block's @f calls its two halves) would get the callee's
      // marks in its own stage numbers: it is timed through its callees.
      if (!fn.getBody().hasOneBlock() || callsDefinedFunction(fn, module))
        continue;
      marked.push_back(fn);
    }
    for (const std::string &f : functions)
      if (!module.lookupSymbol<func::FuncOp>(f)) {
        module.emitError() << "moe-mark-stages: no function @" << f << " to mark";
        return signalPassFailure();
      }
    // The runtime's mark takes the stage number; a function of the same
    // name and another type would make every call invalid.
    auto markType = FunctionType::get(&getContext(), {IntegerType::get(&getContext(), 64)}, {});
    if (auto existing = module.lookupSymbol<func::FuncOp>(moec::abi::stageMarkEntryPoint());
        existing && existing.getFunctionType() != markType) {
      existing.emitError() << "moe-mark-stages: @" << moec::abi::stageMarkEntryPoint() << " is "
                           << existing.getFunctionType() << ", but the runtime's stage mark is "
                           << markType;
      return signalPassFailure();
    }
    for (func::FuncOp fn : marked)
      mark(fn);
  }

  void mark(func::FuncOp fn) {
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    auto i64 = b.getI64Type();
    func::FuncOp markFn = declareRuntimeFunction(fn, moec::abi::stageMarkEntryPoint(),
                                                 FunctionType::get(ctx, {i64}, {}));
    auto markAt = [&](Location loc, int64_t stage) {
      Value id = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(stage));
      func::CallOp::create(b, loc, markFn, ValueRange{id});
    };
    SmallVector<Attribute> names;
    std::string current;
    bool currentMerges = false;
    for (Block &block : fn.getBody()) { // one block (runOnOperation)
      // Copied: the marks go in as the walk goes.
      SmallVector<Operation *> ops;
      for (Operation &op : block)
        ops.push_back(&op);
      for (Operation *op : ops) {
        if (op->hasTrait<OpTrait::ReturnLike>()) {
          b.setInsertionPoint(op);
          markAt(op->getLoc(), -1);
          continue;
        }
        auto [name, merges] = stageOf(op);
        if (name.empty() || (merges && currentMerges && name == current))
          continue;
        // The first stage starts at the entry: nothing before it untimed.
        if (names.empty() && block.isEntryBlock())
          b.setInsertionPointToStart(&block);
        else
          b.setInsertionPoint(op);
        markAt(op->getLoc(), int64_t(names.size()));
        names.push_back(StringAttr::get(ctx, name));
        current = name, currentMerges = merges;
      }
    }
    if (names.empty()) { // nothing but returns: one stage, the whole call
      b.setInsertionPointToStart(&fn.getBody().front());
      markAt(fn.getLoc(), 0);
      names.push_back(StringAttr::get(ctx, "call"));
    }
    fn->setAttr(kStagesAttrName, ArrayAttr::get(ctx, names));
    numStagesMarked += names.size();
  }
};

} // namespace
