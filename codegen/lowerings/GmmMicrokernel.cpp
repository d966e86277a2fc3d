//===- GmmMicrokernel.cpp - moe.gmm to the fast gmm's tasks ---------------===//
//
// moe.gmm (with its SwiGLU and the gather of its rows, when
// #moe.gmm_lowering fuses them) as the plan the gmm kernels compute
// (kernels/GmmKernelPlan.h), on buffers, run as tasks of the attribute's
// kinds (kernels/GmmScheduler.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/lowerings/GmmMicrokernel.h"
#include "codegen/Emitter.h"
#include "codegen/kernels/GmmKernelPlan.h"
#include "codegen/kernels/GmmScheduler.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::moe;
using namespace mlir::moe::codegen;

namespace {
GmmKernelPlan planFromTensors(Emitter &e, GmmOp gate, GmmOp up, SwigluOp swiglu,
                              GatherRowsOp gather, const GmmTiling &tiling) {
  GmmKernelPlan plan;
  plan.tiling = tiling;
  plan.sizes = e.buffer(gate.getGroupSizes());
  auto gateType = cast<RankedTensorType>(gate.getType());
  plan.rowCount = gateType.isDynamicDim(0) ? Value() : e.index(gateType.getDimSize(0));
  if (gather) {
    plan.lhs = e.unitStrideBuffer(gather.getSrc());
    plan.perm = e.buffer(gather.getPermutation());
    plan.topK = gather.getK();
    if (!plan.rowCount)
      plan.rowCount = e.dim(plan.perm, 0);
  } else {
    plan.lhs = e.unitStrideBuffer(gate.getLhs());
    if (!plan.rowCount)
      plan.rowCount = e.dim(plan.lhs, 0);
  }
  plan.depth = cast<RankedTensorType>(gate.getLhs().getType()).getDimSize(1);
  // Packed weights are all the kernels read: rhs is not made a buffer
  // (moe-prepare-weights' @f_prepared passes a tensor.empty for it).
  if (gate.getPackedRhs())
    plan.packedRhs = e.unitStrideBuffer(gate.getPackedRhs());
  else
    plan.gateRhs = e.unitStrideBuffer(gate.getRhs());
  if (gate.isQuantized()) {
    plan.int8 = true;
    plan.gateScales = plan.upScales = e.unitStrideBuffer(gate.getRhsScales());
    plan.perChannel = cast<RankedTensorType>(gate.getRhsScales().getType()).getRank() == 2;
  }
  plan.transposeRhs = gate.getTransposeRhs();
  int64_t rhsWidth = cast<RankedTensorType>(gate.getRhs().getType()).getDimSize(plan.transposeRhs ? 1 : 2);
  plan.gateBias = gate.getBias() ? e.unitStrideBuffer(gate.getBias()) : Value();
  plan.upBias = plan.gateBias;
  if (swiglu) {
    plan.swiglu = true;
    plan.activation = ActivationSpec::of(swiglu);
    plan.interleaved = swiglu.getInterleaved();
    if (up) {
      plan.upBias = up.getBias() ? e.unitStrideBuffer(up.getBias()) : Value();
      if (!plan.packedRhs)
        plan.upRhs = e.unitStrideBuffer(up.getRhs());
      if (plan.int8)
        plan.upScales = e.unitStrideBuffer(up.getRhsScales());
      plan.upOffset = 0;
      plan.width = rhsWidth;
    } else {
      plan.upRhs = plan.gateRhs;
      plan.width = rhsWidth / 2;
      plan.upOffset = plan.width;
    }
  } else {
    plan.width = rhsWidth;
  }
  return plan;
}

} // namespace

void mlir::moe::codegen::lowerGmmMicrokernel(RewriterBase &rewriter, GmmOp gate, GmmOp up,
                                             SwigluOp swiglu, GmmLoweringAttr lowering) {
  Operation *root = swiglu ? swiglu.getOperation() : gate.getOperation();
  rewriter.setInsertionPoint(root);
  Emitter e(rewriter, root->getLoc());
  auto gather = lowering.fuses("gather") ? gate.getLhs().getDefiningOp<GatherRowsOp>() : GatherRowsOp();
  GmmKernelPlan plan = planFromTensors(e, gate, up, swiglu, gather, GmmTiling::of(lowering));
  plan.packedColumns = lowering.getPackedColumns();
  plan.amxMinRows = lowering.getAmxMinRows();
  plan.dotRows = lowering.getDotRows();
  auto type = cast<RankedTensorType>(root->getResult(0).getType());
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(plan.rowCount);
  plan.out = e.alloc(type, dyn);
  SmallVector<StringRef> kinds;
  for (Attribute kind : lowering.getKernels())
    kinds.push_back(cast<StringAttr>(kind).getValue());
  emitGmmTasks(e, plan, kinds, root);
  rewriter.replaceOp(root, e.tensor(plan.out, type));
  if (swiglu) {
    rewriter.eraseOp(gate);
    if (up)
      rewriter.eraseOp(up);
  }
  if (gather && gather->use_empty())
    rewriter.eraseOp(gather);
}
