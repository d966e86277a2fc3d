"""moec from a Hugging Face model: each family's small checkpoint in its real layout (names,
[out, in] linears, per-expert or stacked tensors, bf16 or f32, one file or sharded), loaded by
`moec run --hf-config config.json --layer N --weights ...`, against the family's layer in
PyTorch (test/hf/families.py, written from the equations). And the front end's refusals.

  MOEC=build/bin/moec /usr/bin/python3 test/hf/test_moec_checkpoints.py
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families as fam  # noqa: E402

MOEC = os.environ.get("MOEC", "build/bin/moec")
TOKENS = 7


def run_moec(*args):
    return subprocess.run([MOEC, *args], capture_output=True, text=True)


def check_family(family, dtype, sharded):
    """The compiled layer's output against reference_layer's; the relative max error."""
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    with tempfile.TemporaryDirectory() as d:
        cfg, layer, tensors, config_path, weights = fam.write_model(d, family, torch_dtype,
                                                                    seed=11, sharded=sharded)
        H = fam.sizes(family, cfg)[0]
        x = (torch.randn(TOKENS, H, generator=torch.Generator().manual_seed(5))).to(torch_dtype)
        x_path = os.path.join(d, "x.npy")
        # .npy has no bf16: x goes as f32 values that are bf16 already.
        np.save(x_path, x.float().numpy())
        out = os.path.join(d, "out")
        r = run_moec("run", "--hf-config", config_path, "--layer", str(layer), "--weights",
                     weights, "--dtype", dtype, "--input", x_path, "--output-dir", out)
        assert r.returncode == 0, f"{family} {dtype}: moec failed:\n{r.stderr}"
        got = np.load(os.path.join(out, "out0.npy")).astype(np.float64)
        want = fam.reference_layer(family, cfg, tensors, x, layer=layer).detach().double().numpy()
        return np.abs(got - want).max() / np.abs(want).max()


def test_every_family_matches_its_pytorch_layer():
    failures = []
    for family in fam.FAMILIES:
        for dtype, tolerance in (("f32", 1e-5), ("bf16", 2e-2)):
            err = check_family(family, dtype, sharded=(dtype == "bf16"))
            print(f"{family:12s} {dtype}: relative max error {err:.2e}")
            if not err <= tolerance:
                failures.append(f"{family} {dtype}: {err:.3e} > {tolerance}")
    assert not failures, "\n".join(failures)


def test_refusals_name_the_file_and_tensor():
    family = "mixtral"
    cfg = fam.config(family)
    tensors = fam.make_checkpoint(family, layer=1, dtype=torch.float32, seed=3, cfg=cfg)
    with tempfile.TemporaryDirectory() as d:
        config_path = fam.write_config(d, cfg)
        weights = os.path.join(d, "model.safetensors")
        expert = "model.layers.1.block_sparse_moe.experts.3.w2.weight"
        # A missing tensor, a misshapen one, a dense layer, a layer past the model.
        missing = dict(tensors)
        del missing[expert]
        fam.write_safetensors(weights, missing)
        cases = [
            (["--layer", "1", "--weights", weights, "--random-inputs"],
             f"no tensor '{expert}'"),
        ]
        misshapen = dict(tensors)
        misshapen[expert] = misshapen[expert].t().contiguous()
        bad = os.path.join(d, "bad.safetensors")
        fam.write_safetensors(bad, misshapen)
        cases.append((["--layer", "1", "--weights", bad, "--random-inputs"],
                      f"bad.safetensors: tensor '{expert}': shape"))
        cases.append((["--layer", "7", "--random-inputs"], "layer 7 is not one of the model's"))
        truncated = os.path.join(d, "cut.safetensors")
        with open(weights, "rb") as f:
            data = f.read()
        with open(truncated, "wb") as f:
            f.write(data[: len(data) - 100])
        cases.append((["--layer", "1", "--weights", truncated, "--random-inputs"],
                      "cut.safetensors: tensor"))
        for args, message in cases:
            r = run_moec("run", "--hf-config", config_path, *args)
            assert r.returncode != 0 and message in r.stderr, (args, r.stderr)
        # A dense layer (Qwen3-MoE's layer 0 in this config) and an unknown model type.
        q = fam.config("qwen3_moe")
        qdir = os.path.join(d, "q")
        os.makedirs(qdir)
        r = run_moec("run", "--hf-config", fam.write_config(qdir, q), "--layer", "0",
                     "--random-inputs")
        assert r.returncode != 0 and "is a dense MLP, not an MoE block" in r.stderr, r.stderr
        for edit, message in (({"topk_method": "top2"}, "topk_method 'top2' is not one deepseek_v2 has"),
                              ({"hidden_act": "gelu"}, "hidden_act 'gelu': moec's experts are SwiGLU"),
                              ({"n_group": 3, "topk_group": 1, "topk_method": "group_limited_greedy"},
                               "n_group 3 and topk_group 1 do not fit 8 experts")):
            v2dir = os.path.join(d, "v2-" + next(iter(edit)))
            os.makedirs(v2dir)
            r = run_moec("run", "--hf-config",
                         fam.write_config(v2dir, dict(fam.config("deepseek_v2"), **edit)),
                         "--layer", "1", "--random-inputs")
            assert r.returncode != 0 and message in r.stderr, (edit, r.stderr)
        g = dict(cfg, model_type="gemma")
        gdir = os.path.join(d, "g")
        os.makedirs(gdir)
        r = run_moec("run", "--hf-config", fam.write_config(gdir, g), "--random-inputs")
        assert r.returncode != 0 and "model_type 'gemma' is not one moec knows" in r.stderr, r.stderr


def test_compiles_a_library_that_takes_the_weights():
    # Weights are bound when the library is loaded, not compiled in: the same
    # library for any checkpoint of the config.
    with tempfile.TemporaryDirectory() as d:
        config_path = fam.write_config(d, fam.config("gpt_oss"))
        lib = os.path.join(d, "layer.so")
        r = run_moec("--hf-config", config_path, "--layer", "1", "-o", lib)
        assert r.returncode == 0, r.stderr
        assert os.path.getsize(lib) < 1 << 20, "the weights must not be compiled in"


if __name__ == "__main__":
    failed = 0
    for name, f in list(globals().items()):
        if name.startswith("test_") and callable(f):
            try:
                f()
                print(f"PASS {name}")
            except Exception as e:  # noqa: BLE001 - report every test
                failed += 1
                print(f"FAIL {name}: {e}")
    sys.exit(1 if failed else 0)
