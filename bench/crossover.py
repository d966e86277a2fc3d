#!/usr/bin/env python3
"""EP vs DP across batch sizes, by the cost model (moe-bench --predict-only):
for each machine description and global token count, the predicted time of DP
and of the best EP plan, and the plan the model picks. Nothing is compiled or
run; the machine is given, not measured.
Usage: crossover.py [--markdown] [--pass forward|forward_backward] [MOE_BENCH]."""
import re
import subprocess
import sys

# name, devices, per-device GFLOP/s, rows per expert at half rate (gmm, tgmm), training's
# share of the rate, link GB/s, us per step. This CPU's figures are moe-bench's calibration
# on it (docs/sharding.md, "Calibration"), and the CPU nodes take its half-rate rows and
# share; the rest are round numbers for the kind of machine, not measurements.
MACHINES = [
    ("this CPU, 2 in-process shards", 2, 190, 16, 39, 0.89, 17, 5),
    ("8 GPUs, NVLink-class links", 8, 200000, 256, 256, 1.0, 300, 5),
    ("64 GPUs, 200 Gb/s network", 64, 200000, 256, 256, 1.0, 25, 10),
    ("64 CPU nodes (32 cores), 100 GbE", 64, 3200, 16, 39, 0.89, 12.5, 20),
]
TOKENS = [4096, 16384, 65536, 262144, 1048576]


def predict(bench, pass_, devices, gflops, half, tgmm_half, share, link, latency, tokens):
    out = subprocess.run(
        [bench, "--predict-only", "--devices", str(devices), "--tokens", str(tokens),
         "--experts", "64", "--hidden", "2048", "--mlp-dim", "1408", "--topk", "8",
         "--bench-pass", pass_, "--threads", str(devices), "--peak-gflops", "1",
         "--core-gflops", str(gflops), "--half-rate-rows", str(half),
         "--tgmm-half-rate-rows", str(tgmm_half), "--training-share", str(share),
         "--link-gbps", str(link),
         "--link-latency-us", str(latency)],
        capture_output=True, text=True, check=True).stdout
    plans = {}
    for m in re.finditer(r"model: (\S+) on (\S+)\s+([0-9.]+) s", out):
        plans[(m.group(1), m.group(2))] = float(m.group(3))
    return plans


def main():
    args = [a for a in sys.argv[1:] if a != "--markdown"]
    pass_ = "forward_backward"
    if "--pass" in args:
        i = args.index("--pass")
        pass_ = args[i + 1]
        del args[i:i + 2]
    bench = args[0] if args else "build/bin/moe-bench"
    md = "--markdown" in sys.argv
    head = ["machine", "tokens", "DP s", "best EP s", "best EP plan", "DP / best EP", "picked"]
    print(("| " + " | ".join(head) + " |") if md else "  ".join(head))
    if md:
        print("|" + "---|" * len(head))
    for name, devices, gflops, half, tgmm_half, share, link, latency in MACHINES:
        for tokens in TOKENS:
            plans = predict(bench, pass_, devices, gflops, half, tgmm_half, share, link, latency,
                            tokens)
            dp = [t for (mode, _), t in plans.items() if mode == "dp"]
            ep = {k: t for k, t in plans.items() if k[0].startswith("ep-")}
            best = min(ep, key=ep.get)
            picked = min(plans, key=plans.get)
            cells = [name, str(tokens), "%.4g" % dp[0] if dp else "-", "%.4g" % ep[best],
                     "%s %s" % best, "%.2f" % (dp[0] / ep[best]) if dp else "-",
                     "%s %s" % picked]
            print(("| " + " | ".join(cells) + " |") if md else "  ".join(cells))


if __name__ == "__main__":
    main()
