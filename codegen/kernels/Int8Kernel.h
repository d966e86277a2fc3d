//===- Int8Kernel.h - what the int8 kinds off AMX share ---------*- C++ -*-===//
//
// The int8 kinds without tiles (int8_vnni, int8_avx2, int8_vector) divide
// the work alike: the rows quantized once before the tasks
// (PackedOperands::quantizeRows; gathered, each token once, read through
// PackedOperands::quantizedRow), tasks of at most kMaxInt8Rows rows in
// granules of a VNNI register tile, and the packed operands' column blocks.
// Each kind's file adds its scratch and its task's code.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_CODEGEN_KERNELS_INT8KERNEL_H
#define MOEC_CODEGEN_KERNELS_INT8KERNEL_H

#include "codegen/kernels/GmmKernel.h"
#include "codegen/kernels/PackedOperands.h"

namespace mlir::moe::codegen {

class Int8Kernel : public GmmKernel {
public:
  Int8Kernel(Emitter &e, const GmmKernelPlan &plan, PackedOperands &ops) : GmmKernel(e, plan), ops(ops) {}

  int64_t rowGranule() const override { return PackedOperands::kInt8RowGranule; }
  Value rowBlock(Value groupRows) override {
    return evenRowBlock(e, groupRows, PackedOperands::kMaxInt8Rows, PackedOperands::kInt8RowGranule);
  }
  int64_t columnBlock() const override { return ops.columnBlock(); }
  void prepare() override { ops.quantizeRows(); }

protected:
  PackedOperands &ops;
};

/// GmmKernelKind::make of an int8 kind `Kind`: the kind for int8 plans, none
/// for float ones.
template <class Kind>
std::unique_ptr<GmmKernel> makeInt8Kernel(Emitter &e, const GmmKernelPlan &plan, PackedOperands &shared) {
  if (!plan.int8)
    return nullptr;
  return std::make_unique<Kind>(e, plan, shared);
}

} // namespace mlir::moe::codegen

#endif // MOEC_CODEGEN_KERNELS_INT8KERNEL_H
