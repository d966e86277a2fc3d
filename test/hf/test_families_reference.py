"""Checks of test/hf/families.py, the ground the checkpoint front end's tests stand on.

  /usr/bin/python3 -m pytest test/hf -q          (with python3-pytest)
  /usr/bin/python3 test/hf/test_families_reference.py   (without: a small runner below)

What is checked:
  - the safetensors writer round-trips (the file re-read by hand here: header length, JSON,
    offsets, raw bytes, values), and the sharded index is consistent with its files;
  - make_checkpoint uses each family's real names and shapes (an independent table below) and
    adds tensors a reader must skip;
  - reference_layer agrees with an independent per-token NumPy loop in float64 written here
    from the families' equations, in f32 and bf16 and on routing variants;
  - reference_layer's gradients flow (finite, non-zero where they should be) and pass
    torch.autograd.gradcheck in float64.
"""

import inspect
import itertools
import json
import os
import pathlib
import struct
import sys
import tempfile
import traceback

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families as fam  # noqa: E402

try:
    import pytest
except ImportError:  # the script runner at the bottom stands in
    pytest = None


def parametrize(argnames, values):
    """pytest.mark.parametrize, and a note the runner below reads (run as a script)."""
    def mark(f):
        f.__dict__.setdefault("_params", []).append(([a.strip() for a in argnames.split(",")], values))
        return pytest.mark.parametrize(argnames, values)(f) if pytest is not None else f
    return mark


FAMILIES = fam.FAMILIES
DTYPES = [torch.float32, torch.bfloat16]

# --------------------------------------------------------------------------------------------
# A safetensors reader by hand (independent of the writer's code)
# --------------------------------------------------------------------------------------------

_NP = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I8": "i1"}
_SIZE = {"F32": 4, "F16": 2, "BF16": 2, "I8": 1}


def read_safetensors(path):
    """({name: torch tensor}, metadata, header length) of a file, checking its structure."""
    blob = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    assert 8 + n <= len(blob), "header runs past the file"
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", None)
    out, spans = {}, []
    for name, rec in header.items():
        assert set(rec) == {"dtype", "shape", "data_offsets"}, rec
        b, e = rec["data_offsets"]
        count = int(np.prod(rec["shape"], dtype=np.int64))
        assert 0 <= b <= e <= len(data) and e - b == count * _SIZE[rec["dtype"]], (name, rec)
        spans.append((b, e))
        a = np.frombuffer(data[b:e], dtype=_NP[rec["dtype"]]).reshape(rec["shape"])
        if rec["dtype"] == "BF16":
            # bf16 is the top half of an f32: widen the bits, exactly.
            f = (a.astype(np.uint32) << 16).view(np.float32)
            out[name] = torch.from_numpy(f.copy()).to(torch.bfloat16)
        else:
            out[name] = torch.from_numpy(a.astype(a.dtype.newbyteorder("="), copy=True))
    # The data section is covered exactly, with no overlaps.
    spans.sort()
    pos = 0
    for b, e in spans:
        assert b == pos, f"gap or overlap at {b} (expected {pos})"
        pos = e
    assert pos == len(data), "data section longer than its tensors"
    return out, meta, n


def same(a, b):
    """Same dtype, shape and bits."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(
        a.view(torch.int16) if a.dtype == torch.bfloat16 else a,
        b.view(torch.int16) if b.dtype == torch.bfloat16 else b)


def test_safetensors_round_trip(tmp_path):
    g = torch.Generator().manual_seed(1)
    tensors = {
        "a.f32": torch.randn(3, 5, generator=g),
        "b.bf16": torch.randn(4, 2, 3, generator=g).to(torch.bfloat16),
        "c.f16": torch.randn(7, generator=g).to(torch.float16),
        "d.i8": torch.randint(-128, 128, (2, 9), generator=g, dtype=torch.int8),
        "e.scalar": torch.tensor(2.5),
        "f.empty": torch.zeros(0, 4),
        "g.numpy": np.arange(6, dtype=np.float32).reshape(2, 3),
    }
    path = fam.write_safetensors(tmp_path / "m.safetensors", tensors, metadata={"format": "pt", "n": 7})
    back, meta, hlen = read_safetensors(path)
    assert meta == {"format": "pt", "n": "7"}
    assert hlen % 8 == 0, "header padded to 8 bytes (aligned data)"
    assert list(back) == list(tensors)
    for name, t in tensors.items():
        t = torch.from_numpy(t) if isinstance(t, np.ndarray) else t
        assert same(back[name], t), name

    # The raw bytes: bf16 as its 16-bit pattern, little-endian, at its offset.
    blob = pathlib.Path(path).read_bytes()
    header = json.loads(blob[8:8 + hlen])
    b, e = header["b.bf16"]["data_offsets"]
    want = tensors["b.bf16"].view(torch.int16).numpy().astype("<i2").tobytes()
    assert blob[8 + hlen + b:8 + hlen + e] == want
    assert header["b.bf16"] == {"dtype": "BF16", "shape": [4, 2, 3], "data_offsets": [b, e]}
    assert header["e.scalar"]["shape"] == [] and header["f.empty"]["shape"] == [0, 4]

    # Default metadata, as transformers writes it; raw_safetensors takes a header as is.
    fam.write_safetensors(tmp_path / "d.safetensors", {"x": torch.ones(2)})
    assert read_safetensors(tmp_path / "d.safetensors")[1] == {"format": "pt"}
    raw = fam.raw_safetensors('{"x":{"dtype":"F32","shape":[9],"data_offsets":[0,36]}}', b"", pad=False)
    assert struct.unpack("<Q", raw[:8])[0] == len(raw) - 8


def test_sharded_index(tmp_path):
    tensors = fam.make_checkpoint("mixtral", 1, torch.bfloat16, seed=3)
    index_path = fam.write_sharded(tmp_path, tensors, shards=3)
    assert os.path.basename(index_path) == "model.safetensors.index.json"
    index = json.loads(pathlib.Path(index_path).read_text())
    files = sorted(set(index["weight_map"].values()))
    assert files == [f"model-0000{i}-of-00003.safetensors" for i in (1, 2, 3)]
    assert set(index["weight_map"]) == set(tensors)
    total, seen = 0, {}
    for f in files:
        back, meta, _ = read_safetensors(tmp_path / f)
        assert meta == {"format": "pt"}
        for name, t in back.items():
            assert index["weight_map"][name] == f, f"{name} is in {f}, the index says elsewhere"
            assert name not in seen
            seen[name] = t
            total += t.numel() * t.element_size()
    assert set(seen) == set(tensors)
    assert index["metadata"]["total_size"] == total
    for name, t in tensors.items():
        assert same(seen[name], t), name
    # One layer's block spans every file (a reader must follow the map per tensor).
    block = fam.tensor_names("mixtral", 1)
    assert {index["weight_map"][n] for n in block} == set(files)
    # One shard is a plain single file.
    fam.write_sharded(tmp_path / "one", {"x": torch.ones(1)}, shards=1)
    assert os.path.exists(tmp_path / "one" / "model-00001-of-00001.safetensors")


# --------------------------------------------------------------------------------------------
# Configs and checkpoint layouts, against a table written here
# --------------------------------------------------------------------------------------------

# Layer 1's MoE block in each family, H 32, M 24, E 8: one expert's names (e = 0) and the rest.
_P = {"mixtral": "model.layers.1.block_sparse_moe.", "llama4_text": "model.layers.1.feed_forward."}
_EXPECTED = {
    "mixtral": {"gate.weight": [8, 32], "experts.0.w1.weight": [24, 32],
                "experts.0.w3.weight": [24, 32], "experts.0.w2.weight": [32, 24]},
    "qwen2_moe": {"gate.weight": [8, 32], "experts.0.gate_proj.weight": [24, 32],
                  "experts.0.up_proj.weight": [24, 32], "experts.0.down_proj.weight": [32, 24],
                  "shared_expert.gate_proj.weight": [48, 32], "shared_expert.up_proj.weight": [48, 32],
                  "shared_expert.down_proj.weight": [32, 48], "shared_expert_gate.weight": [1, 32]},
    "qwen3_moe": {"gate.weight": [8, 32], "experts.0.gate_proj.weight": [24, 32],
                  "experts.0.up_proj.weight": [24, 32], "experts.0.down_proj.weight": [32, 24]},
    "olmoe": {"gate.weight": [8, 32], "experts.0.gate_proj.weight": [24, 32],
              "experts.0.up_proj.weight": [24, 32], "experts.0.down_proj.weight": [32, 24]},
    "deepseek_v2": {"gate.weight": [8, 32], "experts.0.gate_proj.weight": [24, 32],
                    "experts.0.up_proj.weight": [24, 32], "experts.0.down_proj.weight": [32, 24],
                    "shared_experts.gate_proj.weight": [48, 32],
                    "shared_experts.up_proj.weight": [48, 32],
                    "shared_experts.down_proj.weight": [32, 48]},
    "deepseek_v3": {"gate.weight": [8, 32], "gate.e_score_correction_bias": [8],
                    "experts.0.gate_proj.weight": [24, 32], "experts.0.up_proj.weight": [24, 32],
                    "experts.0.down_proj.weight": [32, 24],
                    "shared_experts.gate_proj.weight": [24, 32],
                    "shared_experts.up_proj.weight": [24, 32],
                    "shared_experts.down_proj.weight": [32, 24]},
    "gpt_oss": {"router.weight": [8, 32], "router.bias": [8], "experts.gate_up_proj": [8, 32, 48],
                "experts.gate_up_proj_bias": [8, 48], "experts.down_proj": [8, 24, 32],
                "experts.down_proj_bias": [8, 32]},
    "llama4_text": {"router.weight": [8, 32], "experts.gate_up_proj": [8, 32, 48],
                    "experts.down_proj": [8, 24, 32], "shared_expert.gate_proj.weight": [24, 32],
                    "shared_expert.up_proj.weight": [24, 32], "shared_expert.down_proj.weight": [32, 24]},
}
_MOE_LAYERS = {"mixtral": [0, 1], "qwen2_moe": [1], "qwen3_moe": [1], "olmoe": [0, 1],
               "deepseek_v2": [1], "deepseek_v3": [1], "gpt_oss": [0, 1], "llama4_text": [1]}
_PER_EXPERT = {"mixtral", "qwen2_moe", "qwen3_moe", "olmoe", "deepseek_v2", "deepseek_v3"}


@parametrize("family", FAMILIES)
def test_config(family):
    c = fam.CONFIGS[family]
    assert c["model_type"] == family
    assert json.loads(json.dumps(c)) == c, "JSON as is"
    k = 1 if family == "llama4_text" else 2
    assert fam.sizes(family) == (32, 24, 8, k)
    assert fam.moe_layers(family) == _MOE_LAYERS[family]
    assert fam.family_of(c) == family
    if family == "llama4_text":
        assert fam.family_of(fam.llama4_conditional_config()) == "llama4_text"


@parametrize("family", FAMILIES)
def test_checkpoint_layout(family):
    t = fam.make_checkpoint(family, 1, torch.bfloat16, seed=0)
    p = _P.get(family, "model.layers.1.mlp.")
    block = {n: s for n, s in fam.tensor_names(family, 1).items()}
    expected = {p + n: s for n, s in _EXPECTED[family].items()}
    if family in _PER_EXPERT:  # experts 1..7 as expert 0
        for n, s in list(expected.items()):
            if ".experts.0." in n:
                for e in range(1, 8):
                    expected[n.replace(".experts.0.", f".experts.{e}.")] = s
    assert block == expected
    for n, s in expected.items():
        assert list(t[n].shape) == s, n
        want = torch.float32 if n.endswith("e_score_correction_bias") else torch.bfloat16
        assert t[n].dtype == want, n
    # Tensors a reader must skip: embeddings, attention, the other layer's feed-forward.
    others = set(t) - set(expected)
    assert "model.embed_tokens.weight" in others and "lm_head.weight" in others
    assert any(".layers.1.self_attn." in n for n in others)
    other_ffn = fam.ffn_prefix(family, 0)
    assert any(n.startswith(other_ffn) for n in others), "layer 0's feed-forward is there too"
    # Deterministic in the seed, different across seeds.
    again = fam.make_checkpoint(family, 1, torch.bfloat16, seed=0)
    assert all(same(t[n], again[n]) for n in t)
    router = fam.router_name(family, 1)
    assert router in expected
    assert not torch.equal(t[router], fam.make_checkpoint(family, 1, torch.bfloat16, seed=1)[router])
    # A dense layer is refused.
    dense = [i for i in range(2) if i not in _MOE_LAYERS[family]]
    for i in dense:
        try:
            fam.make_checkpoint(family, i)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{family}: layer {i} is dense, make_checkpoint took it")


# --------------------------------------------------------------------------------------------
# An independent per-token NumPy implementation (float64), from the families' equations
# --------------------------------------------------------------------------------------------

def _softmax(v):
    e = np.exp(v - v.max())
    return e / e.sum()


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _silu(v):
    return v * _sigmoid(v)


def _top(v, k):
    """The k largest, ties to the lower index (moec's rule)."""
    return list(np.argsort(-np.asarray(v), kind="stable")[:k])


def numpy_layer(family, c, tensors, x, layer=1):
    """y [T, H] float64, one token at a time, reading the checkpoint's own names."""
    t = {n: v.detach().to(torch.float64).numpy() for n, v in tensors.items()}
    x = x.detach().to(torch.float64).numpy()
    k = c["num_experts_per_tok"]
    if family == "mixtral":
        p = f"model.layers.{layer}.block_sparse_moe."
    elif family == "llama4_text":
        p = f"model.layers.{layer}.feed_forward."
    else:
        p = f"model.layers.{layer}.mlp."

    def mlp(v, g, u, d):  # [out, in] weights
        return t[d] @ (_silu(t[g] @ v) * (t[u] @ v))

    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        out = np.zeros_like(v)
        if family in ("gpt_oss", "llama4_text"):
            logits = t[p + "router.weight"] @ v
        else:
            logits = t[p + "gate.weight"] @ v
        n_exp = logits.shape[0]

        # --- routing: the chosen experts and their weights
        if family in ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe"):
            s = _softmax(logits)
            ids = _top(s, k)
            w = np.array([s[e] for e in ids])
            if family == "mixtral" or c.get("norm_topk_prob"):
                w = w / w.sum()
        elif family == "deepseek_v2":
            s = _softmax(logits)
            choice = s.copy()
            if c["topk_method"] == "group_limited_greedy":
                size = n_exp // c["n_group"]
                gs = [max(s[g * size:(g + 1) * size]) for g in range(c["n_group"])]
                kept = _top(gs, c["topk_group"])
                choice = np.array([s[e] if e // size in kept else 0.0 for e in range(n_exp)])
            ids = _top(choice, k)
            w = np.array([s[e] for e in ids]) * c["routed_scaling_factor"]
        elif family == "deepseek_v3":
            s = _sigmoid(logits)
            biased = s + t[p + "gate.e_score_correction_bias"]
            size = n_exp // c["n_group"]
            gs = [sum(sorted(biased[g * size:(g + 1) * size], reverse=True)[:2])
                  for g in range(c["n_group"])]
            kept = _top(gs, c["topk_group"])
            choice = [biased[e] if e // size in kept else 0.0 for e in range(n_exp)]
            ids = _top(choice, k)
            w = np.array([s[e] for e in ids])
            if c["norm_topk_prob"]:
                w = w / (w.sum() + 1e-20)
            w = w * c["routed_scaling_factor"]
        elif family == "gpt_oss":
            logits = logits + t[p + "router.bias"]
            ids = _top(logits, k)
            w = _softmax(np.array([logits[e] for e in ids]))
        elif family == "llama4_text":
            ids = _top(logits, k)
            w = _sigmoid(np.array([logits[e] for e in ids]))

        # --- the chosen experts
        for e, we in zip(ids, w):
            if family == "mixtral":
                out += we * mlp(v, f"{p}experts.{e}.w1.weight", f"{p}experts.{e}.w3.weight",
                                f"{p}experts.{e}.w2.weight")
            elif family == "gpt_oss":
                gu = v @ t[p + "experts.gate_up_proj"][e] + t[p + "experts.gate_up_proj_bias"][e]
                gate = np.minimum(gu[0::2], 7.0)
                up = np.clip(gu[1::2], -7.0, 7.0)
                h = (up + 1.0) * gate * _sigmoid(1.702 * gate)
                out += we * (h @ t[p + "experts.down_proj"][e] + t[p + "experts.down_proj_bias"][e])
            elif family == "llama4_text":
                gu = (we * v) @ t[p + "experts.gate_up_proj"][e]
                m = gu.shape[0] // 2
                out += (gu[m:] * _silu(gu[:m])) @ t[p + "experts.down_proj"][e]
            else:
                out += we * mlp(v, f"{p}experts.{e}.gate_proj.weight", f"{p}experts.{e}.up_proj.weight",
                                f"{p}experts.{e}.down_proj.weight")

        # --- the shared expert
        if family == "qwen2_moe":
            gate = _sigmoid(t[p + "shared_expert_gate.weight"] @ v)[0]
            out += gate * mlp(v, p + "shared_expert.gate_proj.weight", p + "shared_expert.up_proj.weight",
                              p + "shared_expert.down_proj.weight")
        elif family in ("deepseek_v2", "deepseek_v3") and c.get("n_shared_experts"):
            out += mlp(v, p + "shared_experts.gate_proj.weight", p + "shared_experts.up_proj.weight",
                       p + "shared_experts.down_proj.weight")
        elif family == "llama4_text":
            out += mlp(v, p + "shared_expert.gate_proj.weight", p + "shared_expert.up_proj.weight",
                       p + "shared_expert.down_proj.weight")
        y[i] = out
    return y


def _inputs(dtype, tokens=24, seed=7):
    return torch.randn(tokens, fam.H, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _check_close(family, c, tensors, x, what):
    y = fam.reference_layer(family, c, tensors, x, layer=1)
    assert y.dtype == torch.float32 and y.shape == x.shape
    want = numpy_layer(family, c, tensors, x, layer=1)
    got = y.detach().numpy().astype(np.float64)
    # The reference runs in f32 on the same (exactly widened) values; the loop in f64.
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max())
    assert err <= 2e-5 * scale, f"{what}: max |error| {err:.3g} (scale {scale:.3g})"
    return y


@parametrize("family", FAMILIES)
@parametrize("dtype", DTYPES)
def test_reference_matches_loop(family, dtype):
    c = fam.CONFIGS[family]
    tensors = fam.make_checkpoint(family, 1, dtype, seed=11)
    _check_close(family, c, tensors, _inputs(dtype), f"{family} {dtype}")


def _variants():
    """Routing knobs away from the CONFIGS' values, each (name, family, config, tweak)."""
    def cfg(family, **kw):
        c = fam.config(family)
        c.update(kw)
        return c

    def negative_bias(t):
        # Biased scores below 0 in kept groups: masked experts (0.0) then win, HF's rule.
        b = "model.layers.1.mlp.gate.e_score_correction_bias"
        t[b] = torch.tensor([-0.9, 0.1, -0.9, -0.9, 0.2, -0.9, -0.9, -0.9])
        return t

    def hot_gpt_oss(t):
        # Saturate the clamps on both sides.
        n = "model.layers.1.mlp.experts.gate_up_proj"
        t[n] = (t[n].float() * 4).to(t[n].dtype)
        return t

    return [
        ("deepseek_v2 greedy", "deepseek_v2", cfg("deepseek_v2", topk_method="greedy"), None),
        ("deepseek_v2 no shared", "deepseek_v2", cfg("deepseek_v2", n_shared_experts=0), None),
        ("deepseek_v3 one group", "deepseek_v3", cfg("deepseek_v3", n_group=1, topk_group=1), None),
        ("deepseek_v3 unnormalised", "deepseek_v3", cfg("deepseek_v3", norm_topk_prob=False), None),
        ("deepseek_v3 negative bias", "deepseek_v3", cfg("deepseek_v3"), negative_bias),
        ("qwen3_moe unnormalised", "qwen3_moe", cfg("qwen3_moe", norm_topk_prob=False), None),
        ("olmoe normalised", "olmoe", cfg("olmoe", norm_topk_prob=True), None),
        ("qwen2_moe top 4", "qwen2_moe", cfg("qwen2_moe", num_experts_per_tok=4), None),
        ("gpt_oss top 4, clamps", "gpt_oss", cfg("gpt_oss", num_experts_per_tok=4), hot_gpt_oss),
        ("llama4 top 2", "llama4_text", cfg("llama4_text", num_experts_per_tok=2), None),
    ]


@parametrize("variant", [v[0] for v in _variants()])
def test_reference_variants(variant):
    name, family, c, tweak = next(v for v in _variants() if v[0] == variant)
    tensors = fam.make_checkpoint(family, 1, torch.float32, seed=5, cfg=c)
    if tweak:
        tensors = tweak(tensors)
    _check_close(family, c, tensors, _inputs(torch.float32, tokens=32), name)


def test_clamps_and_masking_are_exercised():
    """The variants above reach the code paths they are there for."""
    c = fam.CONFIGS["gpt_oss"]
    t = fam.make_checkpoint("gpt_oss", 1, torch.float32, seed=11)
    x = _inputs(torch.float32)
    gu = torch.einsum("th,ehn->eth", x, t["model.layers.1.mlp.experts.gate_up_proj"])
    assert (gu[..., 0::2] > 7).any() and (gu[..., 1::2].abs() > 7).any(), "clamps not reached"
    # DeepSeek-V3 with the negative bias: some token picks a masked (0.0) expert.
    name, family, c, tweak = next(v for v in _variants() if v[0] == "deepseek_v3 negative bias")
    t = tweak(fam.make_checkpoint(family, 1, torch.float32, seed=5, cfg=c))
    x = _inputs(torch.float32, tokens=32)
    s = torch.sigmoid(x @ t["model.layers.1.mlp.gate.weight"].T)
    biased = s + t["model.layers.1.mlp.gate.e_score_correction_bias"]
    # Some token has a kept group holding a negative biased score and one of its chosen
    # experts outside the kept groups (a masked 0.0 that beat it).
    hit = False
    for row in biased:
        pairs = row.view(4, 2)
        kept = set(np.argsort(-pairs.topk(2, dim=-1)[0].sum(-1).numpy(), kind="stable")[:2].tolist())
        choice = [float(row[e]) if e // 2 in kept else 0.0 for e in range(8)]
        chosen = np.argsort(-np.array(choice), kind="stable")[:2]
        hit |= any(e // 2 not in kept for e in chosen)
    assert hit, "no token chose a masked expert"


@parametrize("family", FAMILIES)
def test_reference_from_files(family, tmp_path):
    """Through the files: the sharded checkpoint re-read by hand gives the same layer."""
    c = fam.CONFIGS[family]
    tensors = fam.make_checkpoint(family, 1, torch.bfloat16, seed=2)
    fam.write_sharded(tmp_path, tensors, shards=2)
    fam.write_config(tmp_path, c)
    index = json.loads((tmp_path / "model.safetensors.index.json").read_text())
    back = {}
    for f in sorted(set(index["weight_map"].values())):
        back.update(read_safetensors(tmp_path / f)[0])
    assert json.loads((tmp_path / "config.json").read_text()) == c
    x = _inputs(torch.bfloat16)
    assert torch.equal(fam.reference_layer(family, c, tensors, x),
                       fam.reference_layer(family, c, back, x))


# --------------------------------------------------------------------------------------------
# Gradients
# --------------------------------------------------------------------------------------------

@parametrize("family", FAMILIES)
@parametrize("dtype", DTYPES)
def test_gradients_flow(family, dtype):
    c = fam.CONFIGS[family]
    tensors = fam.make_checkpoint(family, 1, dtype, seed=4)
    block = set(fam.tensor_names(family, 1))
    for n in block:
        tensors[n].requires_grad_(True)
    x = _inputs(dtype).requires_grad_(True)
    y = fam.reference_layer(family, c, tensors, x)
    cot = torch.randn(y.shape, generator=torch.Generator().manual_seed(9))
    (y * cot).sum().backward()
    assert x.grad is not None and x.grad.dtype == dtype
    assert torch.isfinite(x.grad.float()).all() and x.grad.abs().sum() > 0
    for n in block:
        g = tensors[n].grad
        if n.endswith("e_score_correction_bias"):
            assert g is None, "the selection bias only chooses: no gradient"
            continue
        assert g is not None, f"{n}: no gradient"
        assert g.shape == tensors[n].shape and torch.isfinite(g.float()).all(), n
    # Every expert chosen by some token gets a gradient; the router does.
    router = [n for n in block if n.endswith("gate.weight") or n.endswith("router.weight")]
    router = [n for n in router if "shared_expert" not in n]
    assert len(router) == 1 and tensors[router[0]].grad.abs().sum() > 0
    if family in _PER_EXPERT:
        touched = [e for e in range(8)
                   if any(tensors[n].grad.abs().sum() > 0 for n in block if f".experts.{e}." in n)]
        assert len(touched) >= 2, touched
    else:
        stacked = tensors[f"{fam.ffn_prefix(family, 1)}experts.down_proj"].grad
        assert (stacked.flatten(1).abs().sum(1) > 0).sum() >= 2


@parametrize("family", FAMILIES)
def test_gradcheck(family):
    """Autograd's gradients of the input and the router match finite differences (float64)."""
    c = fam.CONFIGS[family]
    tensors = {n: v.to(torch.float64) for n, v in fam.make_checkpoint(family, 1, torch.float32, seed=6).items()}
    rname = fam.router_name(family, 1)
    x = _inputs(torch.float64, tokens=6).requires_grad_(True)
    r = tensors[rname].clone().requires_grad_(True)

    def f(x, r):
        return fam.reference_layer(family, c, dict(tensors, **{rname: r}), x,
                                   compute_dtype=torch.float64)

    assert torch.autograd.gradcheck(f, (x, r), eps=1e-6, atol=1e-5, rtol=1e-4)


# --------------------------------------------------------------------------------------------
# Without pytest: run every test_ function (each parameter combination), print a summary
# --------------------------------------------------------------------------------------------

def _main():
    failed = passed = 0
    for name, f in sorted(globals().items()):
        if not name.startswith("test_") or not callable(f):
            continue
        params = f.__dict__.get("_params", [])
        names = [n for argnames, _ in params for n in argnames]
        combos = itertools.product(*[[v if isinstance(v, tuple) else (v,) for v in values]
                                     for _, values in params])
        for combo in combos:
            kwargs = dict(zip(names, itertools.chain(*combo)))
            label = f"{name}[{', '.join(str(v) for v in kwargs.values())}]"
            with tempfile.TemporaryDirectory(prefix="moec-hf-") as tmp:
                if "tmp_path" in inspect.signature(f).parameters:
                    kwargs["tmp_path"] = pathlib.Path(tmp)
                try:
                    f(**kwargs)
                    passed += 1
                except Exception:
                    failed += 1
                    print(f"FAILED {label}")
                    traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main())
