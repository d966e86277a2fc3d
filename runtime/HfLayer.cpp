//===- HfLayer.cpp - a Hugging Face model's MoE layer as a moe.block -------===//

#include "runtime/HfLayer.h"

#include "runtime/AtomicFile.h"
#include "runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>

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
    return config[name].get<int64_t>();
  }
  bool flag(const char *name, bool fallback) {
    if (!config.contains(name) || config[name].is_null())
      return fallback;
    if (!config[name].is_boolean()) {
      fail(std::string("\"") + name + "\" is " + config[name].dump() + ", not true or false");
      return fallback;
    }
    return config[name].get<bool>();
  }
  double number(const char *name, double fallback) {
    if (!config.contains(name) || config[name].is_null())
      return fallback;
    if (!config[name].is_number()) {
      fail(std::string("\"") + name + "\" is " + config[name].dump() + ", not a number");
      return fallback;
    }
    return config[name].get<double>();
  }
  std::string text(const char *name, const std::string &fallback) {
    if (!config.contains(name) || config[name].is_null())
      return fallback;
    if (!config[name].is_string()) {
      fail(std::string("\"") + name + "\" is " + config[name].dump() + ", not a string");
      return fallback;
    }
    return config[name].get<std::string>();
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

std::optional<HfLayer> moec::readHfLayer(const std::string &configPath, int64_t layer,
                                         std::string &error) {
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
  if (type == "mixtral") {
    l.family = "mixtral";
    l.mlp = keys.size("intermediate_size");
    l.experts = keys.size("num_local_experts");
    l.softmaxThenTopk = l.renormalize = true;
    l.prefix = layers_ + "block_sparse_moe.";
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    l.family = type;
    l.mlp = keys.size("moe_intermediate_size");
    // (transformers v5 writes num_experts as num_local_experts.)
    l.experts = config.contains("num_experts") || !config.contains("num_local_experts")
                    ? keys.size("num_experts")
                    : keys.size("num_local_experts");
    l.softmaxThenTopk = true;
    l.renormalize = keys.flag("norm_topk_prob", false); // both configs' default
    int64_t step = keys.size("decoder_sparse_step", 1);
    moe = !keys.listed("mlp_only_layers", layer) && step > 0 && (layer + 1) % step == 0;
    if (type == "qwen2_moe") {
      l.shared = keys.size("shared_expert_intermediate_size", 5632); // Qwen2MoeConfig's default
      l.sharedGate = l.shared > 0;
    }
    l.prefix = layers_ + "mlp.";
  } else if (type == "olmoe") {
    l.family = "olmoe";
    l.mlp = keys.size("intermediate_size");
    l.experts = keys.size("num_experts");
    l.softmaxThenTopk = true;
    l.renormalize = keys.flag("norm_topk_prob", false);
    l.prefix = layers_ + "mlp.";
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    l.family = type;
    bool v3 = type == "deepseek_v3";
    l.mlp = keys.size("moe_intermediate_size");
    l.experts = keys.size("n_routed_experts");
    // The configs' defaults: V2 two shared experts, V3 one.
    l.shared = keys.size("n_shared_experts", v3 ? 1 : 2) * l.mlp;
    l.softmaxThenTopk = true;
    l.sigmoid = v3;
    l.selectionBias = v3;
    // HF's DeepSeek-V2 never renormalises (it reads norm_topk_prob but only
    // scales); V3 renormalises by default, then scales.
    l.renormalize = v3 && keys.flag("norm_topk_prob", true);
    l.routedScaling = keys.number("routed_scaling_factor", v3 ? 2.5 : 1.0);
    std::string method = keys.text("topk_method", v3 ? "noaux_tc" : "greedy");
    std::string grouped = v3 ? "noaux_tc" : "group_limited_greedy";
    if (method == grouped) {
      l.groups = keys.size("n_group", 1);
      l.topkGroups = keys.size("topk_group", 1);
      l.top2Sum = v3;
    } else if (v3 || method != "greedy") {
      keys.fail("topk_method '" + method + "' is not one " + type + " has (" +
                (v3 ? "noaux_tc" : "greedy, group_limited_greedy") + ")");
    }
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
    l.family = "gpt_oss";
    l.mlp = keys.size("intermediate_size");
    l.experts = keys.size("num_local_experts");
    l.routerBias = l.expertBias = l.gptOss = l.interleaved = true;
    l.limit = keys.number("swiglu_limit", 7.0);
    l.prefix = layers_ + "mlp.";
  } else if (type == "llama4_text" || type == "llama4") {
    l.family = "llama4";
    l.mlp = keys.size("intermediate_size");
    l.experts = keys.size("num_local_experts");
    l.sigmoid = l.weightInput = true;
    l.shared = l.mlp; // Llama4TextMoe's shared expert is an MLP of intermediate_size
    int64_t step = keys.size("interleave_moe_layer_step", 1);
    moe = config.contains("moe_layers") && !config["moe_layers"].is_null()
              ? keys.listed("moe_layers", layer)
              : step > 0 && (layer + 1) % step == 0;
    l.prefix = layers_ + "feed_forward.";
  } else {
    error = configPath + ": model_type '" + type +
            "' is not one moec knows (mixtral, qwen2_moe, qwen3_moe, olmoe, deepseek_v2, "
            "deepseek_v3, gpt_oss, llama4_text)";
    return std::nullopt;
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
void copyInto(Buffer &dst, const Buffer &src, int64_t rows, int64_t cols,
              const std::function<int64_t(int64_t, int64_t)> &place) {
  size_t element = dtypeSize(dst.dtype());
  const char *from = static_cast<const char *>(src.data());
  char *to = static_cast<char *>(dst.data());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(to + place(i, j) * element, from + (i * cols + j) * element, element);
}

} // namespace

bool moec::loadHfWeights(const HfLayer &l, const Checkpoint &ckpt, DType dt,
                         std::vector<Buffer> &weights, std::string &error) {
  int64_t H = l.hidden, M = l.mlp, E = l.experts, S = l.shared;
  const std::string &p = l.prefix;
  auto read = [&](const std::string &name, std::vector<int64_t> shape, DType as, Buffer &out) {
    return ckpt.read(p + name, as, out, error, &shape);
  };
  Buffer t;
  // The router [E, H] -> [H, E].
  bool gptOss = l.family == "gpt_oss", llama4 = l.family == "llama4";
  std::string routerName = gptOss || llama4 ? "router.weight" : "gate.weight";
  if (!read(routerName, {E, H}, dt, t))
    return false;
  Buffer router(dt, {H, E});
  copyInto(router, t, E, H, [&](int64_t e, int64_t h) { return h * E + e; });
  weights.push_back(std::move(router));
  if (l.routerBias) {
    if (!read("router.bias", {E}, dt, t))
      return false;
    weights.push_back(std::move(t));
  }
  if (l.selectionBias) {
    if (!read("gate.e_score_correction_bias", {E}, DType::F32, t))
      return false;
    weights.push_back(std::move(t));
  }
  if (gptOss || llama4) {
    // Stacked and [in, out] already; GPT-OSS's gate/up interleaved as the
    // block's `interleaved` reads them, Llama-4's gate then up.
    for (auto [name, shape] : {std::pair<std::string, std::vector<int64_t>>{
                                   "experts.gate_up_proj", {E, H, 2 * M}},
                               {"experts.gate_up_proj_bias", {E, 2 * M}},
                               {"experts.down_proj", {E, M, H}},
                               {"experts.down_proj_bias", {E, H}}}) {
      if (!gptOss && name.find("bias") != std::string::npos)
        continue;
      if (!read(name, shape, dt, t))
        return false;
      weights.push_back(std::move(t));
    }
  } else {
    // One tensor per expert and projection, [out, in].
    bool mixtral = l.family == "mixtral";
    std::string gateName = mixtral ? "w1" : "gate_proj", upName = mixtral ? "w3" : "up_proj",
                downName = mixtral ? "w2" : "down_proj";
    Buffer w13(dt, {E, H, 2 * M}), w2(dt, {E, M, H});
    for (int64_t e = 0; e < E; ++e) {
      std::string expert = "experts." + std::to_string(e) + ".";
      for (int half = 0; half < 2; ++half) {
        if (!read(expert + (half ? upName : gateName) + ".weight", {M, H}, dt, t))
          return false;
        copyInto(w13, t, M, H,
                 [&](int64_t m, int64_t h) { return (e * H + h) * 2 * M + half * M + m; });
      }
      if (!read(expert + downName + ".weight", {H, M}, dt, t))
        return false;
      copyInto(w2, t, H, M, [&](int64_t h, int64_t m) { return (e * M + m) * H + h; });
    }
    weights.push_back(std::move(w13));
    weights.push_back(std::move(w2));
  }
  if (S > 0) {
    std::string shared = l.family == "qwen2_moe" ? "shared_expert."
                         : llama4                ? "shared_expert."
                                                 : "shared_experts.";
    Buffer sw13(dt, {H, 2 * S}), sw2(dt, {S, H});
    for (int half = 0; half < 2; ++half) {
      if (!read(shared + (half ? "up_proj" : "gate_proj") + ".weight", {S, H}, dt, t))
        return false;
      copyInto(sw13, t, S, H, [&](int64_t s, int64_t h) { return h * 2 * S + half * S + s; });
    }
    if (!read(shared + "down_proj.weight", {H, S}, dt, t))
      return false;
    copyInto(sw2, t, H, S, [&](int64_t h, int64_t s) { return s * H + h; });
    weights.push_back(std::move(sw13));
    weights.push_back(std::move(sw2));
    if (l.sharedGate) {
      // [1, H] -> [H, 1]: the same bytes.
      if (!read("shared_expert_gate.weight", {1, H}, dt, t))
        return false;
      Buffer gate(dt, {H, 1});
      std::memcpy(gate.data(), t.data(), t.numBytes());
      weights.push_back(std::move(gate));
    }
  }
  return true;
}
