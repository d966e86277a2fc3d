"""The checkpoint and config errors as Python sees them: each corruption a moec.CheckpointError
naming the file and the tensor, never a crash; a fuzz round over headers; from_hf with no
checkpoint (random weights of the right shapes) and with one."""

import json
import random
import struct

import numpy as np
import pytest
import torch

import families as fam
import moec

FAMILY = "mixtral"
LAYER = 1
EXPERT = "model.layers.1.block_sparse_moe.experts.3.w2.weight"


@pytest.fixture()
def model(tmp_path):
    cfg = fam.config(FAMILY)
    tensors = fam.make_checkpoint(FAMILY, layer=LAYER, dtype=torch.float32, seed=3, cfg=cfg)
    return fam.write_config(str(tmp_path), cfg), tensors, tmp_path


def load(config, weights, dtype="f32"):
    return moec.load_hf_weights(config, LAYER, str(weights), dtype)


def test_loaded_weights_are_the_blocks_layouts(model):
    config, tensors, d = model
    path = fam.write_safetensors(str(d / "model.safetensors"), tensors)
    w = load(config, path)
    assert list(w) == ["router", "gate_up", "down"]
    p = "model.layers.1.block_sparse_moe."
    # The router [E, H] transposed; expert 3's w1 and w3 side by side, transposed.
    np.testing.assert_array_equal(w["router"], tensors[p + "gate.weight"].numpy().T)
    w1, w3 = tensors[p + "experts.3.w1.weight"].numpy(), tensors[p + "experts.3.w3.weight"].numpy()
    np.testing.assert_array_equal(w["gate_up"][3], np.concatenate([w1.T, w3.T], axis=1))
    bf = load(config, path, "bf16")
    assert bf["down"].dtype == torch.bfloat16


def test_each_corruption_names_file_and_tensor(model):
    config, tensors, d = model
    missing = dict(tensors)
    del missing[EXPERT]
    with pytest.raises(moec.CheckpointError, match=f"no tensor '{EXPERT}'"):
        load(config, fam.write_safetensors(str(d / "missing.safetensors"), missing))
    misshapen = dict(tensors, **{EXPERT: tensors[EXPERT].t().contiguous()})
    with pytest.raises(moec.CheckpointError, match=f"misshapen.safetensors: tensor '{EXPERT}': shape"):
        load(config, fam.write_safetensors(str(d / "misshapen.safetensors"), misshapen))
    whole = fam.safetensors_bytes(tensors)
    (d / "cut.safetensors").write_bytes(whole[:-100])
    with pytest.raises(moec.CheckpointError, match="cut.safetensors: tensor"):
        load(config, d / "cut.safetensors")
    # A header that lies about an offset, and one with an unknown dtype for a block tensor.
    size = struct.unpack("<Q", whole[:8])[0]
    header = json.loads(whole[8:8 + size])
    header[EXPERT]["data_offsets"][1] += 4
    (d / "lies.safetensors").write_bytes(fam.raw_safetensors(header, whole[8 + size:]))
    with pytest.raises(moec.CheckpointError, match=f"lies.safetensors.*{EXPERT}"):
        load(config, d / "lies.safetensors")
    header = json.loads(whole[8:8 + size])
    header[EXPERT]["dtype"] = "Q7"
    (d / "dtype.safetensors").write_bytes(fam.raw_safetensors(header, whole[8 + size:]))
    with pytest.raises(moec.CheckpointError, match=f"dtype.safetensors.*{EXPERT}.*Q7"):
        load(config, d / "dtype.safetensors")
    with pytest.raises(moec.CheckpointError, match="no-such"):
        load(config, d / "no-such.safetensors")


def test_header_fuzz_round_raises_or_loads(model):
    config, tensors, d = model
    whole = bytearray(fam.safetensors_bytes(tensors))
    size = struct.unpack("<Q", whole[:8])[0]
    intact = load(config, fam.write_safetensors(str(d / "intact.safetensors"), tensors))
    rng = random.Random(7)
    outcomes = {"error": 0, "loaded": 0}
    for i in range(60):
        blob = bytearray(whole)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(0, 8 + size)
            blob[at] = rng.choice(b'{}[]",:0123456789 xFIB\x00\xff')
        path = d / f"fuzz{i}.safetensors"
        path.write_bytes(bytes(blob))
        try:
            loaded = load(config, path)
            # A mutation the reader takes (in the metadata, an unrelated tensor's name, the
            # padding) must leave the block's weights as they were.
            for name, value in intact.items():
                np.testing.assert_array_equal(loaded[name], value)
            outcomes["loaded"] += 1
        except moec.CheckpointError as e:
            assert "fuzz" in str(e), str(e)  # the file is named
            outcomes["error"] += 1
    assert outcomes["error"] > 0, outcomes


def test_config_errors(model, tmp_path):
    config, _, d = model
    with pytest.raises(moec.CheckpointError, match="layer 7 is not one of the model's"):
        moec.from_hf(config, layer=7)
    gemma = tmp_path / "g"
    gemma.mkdir()
    bad = fam.write_config(str(gemma), dict(fam.config(FAMILY), model_type="gemma"))
    with pytest.raises(moec.CheckpointError, match="model_type 'gemma' is not one moec knows"):
        moec.from_hf(bad)
    with pytest.raises(moec.ArgumentError, match="dtype= must be f32 or bf16"):
        moec.from_hf(config, layer=LAYER, dtype="f16")


def test_from_hf_with_and_without_a_checkpoint(model):
    config, tensors, d = model
    path = fam.write_safetensors(str(d / "model.safetensors"), tensors)
    layer = moec.from_hf(config, layer=LAYER, weights=path, dtype="f32")
    assert layer.info["family"] == "mixtral" and layer.info["top_k"] == 2
    x = torch.randn(5, layer.info["hidden_size"])
    want = fam.reference_layer(FAMILY, fam.config(FAMILY), tensors, x, layer=LAYER)
    got = layer(x)
    assert isinstance(got, torch.Tensor)
    assert (got - want).abs().max().item() <= 1e-5 * want.abs().max().item()
    np.testing.assert_allclose(layer(x.numpy()), got.numpy(), rtol=0, atol=0)
    # The weights were packed once, at from_hf; a layer that packs per call computes the same.
    assert layer.prepared is not None and layer.prepared.weight_arguments
    per_call = moec.from_hf(config, layer=LAYER, weights=path, dtype="f32", prepare_weights=False)
    assert per_call.prepared is None
    assert torch.equal(per_call(x), got)
    random_layer = moec.from_hf(config, layer=LAYER)  # bf16, random weights of the right shapes
    assert random_layer.weights["gate_up"].dtype == torch.bfloat16
    y = random_layer(x.to(torch.bfloat16))
    assert y.shape == x.shape and torch.isfinite(y.float()).all()


def test_weights_beyond_memory_are_refused_before_allocating(tmp_path):
    # A layer whose checkpoint is whole (a sparse file: no disk, no memory) but whose weights
    # would not fit in this machine's memory: an error, not an abort of the interpreter.
    import os
    if os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") > 150e9:
        pytest.skip("this machine could hold the 206 GB layer")
    cfg = dict(fam.config(FAMILY), hidden_size=32768, intermediate_size=65536)  # 206 GB in f32
    config = fam.write_config(str(tmp_path), cfg)
    header, offset = {}, 0
    for name, shape in fam.tensor_names(FAMILY, LAYER, cfg).items():
        size = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    path = tmp_path / "huge.safetensors"
    head = fam.raw_safetensors(header)
    path.write_bytes(head)
    os.truncate(path, len(head) + offset)
    with pytest.raises(moec.CheckpointError, match=r"huge.safetensors: layer 1's weights need "
                                                   r"[0-9.]+ GiB, more than the [0-9.]+ [MGT]iB"):
        load(config, path)
