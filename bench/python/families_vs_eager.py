#!/usr/bin/python3
"""Each family's layer compiled by moec, called from Python, next to the family's eager PyTorch
layer (HF's dispatch: each expert on the tokens routed to it, index_add back) on the same
weights, input and so the same routing. Also moe-bench --hf-config on the same config (the C++
harness; its routing is drawn by its distribution, not by these weights).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/families_vs_eager.py \
        [--tokens 512] [--hidden 1024] [--mlp 512] [--dtype f32|bf16] [--moe-bench build/bin/moe-bench]

Prints a table: median ms of moec (Python call), eager PyTorch, their ratio, and moe-bench's
median for the same layer. Run on a quiet machine.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "hf"))
import families as fam  # noqa: E402
import moec  # noqa: E402

# Routed experts and top-k per family at bench scale (their released models' ratios, fewer
# experts so that a 2-core machine runs the sweep in minutes).
SHAPES = {
    "mixtral": (8, 2), "qwen2_moe": (32, 4), "qwen3_moe": (64, 8), "olmoe": (64, 8),
    "deepseek_v2": (32, 6), "deepseek_v3": (64, 8), "gpt_oss": (32, 4), "llama4_text": (16, 1),
}


def scaled_config(family, hidden, mlp):
    """The family's test config at bench sizes."""
    c = fam.config(family)
    experts, k = SHAPES[family]
    c["hidden_size"] = hidden
    c["num_experts_per_tok"] = k
    if family in ("qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"):
        c["moe_intermediate_size"] = mlp
    else:
        c["intermediate_size"] = mlp
        if family == "llama4_text":
            c["intermediate_size_mlp"] = 2 * mlp
    for key in ("num_local_experts", "num_experts", "n_routed_experts"):
        if key in c:
            c[key] = experts
    if family == "qwen2_moe":
        c["shared_expert_intermediate_size"] = 4 * mlp
    if family in ("deepseek_v2", "deepseek_v3"):
        c["n_group"], c["topk_group"] = 8, 4
    return c


def median_ms(f, warmup=2, iterations=7):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def moe_bench_ms(binary, config, tokens, dtype):
    r = subprocess.run([binary, "--hf-config", config, "--tokens", str(tokens), "--dtype", dtype,
                        "--distribution", "random", "--warmup", "2", "--iters", "7"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"# moe-bench failed: {r.stderr.strip()}", file=sys.stderr)
        return None
    for line in r.stdout.splitlines():  # "time: median 12.34 ms min ..."
        if line.startswith("time: median "):
            return float(line.split()[2])
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--mlp", type=int, default=512)
    parser.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    parser.add_argument("--families", default=",".join(fam.FAMILIES))
    parser.add_argument("--moe-bench", default=os.path.join(ROOT, "build", "bin", "moe-bench"))
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}",
                        help="torch thread counts to time eager at; the fastest is the peer")
    args = parser.parse_args()
    thread_counts = sorted({int(t) for t in args.threads.split(",")})
    torch_dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    print(f"# {moec.host_target()}; torch {torch.__version__}, eager at its best of "
          f"{thread_counts} threads; "
          f"T={args.tokens} H={args.hidden} M={args.mlp} {args.dtype}")
    print(f"{'family':12s} {'E':>3s} {'K':>2s} {'moec ms':>9s} {'eager ms':>9s} {'eager/moec':>10s}"
          f" {'threads':>7s} {'moe-bench ms':>12s} {'max rel err':>11s}")
    for family in args.families.split(","):
        with tempfile.TemporaryDirectory() as d:
            cfg, layer, tensors, config, weights = fam.write_model(
                d, family, torch_dtype, seed=1, cfg=scaled_config(family, args.hidden, args.mlp))
            block = fam.block_tensors(family, tensors, layer=layer, cfg=cfg)
            compiled = moec.from_hf(config, layer=layer, weights=weights, dtype=args.dtype)
            bench_ms = moe_bench_ms(args.moe_bench, config, args.tokens, args.dtype) \
                if os.path.exists(args.moe_bench) else None
        x = torch.randn(args.tokens, args.hidden, generator=torch.Generator().manual_seed(2))
        x = x.to(torch_dtype)
        # Eager computes in the layer's dtype, as the model runs it.
        with torch.no_grad():
            def eager():
                return fam.reference_layer(family, cfg, block, x, layer=layer,
                                           compute_dtype=torch_dtype, sparse=True)
            # The error against the layer in f32 (bf16 eager rounds its routing, and may choose
            # other experts than either).
            want = fam.reference_layer(family, cfg, block, x, layer=layer, sparse=True)
            got = compiled(x).float()
            err = ((got - want).abs().max() / want.abs().max()).item()
            moec_ms = median_ms(lambda: compiled(x))
            timed = []
            default_threads = torch.get_num_threads()
            for n in thread_counts:
                torch.set_num_threads(n)
                timed.append((median_ms(eager), n))
            torch.set_num_threads(default_threads)
            eager_ms, eager_threads = min(timed)
        E, K = SHAPES[family]
        bench = f"{bench_ms:12.2f}" if bench_ms is not None else f"{'-':>12s}"
        print(f"{family:12s} {E:3d} {K:2d} {moec_ms:9.2f} {eager_ms:9.2f} {eager_ms / moec_ms:9.2f}x"
              f" {eager_threads:7d} {bench} {err:11.1e}", flush=True)


if __name__ == "__main__":
    main()
