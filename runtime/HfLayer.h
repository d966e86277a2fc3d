//===- HfLayer.h - a Hugging Face model's MoE layer as a moe.block -*- C++ -*-===//
//
// What a model's config.json says of one layer's MoE block, in the terms
// of moe.block (shared/docs/model-families.md): the family, the sizes, the
// routing knobs; the block function's arguments in order; and the mapping
// from the checkpoint's tensor names and layouts ([out, in] linear weights,
// one tensor per expert, GPT-OSS's stacked interleaved gate/up) to those
// arguments, done once when the weights are loaded. Plain C++ (the JSON is
// nlohmann-json's): frontend/HfBlock builds the block op from it.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_HFLAYER_H
#define MOEC_RUNTIME_HFLAYER_H

#include "runtime/Buffer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moec {

class Checkpoint;

struct HfLayer {
  std::string modelType; // the config's model_type
  std::string family;    // moe.block's family name
  int64_t layer = 0;
  int64_t hidden = 0, mlp = 0, experts = 0, k = 0;
  int64_t shared = 0; // the shared expert's width (0: none)
  // Routing (moe.block's attributes of the same names).
  bool sigmoid = false, softmaxThenTopk = false, renormalize = false;
  bool routerBias = false, selectionBias = false;
  int64_t groups = 1, topkGroups = 1;
  bool top2Sum = false;
  double routedScaling = 1.0;
  // Experts.
  bool expertBias = false, gptOss = false, interleaved = false, weightInput = false;
  bool sharedGate = false;
  double alpha = 1.702, limit = 7.0;
  /// The tensor names' prefix of the layer's block, e.g. "model.layers.3.mlp.".
  std::string prefix;
};

/// The form of `family`'s layer (moe.block's family names) at these sizes,
/// with the knobs its released models use (a config.json sets its own):
/// routing, experts, a shared expert of the family's usual width. The one
/// table of the families' forms: readHfLayer starts from it, moe-bench
/// --family benchmarks it, the differential tests draw from it. Nullopt
/// for a name that is not a family.
std::optional<HfLayer> familyLayer(const std::string &family, int64_t hidden, int64_t mlp,
                                   int64_t experts, int64_t k);

/// The MoE block of layer `layer` of the model `configPath` describes (its
/// config.json; Llama-4's text model under "text_config"). Nullopt with the
/// reason: an unreadable or malformed file, a model_type moec does not
/// know, a missing or wrong-typed key, a layer out of range or dense.
/// `layer` kFirstMoeLayer: the model's first MoE layer.
inline constexpr int64_t kFirstMoeLayer = -1;
std::optional<HfLayer> readHfLayer(const std::string &configPath, int64_t layer, std::string &error);

/// One argument of the block function: x (tokens dynamic, -1) and then the
/// weights, in order.
struct HfArgument {
  std::string name; // the block's operand it is (x, router, w13, ...)
  std::vector<int64_t> shape;
  DType dtype;
};
/// The block function's arguments for `l` with activations and weights in
/// `dtype` (the selection bias is f32).
std::vector<HfArgument> hfBlockArguments(const HfLayer &l, DType dtype);

/// The weights (every argument after x), read from `checkpoint` in the
/// family's names and turned into the block's layouts: [E, H] routers and
/// [M, H] per-expert linears transposed, experts stacked, gate and up side
/// by side. False with the file and tensor in `error`.
bool loadHfWeights(const HfLayer &l, const Checkpoint &checkpoint, DType dtype,
                   std::vector<Buffer> &weights, std::string &error);

} // namespace moec

#endif // MOEC_RUNTIME_HFLAYER_H
