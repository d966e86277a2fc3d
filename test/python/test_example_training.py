"""examples/python/train_swap.py: a model whose MoE layer is swapped for moec.torch.MoELayer
trains along the same loss curve as the eager model (f32 to rounding; bf16 within its
precision: moec rounds the block's intermediates to bf16 where eager PyTorch keeps others)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "python"))
import train_swap  # noqa: E402


def relative_gap(a, b):
    return max(abs(x - y) / abs(x) for x, y in zip(a, b))


def test_f32_curves_agree():
    eager, compiled = train_swap.main(["--steps", "12"])
    assert eager[-1] < eager[0] and compiled[-1] < compiled[0]
    assert relative_gap(eager, compiled) < 1e-4, (eager, compiled)


def test_bf16_curves_agree():
    eager, compiled = train_swap.main(["--steps", "8", "--bf16"])
    assert compiled[-1] < compiled[0]
    assert relative_gap(eager, compiled) < 3e-2, (eager, compiled)
