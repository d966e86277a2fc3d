//===- MoeAttrs.cpp - #moe.target and #moe.gmm_lowering -------------------===//

#include "dialect/MoeDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::moe;

#define GET_ATTRDEF_CLASSES
#include "dialect/MoeAttrs.cpp.inc"

void MoeDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/MoeAttrs.cpp.inc"
      >();
}

ArrayRef<StringLiteral> mlir::moe::gmmKernelKinds() {
  static constexpr StringLiteral kinds[] = {"reference",   "fma",       "avx512bf16_dot", "amx_bf16",
                                            "int8_vector", "int8_avx2", "int8_vnni",      "amx_int8"};
  return kinds;
}

ArrayRef<StringLiteral> mlir::moe::targetFeatureNames() {
  static constexpr StringLiteral names[] = {"avx2",       "fma",      "avx512f",  "avx512bf16",
                                            "avx512vnni", "amx-tile", "amx-bf16", "amx-int8"};
  return names;
}

namespace {
/// Whether `array` holds only strings, each once, each one of `known`.
LogicalResult uniqueStrings(function_ref<InFlightDiagnostic()> emitError, ArrayAttr array,
                            StringRef what, ArrayRef<StringLiteral> known) {
  llvm::StringSet<> seen;
  for (Attribute a : array) {
    auto s = dyn_cast<StringAttr>(a);
    if (!s)
      return emitError() << what << "s must be strings, got " << a;
    if (!llvm::is_contained(known, s.getValue()))
      return emitError() << "unknown " << what << " '" << s.getValue() << "' (expected one of: "
                         << llvm::join(known, ", ") << ")";
    if (!seen.insert(s.getValue()).second)
      return emitError() << what << " '" << s.getValue() << "' is listed twice";
  }
  return success();
}

bool contains(ArrayAttr array, StringRef name) {
  return array && llvm::any_of(array, [&](Attribute a) {
           auto s = dyn_cast<StringAttr>(a);
           return s && s.getValue() == name;
         });
}
} // namespace

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef cpu,
                                 ArrayAttr features, int64_t vectorRegisters, int64_t l1Bytes,
                                 int64_t l2Bytes, int64_t threads) {
  if (cpu.empty())
    return emitError() << "#moe.target needs a CPU name";
  if (failed(uniqueStrings(emitError, features, "target feature", targetFeatureNames())))
    return failure();
  if (vectorRegisters < 1 || vectorRegisters > kMaxTileRegisters)
    return emitError() << "#moe.target vector_registers must be in [1, " << kMaxTileRegisters << "], got "
                       << vectorRegisters;
  if (l1Bytes < 1024 || l2Bytes < l1Bytes)
    return emitError() << "#moe.target caches must be at least 1 KiB with l2_bytes >= l1_bytes, got l1_bytes = "
                       << l1Bytes << ", l2_bytes = " << l2Bytes;
  if (threads < 0)
    return emitError() << "#moe.target threads must be >= 0 (0: not known), got " << threads;
  return success();
}

bool TargetAttr::hasFeature(StringRef feature) const { return contains(getFeatures(), feature); }

LogicalResult GmmLoweringAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayAttr kernels,
                                      int64_t mr, int64_t nv, int64_t kc, int64_t nc, int64_t mc,
                                      int64_t packedColumns, int64_t amxMinRows, int64_t dotRows,
                                      ArrayAttr fuse) {
  if (kernels.empty())
    return emitError() << "#moe.gmm_lowering needs at least one kernel kind";
  if (failed(uniqueStrings(emitError, kernels, "gmm kernel kind", gmmKernelKinds())))
    return failure();
  bool reference = contains(kernels, "reference");
  if (reference && kernels.size() != 1)
    return emitError() << "the reference kernel runs alone";
  static constexpr StringLiteral fusions[] = {"gather", "swiglu"};
  if (fuse && failed(uniqueStrings(emitError, fuse, "gmm fusion", fusions)))
    return failure();
  if (reference) {
    if (mr || nv || kc || nc || mc || packedColumns || amxMinRows || dotRows || (fuse && !fuse.empty()))
      return emitError() << "the reference kernel takes no tiles, thresholds or fusions";
    return success();
  }
  // Without tiles, the lowering of a moe.tgmm (whose op verifier holds it
  // to one kind, and a moe.gmm's to having tiles): a kind and nothing the
  // gmm kernels read.
  if (!(mr || nv || kc || nc || mc)) {
    if (packedColumns || amxMinRows || dotRows || (fuse && !fuse.empty()))
      return emitError() << "a lowering without tiles (a moe.tgmm's) takes no packed_columns, "
                            "amx_min_rows, dot_rows or fusions";
    return success();
  }
  // Each number belongs to the kinds that read it: one no listed kind reads
  // would be an edit that silently changes nothing.
  bool packed = llvm::any_of(kernels, [](Attribute a) { return cast<StringAttr>(a).getValue() != "fma"; });
  if (packed && (packedColumns < 32 || packedColumns % 32))
    return emitError() << "the packed kernels need packed_columns, a positive multiple of 32, got "
                       << packedColumns;
  if (!packed && packedColumns)
    return emitError() << "packed_columns is read by the packed kernels only, not by fma";
  bool amx = contains(kernels, "amx_bf16") || contains(kernels, "amx_int8");
  if (amx && kernels.size() < 2)
    return emitError() << "the AMX kernels need another kind beside them: Linux may refuse the "
                          "tile state at run time";
  if (amx && amxMinRows < 1)
    return emitError() << "the AMX kernels need amx_min_rows > 0";
  if (!amx && amxMinRows)
    return emitError() << "amx_min_rows is read by the AMX kernels only";
  bool dot = contains(kernels, "avx512bf16_dot");
  if (dot && dotRows < 1)
    return emitError() << "avx512bf16_dot needs dot_rows > 0";
  if (!dot && dotRows)
    return emitError() << "dot_rows is read by avx512bf16_dot only";
  int int8Kinds =
      contains(kernels, "int8_vector") + contains(kernels, "int8_avx2") + contains(kernels, "int8_vnni");
  if (int8Kinds > 1)
    return emitError() << "int8_vector, int8_avx2 and int8_vnni are alternatives: list one";
  // The tiles (a gmm's: the fma kernel's, and the task table's row and
  // column blocks for every kind).
  if (std::string why = gmmTileError(mr, nv, kc, nc, mc, contains(fuse, "swiglu")); !why.empty())
    return emitError() << why;
  return success();
}

std::string mlir::moe::gmmTileError(int64_t mr, int64_t nv, int64_t kc, int64_t nc, int64_t mc,
                                    bool swiglu) {
  if (mr <= 0 || nv <= 0 || kc <= 0 || nc <= 0 || mc <= 0)
    return "every tile size must be positive";
  // Bounds before any arithmetic on them (16 * nv, mr * nv and the blocks'
  // products in the lowering must not overflow): a register tile is at most
  // the 64 registers a #moe.target may have, and a block at most 2^20 of its
  // dimension, far past any cache.
  if (mr > kMaxTileRegisters || nv > kMaxTileRegisters || mr * nv > kMaxTileRegisters)
    return "register tile mr=" + std::to_string(mr) + " x nv=" + std::to_string(nv) +
           " is larger than any target's " + std::to_string(kMaxTileRegisters) + " vector registers";
  if (kc > kMaxTileBlock || nc > kMaxTileBlock || mc > kMaxTileBlock)
    return "kc, nc and mc must be at most " + std::to_string(kMaxTileBlock) + ", got kc=" +
           std::to_string(kc) + ", nc=" + std::to_string(nc) + ", mc=" + std::to_string(mc);
  // A panel's first half is gate columns, its second up ones: whole
  // vectors, or with one vector a row its two halves.
  if (swiglu && nv != 1 && nv % 2)
    return "nv must be 1 or even when SwiGLU is fused (half the panel gate, half up)";
  if (nc % (16 * nv))
    return "nc=" + std::to_string(nc) + " must be a multiple of the register tile's " +
           std::to_string(16 * nv) + " columns";
  if (mc % mr)
    return "mc=" + std::to_string(mc) + " must be a multiple of mr=" + std::to_string(mr);
  return "";
}

bool GmmLoweringAttr::hasKernel(StringRef kind) const {
  assert(llvm::is_contained(gmmKernelKinds(), kind) && "not a gmm kernel kind: a typo?");
  return contains(getKernels(), kind);
}
bool GmmLoweringAttr::fuses(StringRef what) const { return contains(getFuse(), what); }
