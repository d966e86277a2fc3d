#!/usr/bin/env python3
"""Draws a moe-bench sweep (moe-bench --sweep ... --json FILE) as curves.

  plot_sweep.py SWEEP.json OUT.svg   (or .png, .pdf: matplotlib picks by extension)

One panel per swept axis with more than one value: tokens/s against that axis
(top-k, width, null fraction, batch size, dtype, parallel mode, ...), one line
per combination of the other swept axes, so "EP vs DP across batch sizes" is
the tokens panel of a sweep over tokens and parallel. A last panel gives the
share of the machine's peak against the first swept axis. Only the full-queue
rows of the first distribution are drawn (a sweep's other rows stay in its
JSON and CSV). moe-bench --plot runs this script (installed beside it as
moe-plot-sweep.py).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {
    "topk": "throughput vs top-k",
    "mlp_dim": "throughput vs expert width (mlp_dim)",
    "null": "throughput vs null-routed fraction",
    "tokens": "throughput vs batch (tokens)",
    "dtype": "throughput vs dtype",
    "parallel": "throughput vs parallel mode",
    "quant": "throughput vs quantization",
    "experts": "throughput vs experts",
    "hidden": "throughput vs hidden size",
}


def number(v):
    try:
        return float(v)
    except ValueError:
        return None


def main(path, out):
    data = json.load(open(path))
    order = data["sweep"]["order"]
    axes = data["sweep"]["axes"]
    rows = [r for r in data["results"] if r.get("mode", "full") == "full"]
    if not rows:
        sys.exit("plot_sweep.py: %s has no results to draw" % path)
    first_dist = rows[0].get("distribution")
    rows = [r for r in rows if r.get("distribution") == first_dist]
    varying = [a for a in order if len(axes[a]) > 1] or order[:1]

    panels = varying + ["peak"]
    cols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + cols - 1) // cols
    fig, grid = plt.subplots(nrows, cols, figsize=(6.4 * cols, 4.2 * nrows), squeeze=False)
    for i, axis in enumerate(panels):
        ax = grid[i // cols][i % cols]
        x_axis = varying[0] if axis == "peak" else axis
        metric = "peak_pct" if axis == "peak" else "tokens_per_s"
        others = [a for a in varying if a != x_axis]
        values = axes[x_axis]
        numeric = all(number(v) is not None for v in values)
        lines = {}
        for r in rows:
            key = tuple((a, r["sweep"][a]) for a in others)
            lines.setdefault(key, {})[r["sweep"][x_axis]] = r.get(metric, 0)
        for key, points in sorted(lines.items()):
            xs = [v for v in values if v in points]
            ys = [points[v] for v in xs]
            pos = [number(v) for v in xs] if numeric else [values.index(v) for v in xs]
            label = ", ".join("%s=%s" % kv for kv in key) or None
            ax.plot(pos, ys, marker="o", label=label)
        if not numeric:
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels(values)
        ax.set_xlabel(x_axis)
        if axis == "peak":
            ax.set_ylabel("%% of peak (%s, %.0f GFLOP/s)" % (data.get("peak_kind", ""),
                                                            data.get("peak_gflops", 0)))
            ax.set_title("share of the machine's peak vs %s" % x_axis)
        else:
            ax.set_ylabel("tokens/s")
            ax.set_title(TITLES.get(axis, "throughput vs " + axis))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if len(lines) > 1:
            ax.legend(fontsize=8)
    for j in range(len(panels), nrows * cols):
        grid[j // cols][j % cols].axis("off")
    first = rows[0]
    fig.suptitle("moe-bench sweep: %s pass, T=%s H=%s M=%s E=%s (%s)" % (
        first.get("pass"), first.get("tokens"), first.get("hidden"), first.get("mlp_dim"),
        first.get("experts"), first_dist), fontsize=11)
    fig.tight_layout()
    fig.savefig(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
