#!/usr/bin/env python3
"""The table of a bench/parallel.sh log: for each batch size and pass, every
mode's measured median (from tokens/s), the cost model's prediction and their
ratio, tokens/s against the single device measured in the same run, and the
busiest shard's bytes counted by the runtime and modelled.
Usage: parallel_table.py LOG [--markdown]."""
import re
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: parallel_table.py LOG [--markdown]")
    try:
        lines = open(sys.argv[1]).read().splitlines()
    except OSError as e:
        sys.exit(f"parallel_table.py: cannot read {sys.argv[1]}: {e.strerror}")
    rows, tokens, predicted = [], None, None
    for line in lines:
        m = re.match(r"== tokens (\d+) (\S+)", line)
        if m:
            tokens, predicted = int(m.group(1)), None
        m = re.match(r"model: predicted ([0-9.]+) s", line)
        if m:
            predicted = float(m.group(1))
        if line.startswith("RESULT") and tokens:
            f = fields(line)
            seconds = tokens / float(f["tokens_per_s"])
            rows.append((tokens, f["pass"], f.get("parallel", "none"), f.get("mesh", "-"),
                         seconds, predicted,
                         float(f["tokens_per_s"]), f.get("comm_mib_counted", "0"),
                         f.get("comm_mib_modelled", "0")))
    if not rows:
        sys.exit("parallel_table.py: no RESULT lines after '== tokens' headers")
    single = {(r[0], r[1]): r[6] for r in rows if r[2] == "none"}
    md = "--markdown" in sys.argv
    head = ["tokens", "pass", "mode", "mesh", "measured s", "predicted s", "meas/pred",
            "tokens/s vs 1 device", "comm MiB counted", "comm MiB modelled"]
    print(("| " + " | ".join(head) + " |") if md else "  ".join(head))
    if md:
        print("|" + "---|" * len(head))
    for t, p, mode, mesh, s, pred, tps, counted, modelled in rows:
        base = single.get((t, p))
        cells = [str(t), p, mode, mesh, "%.4g" % s, "%.4g" % pred if pred else "-",
                 "%.2f" % (s / pred) if pred else "-", "%.2fx" % (tps / base) if base else "-",
                 counted, modelled]
        print(("| " + " | ".join(cells) + " |") if md else "  ".join(cells))


if __name__ == "__main__":
    main()
