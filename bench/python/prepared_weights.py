#!/usr/bin/python3
"""A Hugging Face layer from Python with its weights packed once at load (from_hf's default)
and packing per call (prepare_weights=False): the median time of layer(x).

Qwen1.5-MoE's MoE layer sizes (H 2048, M 1408, E 60, top-4, a 5632-wide shared expert), random
bf16 weights; the layer is built from a config.json the script writes.

    PYTHONPATH=build/python OMP_NUM_THREADS=2 /usr/bin/python3 bench/python/prepared_weights.py \
        --tokens 16 1024
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

import moec

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "hf"))
import families as fam  # noqa: E402  (the tests' config writer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 1024])
    parser.add_argument("--iterations", type=int, default=7)
    args = parser.parse_args()
    cfg = dict(fam.config("qwen2_moe"), hidden_size=2048, moe_intermediate_size=1408,
               num_experts=60, num_experts_per_tok=4, shared_expert_intermediate_size=5632,
               intermediate_size=5632)
    with tempfile.TemporaryDirectory() as d:
        path = fam.write_config(d, cfg)
        layers = {prepared: moec.from_hf(path, prepare_weights=prepared) for prepared in (False, True)}
        print("| T | packed per call | packed at load | gain |")
        print("|---|---|---|---|")
        for tokens in args.tokens:
            x = torch.randn(tokens, cfg["hidden_size"]).to(torch.bfloat16)
            medians = {}
            for prepared, layer in layers.items():
                layer(x)  # warm-up
                times = []
                for _ in range(args.iterations):
                    start = time.perf_counter()
                    layer(x)
                    times.append(time.perf_counter() - start)
                medians[prepared] = statistics.median(times)
            print(f"| {tokens} | {medians[False] * 1e3:.1f} ms | {medians[True] * 1e3:.1f} ms | "
                  f"{medians[False] / medians[True]:.2f}x |")


if __name__ == "__main__":
    main()
