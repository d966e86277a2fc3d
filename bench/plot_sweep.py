#!/usr/bin/env python3
"""Draws a moe-bench sweep (moe-bench --sweep ... --json FILE) as curves.

  plot_sweep.py SWEEP.json OUT.svg [FORMAT]   (or .png, .pdf: matplotlib picks by
                                              extension unless FORMAT names it)

One panel per swept axis with more than one value: tokens/s against that axis
(top-k, width, null fraction, batch size, dtype, parallel mode, ...), one line
per combination of the other swept axes, so "EP vs DP across batch sizes" is
the tokens panel of a sweep over tokens and parallel. A sweep over null with
0 among its values also gets the speedup over null=0. A last panel gives the
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
    "experts": "throughput vs experts",
    "hidden": "throughput vs hidden size",
}


def number(v):
    try:
        return float(v)
    except ValueError:
        return None


def main(path, out, fmt=None):
    data = json.load(open(path))
    order = data["sweep"]["order"]
    axes = data["sweep"]["axes"]
    rows = [r for r in data["results"] if r.get("mode", "full") == "full"]
    if not rows:
        sys.exit("plot_sweep.py: %s has no results to draw" % path)
    first_dist = rows[0].get("distribution")
    rows = [r for r in rows if r.get("distribution") == first_dist]
    varying = [a for a in order if len(axes[a]) > 1] or order[:1]

    panels = list(varying)
    # The seeds' null-routing metric: tokens/s over the same line's at f = 0.
    base_null = next((v for v in axes.get("null", []) if number(v) == 0), None)
    if "null" in varying and base_null is not None:
        panels.append("null_speedup")
    panels.append("peak")
    cols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + cols - 1) // cols
    fig, grid = plt.subplots(nrows, cols, figsize=(6.4 * cols, 4.2 * nrows), squeeze=False)
    for i, axis in enumerate(panels):
        ax = grid[i // cols][i % cols]
        x_axis = {"peak": varying[0], "null_speedup": "null"}.get(axis, axis)
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
            if axis == "null_speedup":
                base = points.get(base_null)
                if not base:
                    continue
                ys = [y / base for y in ys]
            pos = [number(v) for v in xs] if numeric else [values.index(v) for v in xs]
            label = ", ".join("%s=%s" % kv for kv in key) or None
            ax.plot(pos, ys, marker="o", label=label)
        if not numeric:
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels(values)
        elif min(number(v) for v in values) > 0 and \
                max(number(v) for v in values) >= 8 * min(number(v) for v in values):
            ax.set_xscale("log", base=2)  # batch sizes, widths: doublings
            ax.set_xticks([number(v) for v in values])
            ax.set_xticklabels(values)
        ax.set_xlabel(x_axis)
        if axis == "null_speedup":
            ax.set_ylabel("tokens/s over null=0")
            ax.set_title("speedup from null routing")
        elif axis == "peak":
            kinds = sorted({r.get("peak_kind", "") for r in rows})
            if len(kinds) > 1:  # f32 and bf16 points: each against its unit's peak
                ax.set_ylabel("% of its unit's peak (" + ", ".join(kinds) + ")")
            else:
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
    fixed = [("T", "tokens", "tokens"), ("H", "hidden", "hidden"), ("M", "mlp_dim", "mlp_dim"),
             ("E", "experts", "experts"), ("top-k", "topk", "topk"), ("", "dtype", "dtype")]
    shape = " ".join("%s%s%s" % (short, "=" if short else "", first.get(field))
                     for short, field, axis in fixed if axis not in varying)
    fig.suptitle("moe-bench sweep: %s pass, %s (%s)" % (first.get("pass"), shape, first_dist),
                 fontsize=11)
    fig.tight_layout()
    # moe-bench hands over an unnamed file it publishes when whole
    # (/proc/PID/fd/N, no extension): the format comes with it.
    fig.savefig(out, format=fmt)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
