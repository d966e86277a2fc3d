//===- CopiesToLinalg.cpp - the moe-copies-to-linalg pass -----------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOECOPIESTOLINALG
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {
bool contiguous(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  return type && type.getLayout().isIdentity();
}

struct MoeCopiesToLinalgPass
    : mlir::moe::impl::MoeCopiesToLinalgBase<MoeCopiesToLinalgPass> {
  using MoeCopiesToLinalgBase::MoeCopiesToLinalgBase;
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};
} // namespace
