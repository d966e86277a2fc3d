#!/usr/bin/env python3
"""The side-by-side table of a bench/compare.sh log: moe-bench's RESULT lines
and the peers' PEER lines, one row per (pass, dtype, top-k), with the ratios of
moe-bench's tokens/s to each peer's. Rows of different passes (forward,
forward_backward) never mix; a line without pass= (older logs) is forward.
A quoted peak must bound every rate measured against it: a row where moec runs
faster than the best peak of its unit measured in the run gets a warning (the
peak loop ran on a busy moment) and the exit code is 3; a peer above moec's
unit's peak gets a warning only (it may run on another unit).
A log of several rounds (compare.sh's ROUNDS: "ROUND r of n" lines) gives each
row the median of its rounds' rates, and each ratio as the median of the
rounds' ratios, each round's moec run against that round's peer run, with
their range (and how many rounds have one, when a peer run failed in some): on
a shared host the speed drifts over minutes, so a ratio of one round moves
with it. A rate above its unit's peak in any round gets the warning.
Usage: table.py LOG [--markdown]."""
import re
import statistics
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def parse_log(lines):
    """The peaks (best of each unit), moe-bench's full-mode RESULT lines and the
    peers' PEER lines of a compare.sh log: ours[(pass, dtype, topk)] and
    peers[(pass, dtype, topk, peer)] map each round to its line's fields."""
    # "peak: 266.7 GFLOP/s FP32 FMA, 2 threads (...)": the best of each kind,
    # and the kind in force for the RESULT lines that follow.
    peaks, kind = {}, None
    # Per key, the run of each round: {round: fields}.
    ours, peers = {}, {}
    rnd = 1
    for line in lines:
        m = re.match(r"peak: ([0-9.]+) G(?:FLOP|OP)/s ([^,]+),", line)
        r = re.match(r"ROUND (\d+) of \d+$", line)
        if r:
            rnd = int(r.group(1))
        elif m:
            kind = m.group(2)
            peaks[kind] = max(peaks.get(kind, 0.0), float(m.group(1)))
        elif line.startswith("RESULT ") and "mode=full" in line:
            f = fields(line)
            f["peak_kind"] = kind or "-"
            # forward_backward rows carry their remat policy: one row each.
            ps = f.get("pass", "forward")
            if "remat" in f:
                ps += f" remat={f['remat']}"
            ours.setdefault((ps, f["dtype"], int(f["topk"])), {})[rnd] = f
        elif line.startswith("PEER "):
            f = fields(line)
            peers.setdefault((f.get("pass", "forward"), f["dtype"], int(f["topk"]), f["peer"]), {})[rnd] = f
    return peaks, ours, peers


def round_ratios(mine, theirs):
    """Each round's moec tokens/s over the same round's peer run. A round
    whose peer run failed (or reported no rate) has no ratio."""
    both = [r for r in sorted(set(mine) & set(theirs)) if float(theirs[r]["tokens_per_s"]) > 0]
    return [float(mine[r]["tokens_per_s"]) / float(theirs[r]["tokens_per_s"]) for r in both]


def print_table(header, rows, markdown):
    """Rows under their header, as a markdown table or in aligned columns."""
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    for r in [header] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: table.py LOG [--markdown]")
    try:
        lines = open(sys.argv[1]).read().splitlines()
    except OSError as e:
        sys.exit(f"table.py: cannot read {sys.argv[1]}: {e.strerror}")
    peaks, ours, peers = parse_log(lines)
    rounds = max([max(v) for v in ours.values()] + [1])
    rows = []
    header = ["pass", "dtype", "top-k", "moec TF/s", "% peak", "of", "torch TF/s",
              "oneDNN TF/s", "moec/torch", "moec/oneDNN"]
    def median_of(runs, name):
        return statistics.median(float(f[name]) for f in runs.values())

    def ratio(mine, theirs):
        # Each round's moec run against the same round's peer run.
        # A round whose peer run failed (or reported no rate) has no ratio:
        # the count says how many of moec's rounds have one.
        each = round_ratios(mine, theirs)
        if not each:
            return "-"
        text = f"{statistics.median(each):.2f}x"
        if len(each) > 1:
            text += f" ({min(each):.2f}-{max(each):.2f}"
            text += f", {len(each)} of {len(mine)})" if len(each) < len(mine) else ")"
        elif len(mine) > 1:
            text += f" (1 of {len(mine)})"
        return text

    for (ps, dt, k), runs in sorted(ours.items()):
        peer_pass = ps.split(" ")[0]  # the peers have no remat policy
        t = peers.get((peer_pass, dt, k, "torch_eager"))
        o = peers.get((peer_pass, dt, k, "onednn"))
        pcts = [float(f["peak_pct"]) for f in runs.values() if "peak_pct" in f]
        pct = f"{statistics.median(pcts):.1f}" if pcts else "-"
        kinds = sorted({f["peak_kind"] for f in runs.values()})
        rows.append([ps, dt, str(k), f"{median_of(runs, 'tflops'):.3f}", pct, "/".join(kinds),
                     f"{median_of(t, 'tflops'):.3f}" if t else "-",
                     f"{median_of(o, 'tflops'):.3f}" if o else "-", ratio(runs, t or {}),
                     ratio(runs, o or {})])
    print_table(header, rows, "--markdown" in sys.argv)
    if rounds > 1:
        print(f"medians of {rounds} rounds; each ratio the median of the rounds' ratios (their range)")
    for name, value in sorted(peaks.items()):
        print(f"{name} peak measured in the run: {value:.1f} GFLOP/s")
    # Honest peaks: nothing may run faster than the unit's peak, in any round.
    above, moec_above = [], False
    for (ps, dt, k), runs in sorted(ours.items()):
        f = runs[max(runs, key=lambda r: float(runs[r]["tflops"]))]
        peak = peaks.get(f["peak_kind"])
        if not peak:
            continue
        peer_pass = ps.split(" ")[0]
        rates = [("moec", float(f["tflops"]))]
        for name in ("torch_eager", "onednn"):
            p = peers.get((peer_pass, dt, k, name))
            if p:
                rates.append((name, max(float(g["tflops"]) for g in p.values())))
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
