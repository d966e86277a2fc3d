#!/usr/bin/env python3
"""The side-by-side table of a bench/compare.sh log: moe-bench's RESULT lines
and the peers' PEER lines, one row per (pass, dtype, top-k), with the ratios of
moe-bench's tokens/s to each peer's. Rows of different passes (forward,
forward_backward) never mix; a line without pass= (older logs) is forward.
A quoted peak must bound every rate measured against it: a row where moec runs
faster than the best peak of its unit measured in the run gets a warning (the
peak loop ran on a busy moment) and the exit code is 3; a peer above moec's
unit's peak gets a warning only (it may run on another unit).
Usage: table.py LOG [--markdown]."""
import re
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: table.py LOG [--markdown]")
    try:
        lines = open(sys.argv[1]).read().splitlines()
    except OSError as e:
        sys.exit(f"table.py: cannot read {sys.argv[1]}: {e.strerror}")
    # "peak: 266.7 GFLOP/s FP32 FMA, 2 threads (...)": the best of each kind,
    # and the kind in force for the RESULT lines that follow.
    peaks, kind = {}, None
    ours, peers = {}, {}
    for line in lines:
        m = re.match(r"peak: ([0-9.]+) G(?:FLOP|OP)/s ([^,]+),", line)
        if m:
            kind = m.group(2)
            peaks[kind] = max(peaks.get(kind, 0.0), float(m.group(1)))
        elif line.startswith("RESULT ") and "mode=full" in line:
            f = fields(line)
            f["peak_kind"] = kind or "-"
            # forward_backward rows carry their remat policy: one row each.
            ps = f.get("pass", "forward")
            if "remat" in f:
                ps += f" remat={f['remat']}"
            ours[(ps, f["dtype"], int(f["topk"]))] = f
        elif line.startswith("PEER "):
            f = fields(line)
            peers[(f.get("pass", "forward"), f["dtype"], int(f["topk"]), f["peer"])] = f
    rows = []
    header = ["pass", "dtype", "top-k", "moec TF/s", "% peak", "of", "torch TF/s",
              "oneDNN TF/s", "moec/torch", "moec/oneDNN"]
    for (ps, dt, k), f in sorted(ours.items()):
        peer_pass = ps.split(" ")[0]  # the peers have no remat policy
        t = peers.get((peer_pass, dt, k, "torch_eager"))
        o = peers.get((peer_pass, dt, k, "onednn"))
        tps = float(f["tokens_per_s"])
        ratio = lambda p: f"{tps / float(p['tokens_per_s']):.2f}x" if p else "-"
        rows.append([ps, dt, str(k), f"{float(f['tflops']):.3f}", f.get("peak_pct", "-"), f["peak_kind"],
                     f"{float(t['tflops']):.3f}" if t else "-",
                     f"{float(o['tflops']):.3f}" if o else "-", ratio(t), ratio(o)])
    if "--markdown" in sys.argv:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    for name, value in sorted(peaks.items()):
        print(f"{name} peak measured in the run: {value:.1f} GFLOP/s")
    # Honest peaks: nothing may run faster than the unit's peak.
    above, moec_above = [], False
    for (ps, dt, k), f in sorted(ours.items()):
        peak = peaks.get(f["peak_kind"])
        if not peak:
            continue
        peer_pass = ps.split(" ")[0]
        rates = [("moec", float(f["tflops"]))]
        for name in ("torch_eager", "onednn"):
            p = peers.get((peer_pass, dt, k, name))
            if p:
                rates.append((name, float(p["tflops"])))
        for name, tflops in rates:
            if tflops * 1e3 > peak:
                moec_above |= name == "moec"
                above.append(f"warning: {name} {ps} {dt} top-{k} ran at {tflops * 1e3:.1f} "
                             f"GFLOP/s, above the {f['peak_kind']} peak measured in the run "
                             f"({peak:.1f}): " + ("that peak is no upper bound (measured on a busy "
                             "moment?); rerun on a quiet host" if name == "moec" else
                             "a peer may run on another unit, or the peak was measured on a "
                             "busy moment"))
    for line in above:
        print(line)
    return 3 if moec_above else 0


if __name__ == "__main__":
    sys.exit(main())
