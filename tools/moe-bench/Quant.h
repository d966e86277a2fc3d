//===- Quant.h - moe-bench's int8 modes -----------------------------------===//
//
// --quant-mode: the block compiled through moe-quantize, its weights
// quantized once before the timed runs (<f>_prepare_weights, as a serving
// host would at load time), and its outputs compared with the f32 block's
// on the same inputs.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLS_MOEBENCH_QUANT_H
#define MOEC_TOOLS_MOEBENCH_QUANT_H

#include "BenchChoices.h"
#include "runtime/Buffer.h"

#include <map>
#include <string>
#include <vector>

namespace moebench {

/// --quant-mode and --quant-weight-scales: the float block, or moe-quantize's
/// mode and scales.
struct QuantChoice {
  QuantRun run = QuantRun::none;
  mlir::moe::QuantWeightScales weightScales = mlir::moe::QuantWeightScales::channel;

  bool enabled() const { return run != QuantRun::none; }
  /// int8 arithmetic (the others run float kernels).
  bool realInt8() const { return run == QuantRun::int8 || run == QuantRun::int8Routed; }
  /// The routed experts only (the shared expert stays float).
  bool routedOnly() const { return run == QuantRun::int8Routed; }
  /// For reports: "none", "int8", ...; "channel" or "expert".
  std::string modeName() const { return kQuantRunChoices.name(run).str(); }
  std::string scalesName() const {
    return mlir::moe::kQuantWeightScalesChoices.name(weightScales).str();
  }
  /// The moe-quantize pass for it; training keeps the weights' quantization
  /// in the function (they change every step).
  std::string pipeline(bool training) const;
};

/// ||a - ref||_2 / ||ref||_2 over every element, in double (0 when both are
/// zero); -1 when the shapes differ.
double relativeError(const moec::Buffer &a, const moec::Buffer &ref);

/// `b` as f32 (a copy; bf16 widened exactly).
moec::Buffer widenToF32(const moec::Buffer &b);

} // namespace moebench

#endif
