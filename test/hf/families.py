"""The MoE families as Hugging Face checkpoints, for moec's front-end tests (issue 24).

What lives here:
  CONFIGS                  small config.json dicts in each family's real HF form
  moe_layers(family, cfg)  which decoder layers are MoE (each family's own rule)
  write_safetensors / safetensors_bytes / raw_safetensors / write_sharded / write_config
                           the safetensors format written by hand (no `safetensors` package on
                           Debian), single-file and sharded with model.safetensors.index.json
  tensor_names(family, layer, cfg)
                           the MoE block's tensor names and shapes in the family's real layout
  make_checkpoint(family, layer, dtype, seed)
                           random weights under those names, plus unrelated tensors (embeddings,
                           attention, norms, the other layers' feed-forwards) that a reader
                           must skip by name
  reference_layer(family, cfg, tensors, x, layer)
                           the family's MoE layer in PyTorch, written from its equations
                           (autograd-differentiable), with moec's numerics: routing in f32 and
                           expert math in f32 on upcast weights

Sources: shared/docs/model-families.md (equations, names, layouts) and the notes quoting HF
transformers' modeling files (family-facts.md). Where HF's code is ambiguous or has version bugs
(Llama-4's score layout, DeepSeek's 0.0-vs--inf masking, ties in topk), this follows what moec's
docs/dialect.md says moec computes, and says so at the spot.

Everything uses Debian's /usr/bin/python3 with python3-torch (1.13) and python3-numpy.
"""

import copy
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

# --------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------

# Test sizes shared by every family: H hidden, M the routed expert's intermediate size, E routed
# experts, K chosen per token (Llama-4 uses 1: its real models do, and moec's family check
# expects `top 1` there), L decoder layers with layer MOE_LAYER an MoE layer in every family.
H, M, E, K, L = 32, 24, 8, 2, 2
MOE_LAYER = 1
VOCAB = 64

# Keys that every family's config shares (attention sizes only matter for the unrelated tensors
# a reader must skip). Each family below copies these and adds its own MoE knobs under their
# real names; values are small, the key names and their meanings are the real ones.
_COMMON = {
    "hidden_size": H,
    "num_hidden_layers": L,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_act": "silu",
    "vocab_size": VOCAB,
    "max_position_embeddings": 256,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "initializer_range": 0.02,
    "tie_word_embeddings": False,
    "use_cache": True,
    "torch_dtype": "bfloat16",
}


def _config(**kw):
    c = dict(_COMMON)
    c.update(kw)
    return c


CONFIGS = {
    # Mixtral-8x7B: every layer MoE, experts sized by `intermediate_size`, always renormalised
    # (no norm_topk_prob key: the modeling code renormalises unconditionally).
    "mixtral": _config(
        architectures=["MixtralForCausalLM"],
        model_type="mixtral",
        intermediate_size=M,
        num_local_experts=E,
        num_experts_per_tok=K,
        router_aux_loss_coef=0.02,
        output_router_logits=False,
        sliding_window=None,
        attention_dropout=0.0,
    ),
    # Qwen1.5-MoE-A2.7B (qwen2_moe): experts sized by `moe_intermediate_size`, a dense
    # `intermediate_size` for non-MoE layers, a shared expert of its own size gated by a
    # sigmoid, norm_topk_prob false. Layer 0 is made dense through `mlp_only_layers` (real
    # checkpoints leave it empty) so that a reader has to apply the family's layer rule.
    "qwen2_moe": _config(
        architectures=["Qwen2MoeForCausalLM"],
        model_type="qwen2_moe",
        intermediate_size=64,
        moe_intermediate_size=M,
        shared_expert_intermediate_size=48,
        num_experts=E,
        num_experts_per_tok=K,
        norm_topk_prob=False,
        decoder_sparse_step=1,
        mlp_only_layers=[0],
        router_aux_loss_coef=0.001,
        output_router_logits=False,
        use_sliding_window=False,
        sliding_window=None,
        max_window_layers=L,
    ),
    # Qwen3-30B-A3B (qwen3_moe): as Qwen2-MoE without the shared expert, norm_topk_prob true.
    # Layer 0 is dense through `decoder_sparse_step` 2 (MoE where (layer + 1) % step == 0):
    # the other half of the same rule.
    "qwen3_moe": _config(
        architectures=["Qwen3MoeForCausalLM"],
        model_type="qwen3_moe",
        head_dim=8,
        intermediate_size=64,
        moe_intermediate_size=M,
        num_experts=E,
        num_experts_per_tok=K,
        norm_topk_prob=True,
        decoder_sparse_step=2,
        mlp_only_layers=[],
        attention_bias=False,
        router_aux_loss_coef=0.001,
        output_router_logits=False,
        use_sliding_window=False,
        sliding_window=None,
    ),
    # OLMoE-1B-7B: every layer MoE; its experts are sized by `intermediate_size` (OlmoeConfig
    # has no moe_intermediate_size), norm_topk_prob false.
    "olmoe": _config(
        architectures=["OlmoeForCausalLM"],
        model_type="olmoe",
        intermediate_size=M,
        num_experts=E,
        num_experts_per_tok=K,
        norm_topk_prob=False,
        clip_qkv=None,
        attention_bias=False,
        router_aux_loss_coef=0.01,
        output_router_logits=False,
    ),
    # DeepSeek-V2 (the group-limited form of V2/V2-Chat; V2-Lite is topk_method "greedy").
    # The first `first_k_dense_replace` layers are dense MLPs of `intermediate_size`.
    # norm_topk_prob is stored but the HF port never applies it (family-facts.md section 2).
    "deepseek_v2": _config(
        architectures=["DeepseekV2ForCausalLM"],
        model_type="deepseek_v2",
        num_key_value_heads=4,
        intermediate_size=64,
        moe_intermediate_size=M,
        n_routed_experts=E,
        n_shared_experts=2,
        num_experts_per_tok=K,
        n_group=4,
        topk_group=2,
        topk_method="group_limited_greedy",
        scoring_func="softmax",
        routed_scaling_factor=16.0,
        norm_topk_prob=False,
        first_k_dense_replace=1,
        moe_layer_freq=1,
        aux_loss_alpha=0.001,
        seq_aux=True,
        q_lora_rank=None,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=4,
        v_head_dim=8,
    ),
    # DeepSeek-V3: sigmoid scores, e_score_correction_bias for the choice, groups scored by
    # their top-2 sum, renormalised then scaled. (The real checkpoint's experts are FP8 with
    # `weight_scale_inv` tensors and a `quantization_config`; the bf16 form is used here.)
    "deepseek_v3": _config(
        architectures=["DeepseekV3ForCausalLM"],
        model_type="deepseek_v3",
        num_key_value_heads=4,
        intermediate_size=64,
        moe_intermediate_size=M,
        n_routed_experts=E,
        n_shared_experts=1,
        num_experts_per_tok=K,
        n_group=4,
        topk_group=2,
        topk_method="noaux_tc",
        scoring_func="sigmoid",
        routed_scaling_factor=2.5,
        norm_topk_prob=True,
        first_k_dense_replace=1,
        moe_layer_freq=1,
        q_lora_rank=16,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=4,
        v_head_dim=8,
    ),
    # GPT-OSS-20B: every layer MoE, experts sized by `intermediate_size`, router with a bias,
    # stacked [in, out] expert tensors. alpha (1.702) is hard-coded in HF; `swiglu_limit` is in
    # the config (7.0). The published experts are MXFP4 (`*_blocks`, `*_scales`); this is the
    # dequantised bf16 form the model-families page documents.
    "gpt_oss": _config(
        architectures=["GptOssForCausalLM"],
        model_type="gpt_oss",
        head_dim=8,
        intermediate_size=M,
        num_local_experts=E,
        num_experts_per_tok=K,
        swiglu_limit=7.0,
        attention_bias=True,
        sliding_window=128,
        layer_types=["sliding_attention", "full_attention"],
        router_aux_loss_coef=0.9,
        output_router_logits=False,
    ),
    # Llama-4 (text part). The real checkpoints (Llama4ForConditionalGeneration) nest this dict
    # under "text_config" of a model_type "llama4" config, and prefix the tensor names with
    # "language_model."; see llama4_conditional_config(). Here it is the flat text config, as
    # Llama4ForCausalLM saves it. MoE layers are every `interleave_moe_layer_step`-th
    # (Maverick: 2, Scout: 1), the rest dense MLPs of `intermediate_size_mlp`; experts and the
    # shared expert are both sized by `intermediate_size`.
    "llama4_text": _config(
        architectures=["Llama4ForCausalLM"],
        model_type="llama4_text",
        head_dim=8,
        intermediate_size=M,
        intermediate_size_mlp=64,
        num_local_experts=E,
        num_experts_per_tok=1,
        interleave_moe_layer_step=2,
        use_qk_norm=True,
        no_rope_layers=[1, 0],
        attention_chunk_size=128,
        router_aux_loss_coef=0.001,
        router_jitter_noise=0.0,
        output_router_logits=False,
    ),
}

FAMILIES = list(CONFIGS)

# moec's `family NAME` for each model_type (only Llama-4 differs).
MOEC_FAMILY = {f: ("llama4" if f == "llama4_text" else f) for f in FAMILIES}


def family_of(name_or_config):
    """The CONFIGS key for a family name, a model_type, or a config dict."""
    if isinstance(name_or_config, dict):
        c = name_or_config
        name = c["text_config"]["model_type"] if c.get("model_type") == "llama4" else c["model_type"]
    else:
        name = name_or_config
    if name in ("llama4", "llama4_text"):
        return "llama4_text"
    if name not in CONFIGS:
        raise ValueError(f"unknown MoE family {name!r}")
    return name


def config(family):
    """A fresh (mutable) copy of the family's config."""
    return copy.deepcopy(CONFIGS[family_of(family)])


def llama4_conditional_config(text_config=None):
    """Llama-4 as its real checkpoints' config.json has it: the text config nested under
    "text_config" (tensor names then start with "language_model.model.")."""
    text = copy.deepcopy(text_config or CONFIGS["llama4_text"])
    return {
        "architectures": ["Llama4ForConditionalGeneration"],
        "model_type": "llama4",
        "text_config": text,
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 16},
        "torch_dtype": text.get("torch_dtype", "bfloat16"),
    }


def sizes(family, cfg=None):
    """(H, M, E, K) as the family's config names them."""
    family = family_of(family)
    c = cfg or CONFIGS[family]
    hidden = c["hidden_size"]
    if family in ("qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"):
        mlp = c["moe_intermediate_size"]
    else:  # mixtral, olmoe, gpt_oss, llama4: the experts use intermediate_size
        mlp = c["intermediate_size"]
    experts = c.get("num_local_experts") or c.get("num_experts") or c.get("n_routed_experts")
    return hidden, mlp, experts, c["num_experts_per_tok"]


def moe_layers(family, cfg=None):
    """The MoE layers' indices, by each family's rule in its modeling file."""
    family = family_of(family)
    c = cfg or CONFIGS[family]
    n = c["num_hidden_layers"]
    if family in ("qwen2_moe", "qwen3_moe"):
        # Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer
        step = c.get("decoder_sparse_step", 1)
        return [i for i in range(n)
                if i not in c.get("mlp_only_layers", []) and c["num_experts"] > 0
                and (i + 1) % step == 0]
    if family in ("deepseek_v2", "deepseek_v3"):
        return [i for i in range(n)
                if c.get("n_routed_experts") is not None and i >= c["first_k_dense_replace"]
                and i % c.get("moe_layer_freq", 1) == 0]
    if family == "llama4_text":
        if c.get("moe_layers") is not None:
            return list(c["moe_layers"])
        step = c.get("interleave_moe_layer_step", 1)
        return list(range(step - 1, n, step))
    return list(range(n))  # mixtral, olmoe, gpt_oss: every layer


def dense_intermediate_size(family, cfg=None):
    """The dense MLP's width on non-MoE layers (None if the family has none)."""
    family = family_of(family)
    c = cfg or CONFIGS[family]
    if family == "llama4_text":
        return c["intermediate_size_mlp"]
    if family in ("qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"):
        return c["intermediate_size"]
    return None


def write_config(directory, cfg):
    """Writes `cfg` as directory/config.json; returns its path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "config.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    return path


# --------------------------------------------------------------------------------------------
# safetensors, by hand
# --------------------------------------------------------------------------------------------

# safetensors dtype -> (torch dtype, the little-endian numpy dtype of its raw bytes). BF16 has
# no numpy dtype, so its bytes go through the same-width integer.
DTYPES = {
    "F32": (torch.float32, np.dtype("<f4")),
    "F16": (torch.float16, np.dtype("<f2")),
    "BF16": (torch.bfloat16, np.dtype("<i2")),
    "I8": (torch.int8, np.dtype("i1")),
}
_TORCH_TO_ST = {t: name for name, (t, _) in DTYPES.items()}
_NUMPY_TO_ST = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int8"): "I8"}


def tensor_record(t):
    """(dtype name, shape, raw little-endian bytes) of a torch tensor or numpy array."""
    if isinstance(t, torch.Tensor):
        t = t.detach().cpu().contiguous()
        if t.dtype not in _TORCH_TO_ST:
            raise TypeError(f"no safetensors dtype here for {t.dtype}")
        name = _TORCH_TO_ST[t.dtype]
        raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t
        data = raw.numpy().astype(DTYPES[name][1], copy=False).tobytes()
        return name, list(t.shape), data
    a = np.asarray(t)
    if a.dtype not in _NUMPY_TO_ST:
        raise TypeError(f"no safetensors dtype here for numpy {a.dtype}")
    name = _NUMPY_TO_ST[a.dtype]
    return name, list(a.shape), np.ascontiguousarray(a).astype(DTYPES[name][1], copy=False).tobytes()


def raw_safetensors(header, data=b"", pad=True):
    """A file's bytes from a header (a dict, or JSON text taken as is) and a data section.

    For the reader's corruption tests: the header may lie about anything. `pad` appends spaces
    to the header to an 8-byte boundary as the safetensors library does (so the data section is
    8-byte aligned in a mapping); the format allows trailing whitespace in the header.
    """
    text = header if isinstance(header, (str, bytes)) else json.dumps(header, separators=(",", ":"))
    head = text.encode("utf-8") if isinstance(text, str) else text
    if pad:
        head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + data


def safetensors_bytes(tensors, metadata=None):
    """A safetensors file's bytes for {name: tensor}. Tensors are laid out in the dict's order,
    back to back; offsets are relative to the end of the header."""
    header = {}
    if metadata is not None:
        # The format wants a str -> str map here.
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks, offset = [], 0
    for name, t in tensors.items():
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved")
        dtype, shape, data = tensor_record(t)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    return raw_safetensors(header, b"".join(chunks))


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} (torch tensors of F32/BF16/F16/I8 or numpy f32/f16/i8 arrays) to
    `path` as safetensors. metadata defaults to {"format": "pt"}, as transformers writes it."""
    blob = safetensors_bytes(tensors, {"format": "pt"} if metadata is None else metadata)
    with open(path, "wb") as f:
        f.write(blob)
    return path


def shard_file_name(i, n):
    return f"model-{i + 1:05d}-of-{n:05d}.safetensors"


def write_sharded(directory, tensors, shards, metadata=None):
    """Writes {name: tensor} over `shards` files model-0000N-of-0000M.safetensors in `directory`
    with model.safetensors.index.json ({"metadata": {"total_size": bytes}, "weight_map": {name:
    file}}). Tensors are dealt round-robin in name order, so one layer's tensors (even one
    expert's three) span several files, which is what a reader must cope with. Returns the
    index's path."""
    if shards < 1:
        raise ValueError("shards must be >= 1")
    os.makedirs(directory, exist_ok=True)
    groups = [dict() for _ in range(shards)]
    for i, name in enumerate(sorted(tensors)):
        groups[i % shards][name] = tensors[name]
    weight_map, total = {}, 0
    for i, group in enumerate(groups):
        fname = shard_file_name(i, shards)
        write_safetensors(os.path.join(directory, fname), group)
        for name, t in group.items():
            weight_map[name] = fname
            total += len(tensor_record(t)[2])
    index = {"metadata": dict({"total_size": total}, **(metadata or {})), "weight_map": weight_map}
    path = os.path.join(directory, "model.safetensors.index.json")
    with open(path, "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
    return path


# --------------------------------------------------------------------------------------------
# Checkpoint layouts
# --------------------------------------------------------------------------------------------

def ffn_prefix(family, layer, prefix="model."):
    """The name prefix of a layer's feed-forward module (MoE or dense)."""
    family = family_of(family)
    if family == "mixtral":
        return f"{prefix}layers.{layer}.block_sparse_moe."
    if family == "llama4_text":
        return f"{prefix}layers.{layer}.feed_forward."
    return f"{prefix}layers.{layer}.mlp."


def router_name(family, layer=MOE_LAYER, prefix="model."):
    """The router's [E, H] weight's name."""
    family = family_of(family)
    tail = "router.weight" if family in ("gpt_oss", "llama4_text") else "gate.weight"
    return ffn_prefix(family, layer, prefix) + tail


def tensor_names(family, layer=MOE_LAYER, cfg=None, prefix="model."):
    """{name: shape} of layer `layer`'s MoE block, in the family's real checkpoint layout.

    Linear weights are [out, in] (nn.Linear). GPT-OSS's and Llama-4's stacked expert tensors are
    [E, in, out] (they are used as x @ w). This is the table the C++ weight mapping implements.
    """
    family = family_of(family)
    c = cfg or CONFIGS[family]
    hid, mlp, ne, _ = sizes(family, c)
    p = ffn_prefix(family, layer, prefix)
    names = {}
    if family == "mixtral":
        names[p + "gate.weight"] = [ne, hid]
        for e in range(ne):
            names[p + f"experts.{e}.w1.weight"] = [mlp, hid]  # gate
            names[p + f"experts.{e}.w2.weight"] = [hid, mlp]  # down
            names[p + f"experts.{e}.w3.weight"] = [mlp, hid]  # up
    elif family in ("qwen2_moe", "qwen3_moe", "olmoe", "deepseek_v2", "deepseek_v3"):
        names[p + "gate.weight"] = [ne, hid]
        if family == "deepseek_v3":
            names[p + "gate.e_score_correction_bias"] = [ne]
        for e in range(ne):
            names[p + f"experts.{e}.gate_proj.weight"] = [mlp, hid]
            names[p + f"experts.{e}.up_proj.weight"] = [mlp, hid]
            names[p + f"experts.{e}.down_proj.weight"] = [hid, mlp]
        if family == "qwen2_moe":
            s = c["shared_expert_intermediate_size"]
            names[p + "shared_expert.gate_proj.weight"] = [s, hid]
            names[p + "shared_expert.up_proj.weight"] = [s, hid]
            names[p + "shared_expert.down_proj.weight"] = [hid, s]
            names[p + "shared_expert_gate.weight"] = [1, hid]
        if family in ("deepseek_v2", "deepseek_v3") and c.get("n_shared_experts"):
            s = c["n_shared_experts"] * mlp
            names[p + "shared_experts.gate_proj.weight"] = [s, hid]
            names[p + "shared_experts.up_proj.weight"] = [s, hid]
            names[p + "shared_experts.down_proj.weight"] = [hid, s]
    elif family == "gpt_oss":
        names[p + "router.weight"] = [ne, hid]
        names[p + "router.bias"] = [ne]
        names[p + "experts.gate_up_proj"] = [ne, hid, 2 * mlp]  # columns: gate, up, gate, up, ...
        names[p + "experts.gate_up_proj_bias"] = [ne, 2 * mlp]
        names[p + "experts.down_proj"] = [ne, mlp, hid]
        names[p + "experts.down_proj_bias"] = [ne, hid]
    elif family == "llama4_text":
        names[p + "router.weight"] = [ne, hid]
        names[p + "experts.gate_up_proj"] = [ne, hid, 2 * mlp]  # [gate | up] halves
        names[p + "experts.down_proj"] = [ne, mlp, hid]
        names[p + "shared_expert.gate_proj.weight"] = [mlp, hid]
        names[p + "shared_expert.up_proj.weight"] = [mlp, hid]
        names[p + "shared_expert.down_proj.weight"] = [hid, mlp]
    return names


def _dense_mlp_names(family, layer, cfg, prefix):
    p = ffn_prefix(family, layer, prefix)
    hid, w = cfg["hidden_size"], dense_intermediate_size(family, cfg)
    return {p + "gate_proj.weight": [w, hid], p + "up_proj.weight": [w, hid],
            p + "down_proj.weight": [hid, w]}


def _attention_names(family, layer, cfg, prefix):
    """The layer's attention and norm tensors: here only so that a reader must skip them."""
    family = family_of(family)
    hid, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", hid // nh)
    a = f"{prefix}layers.{layer}.self_attn."
    names = {f"{prefix}layers.{layer}.input_layernorm.weight": [hid],
             f"{prefix}layers.{layer}.post_attention_layernorm.weight": [hid]}
    if family in ("deepseek_v2", "deepseek_v3"):  # multi-head latent attention
        qk = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"]
        if cfg.get("q_lora_rank"):
            names[a + "q_a_proj.weight"] = [cfg["q_lora_rank"], hid]
            names[a + "q_a_layernorm.weight"] = [cfg["q_lora_rank"]]
            names[a + "q_b_proj.weight"] = [nh * qk, cfg["q_lora_rank"]]
        else:
            names[a + "q_proj.weight"] = [nh * qk, hid]
        names[a + "kv_a_proj_with_mqa.weight"] = [cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"], hid]
        names[a + "kv_a_layernorm.weight"] = [cfg["kv_lora_rank"]]
        names[a + "kv_b_proj.weight"] = [nh * (cfg["qk_nope_head_dim"] + cfg["v_head_dim"]),
                                         cfg["kv_lora_rank"]]
        names[a + "o_proj.weight"] = [hid, nh * cfg["v_head_dim"]]
        return names
    names[a + "q_proj.weight"] = [nh * hd, hid]
    names[a + "k_proj.weight"] = [nkv * hd, hid]
    names[a + "v_proj.weight"] = [nkv * hd, hid]
    names[a + "o_proj.weight"] = [hid, nh * hd]
    if family in ("qwen2_moe", "gpt_oss"):  # q/k/v biases (GPT-OSS: o too, and sinks)
        names[a + "q_proj.bias"] = [nh * hd]
        names[a + "k_proj.bias"] = [nkv * hd]
        names[a + "v_proj.bias"] = [nkv * hd]
    if family == "gpt_oss":
        names[a + "o_proj.bias"] = [hid]
        names[a + "sinks"] = [nh]
    if family in ("qwen3_moe", "olmoe"):
        qn = hd if family == "qwen3_moe" else nh * hd  # OLMoE normalises the whole projection
        kn = hd if family == "qwen3_moe" else nkv * hd
        names[a + "q_norm.weight"] = [qn]
        names[a + "k_norm.weight"] = [kn]
    return names


def unrelated_names(family, layer=MOE_LAYER, cfg=None, prefix="model."):
    """{name: shape} of the tensors make_checkpoint adds beside the MoE block: embeddings, the
    final norm, lm_head, every layer's attention and norms, and the other layers' feed-forwards
    (dense MLPs, or MoE blocks under the same names with another layer index)."""
    family = family_of(family)
    c = cfg or CONFIGS[family]
    hid = c["hidden_size"]
    names = {f"{prefix}embed_tokens.weight": [c["vocab_size"], hid],
             f"{prefix}norm.weight": [hid],
             "lm_head.weight": [c["vocab_size"], hid]}
    moe = moe_layers(family, c)
    for i in range(c["num_hidden_layers"]):
        names.update(_attention_names(family, i, c, prefix))
        if i == layer:
            continue
        names.update(tensor_names(family, i, c, prefix) if i in moe
                     else _dense_mlp_names(family, i, c, prefix))
    return names


def _init(name, shape, family, gen):
    """A random f32 tensor for `name`, scaled so that the layer's numbers stay O(1) and the
    routing has no near-ties (logits ~ N(0, 1) for x ~ N(0, 1))."""
    r = torch.randn(shape, generator=gen, dtype=torch.float32)
    if name.endswith("layernorm.weight") or name.endswith("norm.weight"):
        return 1.0 + 0.1 * r
    if name.endswith("e_score_correction_bias"):
        # Small against the sigmoid scores (~0.5), like the trained biases: shifts the
        # choice without making biased scores negative (see the test for that case).
        return 0.05 * r
    if name.endswith("_bias") or name.endswith(".bias") or name.endswith("sinks"):
        return 0.1 * r
    if name.endswith("experts.gate_up_proj") and family == "gpt_oss":
        # [E, H, 2M] used as x @ w; a wide spread so that |gate|, |up| > limit (7) happens and
        # the clamps are exercised.
        return r * (4.0 / math.sqrt(shape[1]))
    fan_in = shape[1] if name.endswith("_proj") else shape[-1]  # stacked [E, in, out]: in
    return r / math.sqrt(fan_in)


def make_checkpoint(family, layer=MOE_LAYER, dtype=torch.bfloat16, seed=0, cfg=None,
                    prefix="model."):
    """Random weights for layer `layer`'s MoE block in the family's real names and layouts (see
    tensor_names), plus unrelated tensors (see unrelated_names), all in `dtype` except
    DeepSeek-V3's e_score_correction_bias, which real checkpoints keep in F32.

    Returns {name: tensor}, the block's tensors first. The same seed gives the same tensors.
    """
    family = family_of(family)
    c = cfg or CONFIGS[family]
    if layer not in moe_layers(family, c):
        raise ValueError(f"{family}: layer {layer} is not an MoE layer "
                         f"(MoE layers: {moe_layers(family, c)})")
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in list(tensor_names(family, layer, c, prefix).items()) + \
            list(unrelated_names(family, layer, c, prefix).items()):
        t = _init(name, shape, family, gen)
        out[name] = t if name.endswith("e_score_correction_bias") else t.to(dtype)
    return out


def write_model(directory, family, dtype, seed, sharded=False, cfg=None):
    """A small model of `family` on disk, as the tests load it: its config.json and a checkpoint
    (random weights of its last MoE layer in the family's real names and layouts, in `dtype`;
    one file, or 3 shards with their index when `sharded`).

    Returns (cfg, layer, tensors, config_path, weights_path)."""
    cfg = cfg or config(family)
    layer = moe_layers(family, cfg)[-1]
    tensors = make_checkpoint(family, layer=layer, dtype=dtype, seed=seed, cfg=cfg)
    config_path = write_config(directory, cfg)
    if sharded:
        weights = write_sharded(directory, tensors, 3)
    else:
        weights = write_safetensors(os.path.join(directory, "model.safetensors"), tensors)
    return cfg, layer, tensors, config_path, weights


# --------------------------------------------------------------------------------------------
# The reference layer
# --------------------------------------------------------------------------------------------

def _topk_ids(v, k):
    """Indices of the k largest along the last dim, ties to the lower index: moec's rule (HF's
    topk leaves tie order unspecified). A stable descending sort keeps equal values in index
    order."""
    return torch.sort(v, dim=-1, descending=True, stable=True)[1][..., :k]


def _swiglu(x, gate, up, down):
    """down(silu(gate x) * up x) with [out, in] weights."""
    return F.linear(F.silu(F.linear(x, gate)) * F.linear(x, up), down)


def _route(family, c, logits, sel_bias):
    """(ids [T,K], weights [T,K]) from f32 logits [T,E], by the family's routing."""
    k = c["num_experts_per_tok"]
    if family in ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe"):
        p = logits.softmax(dim=-1)
        ids = _topk_ids(p, k)
        w = p.gather(1, ids)
        # Mixtral renormalises always; the others if norm_topk_prob (no epsilon in HF).
        if family == "mixtral" or c.get("norm_topk_prob", False):
            w = w / w.sum(dim=-1, keepdim=True)
        return ids, w
    if family in ("deepseek_v2", "deepseek_v3"):
        v3 = family == "deepseek_v3"
        s = logits.sigmoid() if v3 else logits.softmax(dim=-1)
        # Selection scores: V3 chooses on s + bias but weighs by s. No gradient flows through
        # the choice, so it is taken on a detached copy.
        choice = s.detach() + (sel_bias.detach().to(s.dtype) if v3 else 0.0)
        grouped = c.get("n_group", 1) > 1 and (v3 or c.get("topk_method") == "group_limited_greedy")
        if grouped:
            t, ne = choice.shape
            g = choice.view(t, c["n_group"], ne // c["n_group"])
            # V3: each group by the sum of its two best; V2: by its best.
            gscore = g.topk(2, dim=-1)[0].sum(-1) if v3 else g.max(dim=-1)[0]
            keep = torch.zeros_like(gscore, dtype=torch.bool)
            keep.scatter_(1, _topk_ids(gscore, c["topk_group"]), True)
            mask = keep.unsqueeze(-1).expand_as(g).reshape(t, ne)
            # Masked with 0.0, as HF does (not -inf): a kept expert whose biased score is < 0
            # then loses to a masked one, in HF and in moec alike.
            choice = choice.masked_fill(~mask, 0.0)
        ids = _topk_ids(choice, k)
        w = s.gather(1, ids)
        if v3 and c.get("norm_topk_prob", False):
            w = w / (w.sum(dim=-1, keepdim=True) + 1e-20)
        # V2 (HF port): scaling only, norm_topk_prob ignored. V3: after the renormalisation.
        return ids, w * c.get("routed_scaling_factor", 1.0)
    if family == "gpt_oss":
        ids = _topk_ids(logits, k)
        return ids, logits.gather(1, ids).softmax(dim=-1)  # softmax over the K chosen logits
    if family == "llama4_text":
        ids = _topk_ids(logits, k)
        return ids, logits.gather(1, ids).sigmoid()
    raise ValueError(family)


def reference_layer(family, cfg, tensors, x, layer=MOE_LAYER, prefix="model.",
                    compute_dtype=torch.float32, sparse=False):
    """The family's MoE layer on x [T, H]: y [T, H] in `compute_dtype` (f32 by default).

    Written from the family's equations (model-families.md, family-facts.md), vectorised:
    every expert runs on every token and the K chosen are picked by a dense [T, E] weight,
    which keeps it short and differentiable; the tests hold it to a per-token loop.

    Numerics as moec's: router logits from x and the router weight upcast to compute_dtype,
    the routing in compute_dtype, each expert's math in compute_dtype on upcast weights, and
    no rounding in between (moec rounds a bf16 block's intermediates to bf16, so compare bf16
    runs with bf16 tolerances). Differentiable in x and every floating weight in `tensors`
    (e_score_correction_bias only chooses, so it gets no gradient). Ties in any top-k go to the
    lower index.

    sparse=True: each expert runs on the tokens routed to it only, gathered and added back
    (index_add), as the families' eager modeling code dispatches: the eager peer of the
    benchmarks (bench/python/families_vs_eager.py), the same numbers.
    """
    family = family_of(family)
    c = cfg
    if family != "gpt_oss" and c.get("hidden_act", "silu") != "silu":
        raise ValueError(f"{family}: hidden_act {c['hidden_act']!r} is not silu")
    _, mlp, ne, _ = sizes(family, c)
    p = ffn_prefix(family, layer, prefix)

    def w(name):
        return tensors[p + name].to(compute_dtype)

    xf = x.to(compute_dtype)
    router = tensors[router_name(family, layer, prefix)].to(compute_dtype)
    logits = F.linear(xf, router, w("router.bias") if family == "gpt_oss" else None)
    sel_bias = tensors[p + "gate.e_score_correction_bias"] if family == "deepseek_v3" else None
    ids, weights = _route(family, c, logits, sel_bias)

    # Dense [T, E] routing weights: the chosen experts' weights, 0 elsewhere; `chosen` marks
    # the chosen (needed where an unchosen expert's output is not 0, e.g. GPT-OSS's biases).
    dense = torch.zeros_like(logits).scatter(1, ids, weights)
    chosen = torch.zeros_like(logits).scatter(1, ids, 1.0)

    y = torch.zeros_like(xf)
    for e in range(ne):
        if sparse:
            rows = chosen[:, e].nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
        else:
            rows = slice(None)
        xe = xf[rows]
        if family == "mixtral":
            out = _swiglu(xe, w(f"experts.{e}.w1.weight"), w(f"experts.{e}.w3.weight"),
                          w(f"experts.{e}.w2.weight"))
        elif family == "gpt_oss":
            alpha, limit = 1.702, float(c.get("swiglu_limit", 7.0))
            gu = xe @ w("experts.gate_up_proj")[e] + w("experts.gate_up_proj_bias")[e]
            gate, up = gu[..., 0::2], gu[..., 1::2]  # interleaved columns
            gate = gate.clamp(max=limit)
            up = up.clamp(min=-limit, max=limit)
            out = (up + 1) * (gate * torch.sigmoid(alpha * gate))
            # The down bias is added before the routing weight, so it is weighted too.
            out = out @ w("experts.down_proj")[e] + w("experts.down_proj_bias")[e]
        elif family == "llama4_text":
            # The weight scales the expert's input; the output is summed unweighted.
            xin = xe * dense[rows, e:e + 1]
            gu = xin @ w("experts.gate_up_proj")[e]
            gate, up = gu[..., :mlp], gu[..., mlp:]  # halves, gate first
            out = (up * F.silu(gate)) @ w("experts.down_proj")[e]
            weight = chosen[rows, e:e + 1]
        else:  # qwen2_moe, qwen3_moe, olmoe, deepseek_v2, deepseek_v3
            out = _swiglu(xe, w(f"experts.{e}.gate_proj.weight"), w(f"experts.{e}.up_proj.weight"),
                          w(f"experts.{e}.down_proj.weight"))
        if family != "llama4_text":
            weight = dense[rows, e:e + 1]
        if sparse:
            y = y.index_add(0, rows, weight * out)
        else:
            y = y + weight * out

    # Shared experts run on the un-routed (and, for Llama-4, unweighted) input.
    if family == "qwen2_moe":
        shared = _swiglu(xf, w("shared_expert.gate_proj.weight"), w("shared_expert.up_proj.weight"),
                         w("shared_expert.down_proj.weight"))
        y = y + torch.sigmoid(F.linear(xf, w("shared_expert_gate.weight"))) * shared
    elif family in ("deepseek_v2", "deepseek_v3") and c.get("n_shared_experts"):
        y = y + _swiglu(xf, w("shared_experts.gate_proj.weight"), w("shared_experts.up_proj.weight"),
                        w("shared_experts.down_proj.weight"))
    elif family == "llama4_text":
        y = y + _swiglu(xf, w("shared_expert.gate_proj.weight"), w("shared_expert.up_proj.weight"),
                        w("shared_expert.down_proj.weight"))
    return y


def block_tensors(family, tensors, layer=MOE_LAYER, cfg=None, prefix="model."):
    """Only layer `layer`'s MoE tensors out of a checkpoint dict (what a loader should read)."""
    family = family_of(family)
    return {n: tensors[n] for n in tensor_names(family, layer, cfg or CONFIGS[family], prefix)}
