#!/usr/bin/python3
"""The Python call's overhead over the C++ call, at T = 1 and T = 4096 tokens.

The same compiled layer (Qwen3-MoE's form, random weights) is called (a) from C++ on buffers
made once (Program.median_call_seconds: JitProgram::run, the call moec run and moe-bench
make), and (b) from Python through HfLayer.__call__ on a NumPy array and on a torch tensor
(argument conversion, the signature check, the results wrapped as arrays or tensors). The
overhead is (b) - (a), medians of many calls, alternated in rounds.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/call_overhead.py [--hidden 1024] ...
"""

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np
import torch

import moec


def python_median(f, iterations):
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # A layer whose one-token call is short, so that the fixed cost shows above the noise.
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--mlp", type=int, default=256)
    parser.add_argument("--experts", type=int, default=16)
    parser.add_argument("--topk", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    config = {"model_type": "qwen3_moe", "hidden_size": args.hidden,
              "moe_intermediate_size": args.mlp, "intermediate_size": 4 * args.mlp,
              "num_experts": args.experts, "num_experts_per_tok": args.topk,
              "norm_topk_prob": True, "num_hidden_layers": 1, "decoder_sparse_step": 1}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        # Packing per call: (a) times the entry itself, so (b) must call the same function.
        layer = moec.from_hf(path, dtype="f32", prepare_weights=False)
    print(f"# {moec.host_target()}; {layer}")
    print(f"{'T':>5s} {'C++ call':>12s} {'Python (NumPy)':>15s} {'overhead':>10s} "
          f"{'Python (torch)':>15s} {'overhead':>10s} {'of the call':>11s}")
    program = layer.program
    for tokens, iterations in ((1, 3000), (4096, 9)):
        x = np.random.default_rng(0).standard_normal((tokens, args.hidden)).astype(np.float32)
        xt = torch.from_numpy(x)
        args_all = [x] + list(layer.weights.values())
        cpp, py_np, py_t = [], [], []
        for _ in range(args.rounds):
            cpp.append(program.median_call_seconds(*args_all, iterations=iterations))
            py_np.append(python_median(lambda: layer(x), iterations))
            py_t.append(python_median(lambda: layer(xt), iterations))
        c, n, t = (statistics.median(v) for v in (cpp, py_np, py_t))
        worst = max(n - c, t - c)
        print(f"{tokens:5d} {c * 1e6:10.1f}us {n * 1e6:13.1f}us {(n - c) * 1e6:8.1f}us "
              f"{t * 1e6:13.1f}us {(t - c) * 1e6:8.1f}us {100 * worst / c:10.2f}%", flush=True)


if __name__ == "__main__":
    main()
