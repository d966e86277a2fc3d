//===- HfLayer.cpp - a Hugging Face model's MoE layer as a moe.block -------===//

#include "runtime/HfLayer.h"
#include "runtime/MemoryGuard.h"

#include "runtime/AtomicFile.h"
#include "runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

using namespace moec;
using nlohmann::json;

namespace {

/// Reads config keys, the first error kept.
struct Keys {
  const json &config;
  const std::string &file;
  std::string error;

  bool ok() const { return error.empty(); }
  void fail(const std::string &what) {
    if (error.empty())
      error = file + ": " + what;
  }
  /// A positive integer `name`, or `fallback` when absent and given (>= 0).
  int64_t size(const char *name, int64_t fallback = -1) {
    if (!config.contains(name) || config[name].is_null()) {
      if (fallback < 0)
        fail(std::string("no \"") + name + "\"");
      return fallback;
    }
    if (!config[name].is_number_integer() || config[name].get<int64_t>() < 0) {
      fail(std::string("\"") + name + "\" is " + config[name].dump() + ", not a size");
      return 0;
    }
    // Bounded as it is read, so that no product of two sizes (the shared
    // expert's n_shared_experts x moe_intermediate_size) overflows before
    // the layer's sizes are checked.
    if (config[name].get<int64_t>() > (int64_t(1) << 31)) {
      fail(std::string("\"") + name + "\" is " + config[name].dump() + ", too large");
      return 0;
    }
    return config[name].get<int64_t>();
  }
  /// Key `name` of the JSON type `isType` tests (said as `kind` when it is
  /// not), or `fallback` when absent.
  template <typename T>
  T value(const char *name, T fallback, bool (json::*isType)() const noexcept,
          const char *kind) {
    if (!config.contains(name) || config[name].is_null())
      return fallback;
    if (!(config[name].*isType)()) {
      fail(std::string("\"") + name + "\" is " + config[name].dump() + ", not " + kind);
      return fallback;
    }
    return config[name].get<T>();
  }
  bool flag(const char *name, bool fallback) {
    return value(name, fallback, &json::is_boolean, "true or false");
  }
  double number(const char *name, double fallback) {
    return value(name, fallback, &json::is_number, "a number");
  }
  std::string text(const char *name, const std::string &fallback) {
    return value(name, fallback, &json::is_string, "a string");
  }
  /// Whether layer `layer` is listed in the integer list `name`.
  bool listed(const char *name, int64_t layer) {
    if (!config.contains(name) || config[name].is_null())
      return false;
    if (!config[name].is_array()) {
      fail(std::string("\"") + name + "\" is not a list");
      return false;
    }
    for (const json &v : config[name])
      if (v.is_number_integer() && v.get<int64_t>() == layer)
        return true;
    return false;
  }
};

} // namespace

std::optional<HfLayer> moec::familyLayer(const std::string &family, int64_t hidden, int64_t mlp,
                                         int64_t experts, int64_t k) {
  HfLayer l;
  l.family = l.modelType = family;
  l.hidden = hidden, l.mlp = mlp, l.experts = experts, l.k = k;
  if (family == "mixtral" || family == "qwen3_moe") {
    l.softmaxThenTopk = l.renormalize = true;
  } else if (family == "olmoe") {
    l.softmaxThenTopk = true;
  } else if (family == "qwen2_moe") {
    l.softmaxThenTopk = true;
    l.shared = 4 * mlp; // Qwen1.5-MoE-A2.7B: 5632 = 4 x 1408
    l.sharedGate = true;
  } else if (family == "deepseek_v2") {
    l.softmaxThenTopk = true;
    l.shared = 2 * mlp; // V2-Lite: greedy, unscaled, two shared experts
  } else if (family == "deepseek_v3") {
    l.sigmoid = l.softmaxThenTopk = l.renormalize = l.selectionBias = true;
    // 8 groups keeping 4 where the experts divide into groups of two or
    // more (a group's score sums its top two).
    if (experts % 8 == 0 && experts >= 16)
      l.groups = 8, l.topkGroups = 4, l.top2Sum = true;
    l.routedScaling = 2.5;
    l.shared = mlp;
  } else if (family == "gpt_oss") {
    l.routerBias = l.expertBias = l.gptOss = l.interleaved = true;
  } else if (family == "llama4") {
    l.sigmoid = l.weightInput = true;
    l.shared = mlp; // Llama4TextMoe's shared expert is an MLP of intermediate_size
  } else {
    return std::nullopt;
  }
  return l;
}

namespace {
std::optional<HfLayer> readLayer(const std::string &configPath, int64_t layer, std::string &error,
                                 bool &dense);
} // namespace

std::optional<HfLayer> moec::readHfLayer(const std::string &configPath, int64_t layer,
                                         std::string &error) {
  bool dense = false;
  if (layer != kFirstMoeLayer)
    return readLayer(configPath, layer, error, dense);
  // Every layer up to the first MoE one: the loop ends at the model's last
  // layer, past which readLayer fails without `dense`.
  for (int64_t l = 0; l < (int64_t(1) << 20); ++l) {
    dense = false;
    auto found = readLayer(configPath, l, error, dense);
    if (found)
      return found;
    if (!dense) {
      if (l > 0) // past the last layer, every one dense
        error = configPath + ": none of the model's " + std::to_string(l) +
                " layers is an MoE block";
      return std::nullopt;
    }
  }
  return std::nullopt;
}

namespace {
std::optional<HfLayer> readLayer(const std::string &configPath, int64_t layer, std::string &error,
                                 bool &dense) {
  if (!checkInputFile(configPath, error))
    return std::nullopt;
  std::ifstream in(configPath);
  if (!in) {
    error = configPath + ": " + std::strerror(errno);
    return std::nullopt;
  }
  json root = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    error = configPath + ": not a JSON object";
    return std::nullopt;
  }
  // Llama-4's checkpoints nest the text model's config.
  const json &config = root.contains("text_config") && root["text_config"].is_object()
                           ? root["text_config"]
                           : root;
  Keys keys{config, configPath, ""};
  HfLayer l;
  l.layer = layer;
  std::string rootType = root.contains("model_type") && root["model_type"].is_string()
                             ? root["model_type"].get<std::string>()
                             : std::string();
  l.modelType = keys.text("model_type", rootType);
  int64_t layers = keys.size("num_hidden_layers");
  l.hidden = keys.size("hidden_size");
  // GPT-OSS's config also spells it experts_per_token.
  l.k = config.contains("num_experts_per_tok") || !config.contains("experts_per_token")
            ? keys.size("num_experts_per_tok")
            : keys.size("experts_per_token");
  if (!keys.ok()) {
    error = keys.error;
    return std::nullopt;
  }
  if (layer < 0 || layer >= layers) {
    error = configPath + ": layer " + std::to_string(layer) + " is not one of the model's " +
            std::to_string(layers) + " layers";
    return std::nullopt;
  }
  // Llama-4's multimodal checkpoints hold the text model's tensors under
  // "language_model.".
  bool nested = &config != &root;
  std::string layers_ = std::string(nested ? "language_model." : "") + "model.layers." +
                        std::to_string(layer) + ".";
  bool moe = true;
  const std::string &type = l.modelType;
  std::string family = type == "llama4_text" || type == "llama4" ? "llama4" : type;
  // The sizes, under each family's names for them.
  int64_t mlp = 0, experts = 0;
  if (type == "mixtral" || type == "gpt_oss" || family == "llama4") {
    mlp = keys.size("intermediate_size");
    experts = keys.size("num_local_experts");
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    mlp = keys.size("moe_intermediate_size");
    // (transformers v5 writes num_experts as num_local_experts.)
    experts = config.contains("num_experts") || !config.contains("num_local_experts")
                  ? keys.size("num_experts")
                  : keys.size("num_local_experts");
  } else if (type == "olmoe") {
    mlp = keys.size("intermediate_size");
    experts = keys.size("num_experts");
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    mlp = keys.size("moe_intermediate_size");
    experts = keys.size("n_routed_experts");
  }
  std::optional<HfLayer> form = familyLayer(family, l.hidden, mlp, experts, l.k);
  if (!form) {
    error = configPath + ": model_type '" + type +
            "' is not one moec knows (mixtral, qwen2_moe, qwen3_moe, olmoe, deepseek_v2, "
            "deepseek_v3, gpt_oss, llama4_text)";
    return std::nullopt;
  }
  form->modelType = l.modelType;
  form->layer = l.layer;
  l = *form;
  // The knobs the config sets (familyLayer's values are the released
  // models'; these defaults are the config classes'), the MoE-layer rule,
  // the tensor names' prefix.
  if (type == "mixtral") {
    l.prefix = layers_ + "block_sparse_moe.";
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    l.renormalize = keys.flag("norm_topk_prob", false); // both configs' default
    int64_t step = keys.size("decoder_sparse_step", 1);
    moe = !keys.listed("mlp_only_layers", layer) && step > 0 && (layer + 1) % step == 0;
    if (type == "qwen2_moe") {
      l.shared = keys.size("shared_expert_intermediate_size", 5632); // Qwen2MoeConfig's default
      l.sharedGate = l.shared > 0;
    }
    l.prefix = layers_ + "mlp.";
  } else if (type == "olmoe") {
    l.renormalize = keys.flag("norm_topk_prob", false);
    l.prefix = layers_ + "mlp.";
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    bool v3 = type == "deepseek_v3";
    // The configs' defaults: V2 two shared experts, V3 one.
    l.shared = keys.size("n_shared_experts", v3 ? 1 : 2) * l.mlp;
    // HF's DeepSeek-V2 never renormalises (it reads norm_topk_prob but only
    // scales); V3 renormalises by default, then scales.
    l.renormalize = v3 && keys.flag("norm_topk_prob", true);
    l.routedScaling = keys.number("routed_scaling_factor", v3 ? 2.5 : 1.0);
    std::string method = keys.text("topk_method", v3 ? "noaux_tc" : "greedy");
    std::string grouped = v3 ? "noaux_tc" : "group_limited_greedy";
    l.groups = l.topkGroups = 1;
    if (method == grouped) {
      l.groups = keys.size("n_group", 1);
      l.topkGroups = keys.size("topk_group", 1);
    } else if (v3 || method != "greedy") {
      keys.fail("topk_method '" + method + "' is not one " + type + " has (" +
                (v3 ? "noaux_tc" : "greedy, group_limited_greedy") + ")");
    }
    l.top2Sum = v3 && l.groups > 1;
    if (l.groups > 1 && (l.experts % l.groups || l.topkGroups < 1 || l.topkGroups > l.groups ||
                         l.k > l.topkGroups * (l.experts / l.groups)))
      keys.fail("n_group " + std::to_string(l.groups) + " and topk_group " +
                std::to_string(l.topkGroups) + " do not fit " + std::to_string(l.experts) +
                " experts and top-" + std::to_string(l.k));
    int64_t firstDense = keys.size("first_k_dense_replace", 0);
    int64_t frequency = keys.size("moe_layer_freq", 1);
    moe = layer >= firstDense && frequency > 0 && layer % frequency == 0;
    l.prefix = layers_ + "mlp.";
  } else if (type == "gpt_oss") {
    l.limit = keys.number("swiglu_limit", 7.0);
    l.prefix = layers_ + "mlp.";
  } else { // llama4
    int64_t step = keys.size("interleave_moe_layer_step", 1);
    moe = config.contains("moe_layers") && !config["moe_layers"].is_null()
              ? keys.listed("moe_layers", layer)
              : step > 0 && (layer + 1) % step == 0;
    l.prefix = layers_ + "feed_forward.";
  }
  // The experts' activation: SwiGLU (silu) for all but GPT-OSS's own.
  if (l.family != "gpt_oss" && keys.text("hidden_act", "silu") != "silu")
    keys.fail("hidden_act '" + keys.text("hidden_act", "") +
              "': moec's experts are SwiGLU (silu) for " + type);
  if (!keys.ok()) {
    error = keys.error;
    return std::nullopt;
  }
  if (!moe) {
    dense = true;
    error = configPath + ": layer " + std::to_string(layer) + " of this " + type +
            " model is a dense MLP, not an MoE block";
    return std::nullopt;
  }
  // Bounded so that no product of them overflows (a layer of 2^20 x 2^20
  // x 2^14 elements is past any machine anyway).
  constexpr int64_t kMaxSize = int64_t(1) << 20, kMaxExperts = int64_t(1) << 14;
  if (l.hidden > kMaxSize || l.mlp > kMaxSize || l.shared > kMaxSize || l.experts > kMaxExperts) {
    error = configPath + ": sizes hidden " + std::to_string(l.hidden) + ", mlp " +
            std::to_string(l.mlp) + ", shared " + std::to_string(l.shared) + ", experts " +
            std::to_string(l.experts) + " are past what moec compiles";
    return std::nullopt;
  }
  if (l.hidden <= 0 || l.mlp <= 0 || l.experts <= 0 || l.k <= 0 || l.k > l.experts) {
    error = configPath + ": sizes hidden " + std::to_string(l.hidden) + ", expert mlp " +
            std::to_string(l.mlp) + ", experts " + std::to_string(l.experts) + ", top-k " +
            std::to_string(l.k) + " do not make an MoE block";
    return std::nullopt;
  }
  return l;
}
} // namespace

std::vector<HfArgument> moec::hfBlockArguments(const HfLayer &l, DType dt) {
  int64_t H = l.hidden, M = l.mlp, E = l.experts, S = l.shared;
  std::vector<HfArgument> args = {{"x", {-1, H}, dt}, {"router", {H, E}, dt}};
  if (l.routerBias)
    args.push_back({"router_bias", {E}, dt});
  if (l.selectionBias)
    args.push_back({"selection_bias", {E}, DType::F32});
  args.push_back({"gate_up", {E, H, 2 * M}, dt});
  if (l.expertBias)
    args.push_back({"gate_up_bias", {E, 2 * M}, dt});
  args.push_back({"down", {E, M, H}, dt});
  if (l.expertBias)
    args.push_back({"down_bias", {E, H}, dt});
  if (S > 0) {
    args.push_back({"shared_gate_up", {H, 2 * S}, dt});
    args.push_back({"shared_down", {S, H}, dt});
    if (l.sharedGate)
      args.push_back({"shared_gate", {H, 1}, dt});
  }
  return args;
}

namespace {

/// Copies element (i, j) of a [rows, cols] source of 2-byte or 4-byte
/// elements to `place(i, j)` of the destination: the layout changes the
/// mapping makes (transposes, stacking, side by side) are all of this form.
template <typename Place>
void copyInto(Buffer &dst, const Buffer &src, int64_t rows, int64_t cols, Place place) {
  size_t element = dtypeSize(dst.dtype());
  const char *from = static_cast<const char *>(src.data());
  char *to = static_cast<char *>(dst.data());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(to + place(i, j) * element, from + (i * cols + j) * element, element);
}

} // namespace

namespace {
/// The checkpoint tensors (name after the layer's prefix, shape) the layer's
/// weights are made of.
std::vector<std::pair<std::string, std::vector<int64_t>>> hfTensors(const HfLayer &l) {
  int64_t H = l.hidden, M = l.mlp, E = l.experts, S = l.shared;
  bool stacked = l.family == "gpt_oss" || l.family == "llama4";
  std::vector<std::pair<std::string, std::vector<int64_t>>> t = {
      {stacked ? "router.weight" : "gate.weight", {E, H}}};
  if (l.routerBias)
    t.push_back({"router.bias", {E}});
  if (l.selectionBias)
    t.push_back({"gate.e_score_correction_bias", {E}});
  if (stacked) {
    t.push_back({"experts.gate_up_proj", {E, H, 2 * M}});
    if (l.expertBias)
      t.push_back({"experts.gate_up_proj_bias", {E, 2 * M}});
    t.push_back({"experts.down_proj", {E, M, H}});
    if (l.expertBias)
      t.push_back({"experts.down_proj_bias", {E, H}});
  } else {
    bool mixtral = l.family == "mixtral";
    for (int64_t e = 0; e < E; ++e) {
      std::string expert = "experts." + std::to_string(e) + ".";
      t.push_back({expert + (mixtral ? "w1" : "gate_proj") + ".weight", {M, H}});
      t.push_back({expert + (mixtral ? "w3" : "up_proj") + ".weight", {M, H}});
      t.push_back({expert + (mixtral ? "w2" : "down_proj") + ".weight", {H, M}});
    }
  }
  if (S > 0) {
    std::string shared = l.family == "qwen2_moe" || l.family == "llama4" ? "shared_expert."
                                                                         : "shared_experts.";
    t.push_back({shared + "gate_proj.weight", {S, H}});
    t.push_back({shared + "up_proj.weight", {S, H}});
    t.push_back({shared + "down_proj.weight", {H, S}});
    if (l.sharedGate)
      t.push_back({"shared_expert_gate.weight", {1, H}});
  }
  return t;
}
} // namespace

bool moec::loadHfWeights(const HfLayer &l, const Checkpoint &ckpt, DType dt,
                         std::vector<Buffer> &weights, std::string &error) {
  int64_t H = l.hidden, M = l.mlp, E = l.experts, S = l.shared;
  const std::string &p = l.prefix;
  // Every tensor there and of its shape before any weight is allocated (a
  // config can claim a layer far larger than its checkpoint holds).
  for (const auto &[name, shape] : hfTensors(l)) {
    const CheckpointTensor *t = ckpt.find(p + name);
    if (!t) {
      error = ckpt.path() + ": no tensor '" + p + name + "'";
      return false;
    }
    if (t->shape != shape) {
      error = t->file + ": tensor '" + p + name + "': shape " + shapeString(t->shape) +
              ", expected " + shapeString(shape);
      return false;
    }
  }
  // The weights must fit: the Buffers they become abort when memory runs
  // out (a 15 GB layer on a smaller machine), which would end the caller.
  uint64_t bytes = 0;
  for (const HfArgument &a : hfBlockArguments(l, dt)) {
    if (a.name == "x") // the tokens are the caller's, not the checkpoint's
      continue;
    uint64_t n = dtypeSize(a.dtype);
    for (int64_t d : a.shape)
      n *= uint64_t(d);
    bytes += n;
  }
  if (std::string shortfall = memoryShortfall(bytes); !shortfall.empty()) {
    error = ckpt.path() + ": layer " + std::to_string(l.layer) + "'s weights need " + shortfall;
    return false;
  }
  // The tensors in hfTensors' order, each into `t`.
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = hfTensors(l);
  size_t next = 0;
  Buffer t;
  auto read = [&](DType as) { return ckpt.read(p + tensors[next++].first, as, t, error); };
  // The router [E, H] -> [H, E].
  if (!read(dt))
    return false;
  Buffer router(dt, {H, E});
  copyInto(router, t, E, H, [&](int64_t e, int64_t h) { return h * E + e; });
  weights.push_back(std::move(router));
  if (l.routerBias) {
    if (!read(dt))
      return false;
    weights.push_back(std::move(t));
  }
  if (l.selectionBias) {
    if (!read(DType::F32))
      return false;
    weights.push_back(std::move(t));
  }
  if (l.family == "gpt_oss" || l.family == "llama4") {
    // Stacked and [in, out] already (gate_up, its bias, down, its bias):
    // GPT-OSS's gate/up interleaved as the block's `interleaved` reads
    // them, Llama-4's gate then up.
    while (next < tensors.size() && tensors[next].first.rfind("experts.", 0) == 0) {
      if (!read(dt))
        return false;
      weights.push_back(std::move(t));
    }
  } else {
    // One tensor per expert and projection, [out, in]: gate, up, down.
    Buffer w13(dt, {E, H, 2 * M}), w2(dt, {E, M, H});
    for (int64_t e = 0; e < E; ++e) {
      for (int half = 0; half < 2; ++half) {
        if (!read(dt))
          return false;
        copyInto(w13, t, M, H,
                 [&](int64_t m, int64_t h) { return (e * H + h) * 2 * M + half * M + m; });
      }
      if (!read(dt))
        return false;
      copyInto(w2, t, H, M, [&](int64_t h, int64_t m) { return (e * M + m) * H + h; });
    }
    weights.push_back(std::move(w13));
    weights.push_back(std::move(w2));
  }
  if (S > 0) {
    // gate, up, down, then the gate's [1, H] weight (its bytes are [H, 1]'s).
    Buffer sw13(dt, {H, 2 * S}), sw2(dt, {S, H});
    for (int half = 0; half < 2; ++half) {
      if (!read(dt))
        return false;
      copyInto(sw13, t, S, H, [&](int64_t s, int64_t h) { return h * 2 * S + half * S + s; });
    }
    if (!read(dt))
      return false;
    copyInto(sw2, t, H, S, [&](int64_t h, int64_t s) { return s * H + h; });
    weights.push_back(std::move(sw13));
    weights.push_back(std::move(sw2));
    if (l.sharedGate) {
      if (!read(dt))
        return false;
      Buffer gate(dt, {H, 1});
      std::memcpy(gate.data(), t.data(), t.numBytes());
      weights.push_back(std::move(gate));
    }
  }
  return true;
}
