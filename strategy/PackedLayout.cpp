//===- PackedLayout.cpp - the weight layout a gmm's kernels read ----------===//

#include "strategy/PackedLayout.h"
#include "strategy/GmmTiling.h"

using namespace mlir;
using namespace mlir::moe;

std::optional<strategy::PackedLayout> strategy::packedLayoutFor(GmmOp gate, SwigluOp swiglu,
                                                                GmmLoweringAttr lowering) {
  if (!lowering || lowering.isReference() || gate.getTransposeRhs())
    return std::nullopt;
  auto allKinds = [&](std::initializer_list<StringRef> kinds) {
    return llvm::all_of(lowering.getKernels(),
                        [&](Attribute kind) { return llvm::is_contained(kinds, cast<StringAttr>(kind).getValue()); });
  };
  bool pairs = allKinds({"avx512bf16_dot", "amx_bf16"});
  // int8_vector reads the weights in place: no packed layout beside it.
  bool quads = allKinds({"int8_vnni", "int8_avx2", "amx_int8"});
  bool fmaOnly = lowering.getKernels().size() == 1 && lowering.hasKernel("fma");
  // Interleaved gate/up columns are one plain run of 2N weight columns, in
  // the kernels as in the layout.
  bool gateUp = swiglu && !swiglu.getInterleaved();
  PackedLayout layout;
  if (gate.isQuantized()) {
    if (!quads)
      return std::nullopt;
    // PackedOperands: 16-column tiles of depth quads (W + 128), paired as
    // the bf16 tiles are.
    layout = {4, 16, lowering.getPackedColumns(), gateUp ? 32 : 0};
  } else if (pairs && gate.isPackableBf16()) {
    // PackedOperands: 16-column tiles of depth pairs; a column pair (32) is
    // a gate tile and an up tile.
    layout = {2, 16, lowering.getPackedColumns(), gateUp ? 32 : 0};
  } else if (fmaOnly) {
    // FmaKernel: panels of nr columns over the whole depth, half gate and
    // half up with SwiGLU; a task's block is nc / nr panels. In the
    // weights' element: bf16 panels are half the bytes a decode-size batch
    // streams (FmaKernel widens them: in the tile for a task of one
    // register tile, a depth block at a time for a task of more).
    GmmTiling tiling = GmmTiling::of(lowering);
    int64_t nr = 16 * tiling.vectors;
    if (nr <= 0 || tiling.columnBlock < nr)
      return std::nullopt;
    layout = {1, nr, tiling.columnBlock / nr * nr, gateUp ? nr : 0};
  } else {
    return std::nullopt;
  }
  if (layout.blockColumns <= 0)
    return std::nullopt;
  return layout;
}

FailureOr<RankedTensorType> strategy::packedWeightsType(GmmOp gate, GmmOp up, const PackedLayout &layout,
                                                        std::string &why) {
  auto type = [](GmmOp g) { return g ? cast<RankedTensorType>(g.getRhs().getType()) : RankedTensorType(); };
  return PackWeightsOp::packedType(type(gate), type(up), layout.lanes, layout.tileColumns,
                                   layout.blockColumns, layout.gateUpUnit, why);
}
