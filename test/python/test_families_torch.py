"""Every family's layer from a small checkpoint in its real layout (names, [out, in] linears,
per-expert tensors, bf16 sharded or f32), as moec.torch.MoELayer: its output and the gradients
of a loss for x, every weight and the router, held to the family's layer written in PyTorch from
its equations (test/hf/families.py; autograd for its gradients).

The reference's weight gradients are in the checkpoint's layout; they are written as a
checkpoint of the same names and read back through moec's loader, which maps them to the block's
layouts as it maps the weights (the mapping is linear), so both sides compare in one layout.
"""

import os
import tempfile

import numpy as np
import pytest
import torch

import families as fam
import moec
from moec.torch import MoELayer

TOKENS = 9


def relative_error(got, want):
    got = got.detach().double()
    want = want.detach().double()
    scale = want.abs().max().item()
    return (got - want).abs().max().item() / (scale if scale > 0 else 1.0)


def layer_and_reference(family, dtype, directory, sharded):
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    cfg, layer, tensors, config_path, weights = fam.write_model(directory, family, torch_dtype,
                                                                seed=21, sharded=sharded)
    module = MoELayer.from_hf(config_path, layer=layer, weights=weights, dtype=torch_dtype)
    return cfg, layer, tensors, config_path, module


@pytest.mark.parametrize("family", fam.FAMILIES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_layer_and_gradients_match_pytorch(family, dtype):
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    with tempfile.TemporaryDirectory() as d:
        cfg, layer, tensors, config_path, module = layer_and_reference(
            family, dtype, d, sharded=(dtype == "bf16"))
        H = fam.sizes(family, cfg)[0]
        gen = torch.Generator().manual_seed(4)
        x = torch.randn(TOKENS, H, generator=gen).to(torch_dtype)
        g = torch.randn(TOKENS, H, generator=gen)  # the loss is sum(g * y)

        xm = x.clone().requires_grad_(True)
        y = module(xm)
        assert y.dtype == torch_dtype and y.shape == x.shape
        (y.float() * g).sum().backward()

        block = fam.block_tensors(family, tensors, layer=layer, cfg=cfg)
        leaves = {n: t.float().clone().requires_grad_(t.dtype != torch.float32 or
                                                      not n.endswith("e_score_correction_bias"))
                  for n, t in block.items()}
        xr = x.float().clone().requires_grad_(True)
        want = fam.reference_layer(family, cfg, leaves, xr, layer=layer)
        (want * g).sum().backward()

        # Measured: f32 within 7e-7, bf16 within 1.2e-2 (moec rounds intermediates to bf16).
        out_tol, grad_tol = (1e-5, 2e-5) if dtype == "f32" else (1e-2, 3e-2)
        errors = {"y": relative_error(y, want), "dx": relative_error(xm.grad, xr.grad)}

        # The reference's weight gradients, mapped to the block's layouts by moec's loader.
        grads = {n: (t.grad if t.grad is not None else torch.zeros_like(t)) for n, t in leaves.items()}
        grad_dir = os.path.join(d, "grads")
        os.makedirs(grad_dir)
        fam.write_config(grad_dir, cfg)
        fam.write_safetensors(os.path.join(grad_dir, "model.safetensors"), grads)
        mapped = moec.load_hf_weights(os.path.join(grad_dir, "config.json"), layer,
                                      os.path.join(grad_dir, "model.safetensors"), "f32")
        trained = [n for n, p in module.named_parameters()]
        assert "router" in trained, trained  # routing_grad: the router learns
        for name, p in module.named_parameters():
            assert p.grad is not None, name
            errors["d" + name] = relative_error(p.grad, torch.from_numpy(mapped[name]))
        print(family, dtype, " ".join(f"{k} {v:.1e}" for k, v in errors.items()))
        for key, err in errors.items():
            tol = out_tol if key == "y" else grad_tol
            assert err <= tol, f"{family} {dtype}: {key} relative error {err:.3e} > {tol}"


def test_the_layer_trains_inside_a_model():
    # A model swaps its MLP for the compiled layer; an optimizer step lowers the loss.
    with tempfile.TemporaryDirectory() as d:
        cfg, layer, _, _, moe = layer_and_reference("qwen3_moe", "f32", d, sharded=False)
        H = fam.sizes("qwen3_moe", cfg)[0]
        model = torch.nn.Sequential(torch.nn.Linear(H, H), moe, torch.nn.Linear(H, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        gen = torch.Generator().manual_seed(0)
        x, target = torch.randn(32, H, generator=gen), torch.randn(32, 1, generator=gen)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[-1] < losses[0], losses


def test_inference_forwards_pack_the_weights_once():
    # Compiled with prepare_weights: a forward under torch.no_grad() runs on weights packed
    # once, bit for bit what the training forward computes; an optimizer step changes the
    # weights, and the next such forward packs them again.
    with tempfile.TemporaryDirectory() as d:
        cfg, layer, _, config_path, weights = fam.write_model(d, "qwen3_moe", torch.float32, seed=3,
                                                              sharded=False)
        module = MoELayer.from_hf(config_path, layer=layer, weights=weights, dtype=torch.float32,
                                  prepare_weights=True)
        H = fam.sizes("qwen3_moe", cfg)[0]
        x = torch.randn(TOKENS, H, generator=torch.Generator().manual_seed(5))
        trained = module(x)
        with torch.no_grad():
            first = module(x)
            packed = module._prepared[1]
            again = module(x)
        assert torch.equal(first, trained.detach()) and torch.equal(again, first)
        assert module._prepared[1] is packed  # not packed a second time
        opt = torch.optim.SGD(module.parameters(), lr=0.5)
        trained.square().sum().backward()
        opt.step()
        with torch.no_grad():
            after = module(x)
        assert module._prepared[1] is not packed
        assert not torch.equal(after, first)
        assert torch.equal(after, module(x).detach())  # the step's weights, per call
        # A write through .data is not seen until invalidate_prepared(); eval() packs again.
        module.down.data.mul_(2)
        with torch.no_grad():
            assert torch.equal(module(x), after)
            module.invalidate_prepared()
            doubled = module(x)
        assert torch.equal(doubled, module(x).detach()) and not torch.equal(doubled, after)
        module.down.data.mul_(0.5)
        packed = module._prepared[1]
        module.eval()
        with torch.no_grad():
            assert torch.equal(module(x), after)
        assert module._prepared[1] is not packed
